"""A sandbox for hostile Python: separate process, rlimits, network namespace, Landlock filesystem
confinement, audit hook, and a parent that only passes a candidate on positive, nonce-stamped
evidence it has checked itself.

Processes are forked from a warm fork server that never sees a job (`forkserver.py`, `_zygote.py`),
or started as fresh interpreters where that is unavailable (`SandboxLimits.launcher`).

Public surface: `run_tests`, `run_many`, `SandboxLimits`, `ExecutionResult`, `CaseResult`.
Audit event kinds are documented in `_hook.py`.
"""

from tasks.code.sandbox.executor import SandboxLimits, run_tests
from tasks.code.sandbox.pool import SandboxJob, run_many
from tasks.code.sandbox.result import CaseResult, ExecutionResult, Outcome

__all__ = ["CaseResult", "ExecutionResult", "Outcome", "SandboxJob", "SandboxLimits", "run_many", "run_tests"]
