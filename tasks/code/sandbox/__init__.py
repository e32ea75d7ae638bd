"""A sandbox for hostile Python where the test is trusted and the candidate is not.

Design (each part is one module):
- The hidden test runs here, in the trusted parent (`runner.py`), in a namespace built from this
  interpreter's builtins, the prompt's pristine helpers and the test itself. It never enters the
  jail; neither do its expected values (the calls it makes do: the jail's test file holds them,
  as a test file holds its calls).
- The candidate's program runs in a jail (`_jail.py`), forked per run by a warm fork server
  (`_zygote.py`, `forkserver.py`): below the init and a "shell" of its own PID namespace, an empty network namespace, a
  private mount namespace with a root of its own (`_root.py`: read-only binds of what it may read,
  four /dev nodes, a private /dev/shm and a size-limited tmpfs work dir, nothing else of the
  machine), an unprivileged uid of its own with
  no capabilities, rlimits, Landlock (reads: the standard library; writes: the work dir; no TCP; no
  signals outside itself), seccomp (no new processes, exec, ptrace, or signals outside the jail),
  the descriptors of an ordinary pipeline (0, 1, 2 pipes, nothing above), and an audit hook that
  records what the shield must see (`_hook.py`).
  `isolation` names each measure only when it really applied (`isolation.py`).
- Between them a narrow channel (`channel.py`, `_wire.py`): two pipes carrying calls of the entry
  point and their answers as plain, type-tagged values, decoded here under caps on record size,
  output and time. The jail holds the request pipe's read end (its stdin) and the reply pipe's
  write end (its stdout, where its records are RS-framed beside the program's own output) only.
- The verdict (`executor.py`) rests on what the parent observed: the test ran to its end, every
  assert held, no call failed, and at least as many asserts ran as a correct solution makes run
  (`profile.py` measures that once per problem with the canonical solution).

- The second checker (`reference.py`): each hidden call's answer against the canonical solution's
  answer for it, exact types and a tight float tolerance.

Public surface: `run_tests`, `run_many`, `measure`, `SandboxLimits`, `ExecutionResult`, `CaseResult`,
`Reference`, `same_answer`.
"""

from tasks.code.sandbox.executor import SandboxLimits, run_tests
from tasks.code.sandbox.pool import SandboxJob, run_many
from tasks.code.sandbox.profile import TestProfile, measure
from tasks.code.sandbox.reference import Reference, same_answer
from tasks.code.sandbox.result import CaseResult, ExecutionResult, Outcome

__all__ = [
    "CaseResult", "ExecutionResult", "Outcome", "Reference", "SandboxJob", "SandboxLimits", "TestProfile", "measure",
    "run_many", "run_tests", "same_answer",
]
