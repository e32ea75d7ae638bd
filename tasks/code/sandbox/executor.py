"""Run one candidate in a fresh sandbox process and judge what it reports.

Per run: a new process in its own session (process group), a fresh temporary working directory, a
minimal environment, stdin carrying the job, and an evidence file opened by the parent and
inherited as a descriptor. By default the process is forked from a warm fork server
(`forkserver.py`, `_zygote.py`), which never sees the job and holds nothing of this process; with
`launcher="exec"`, or when the server is unavailable, it is a fresh `python -I -S -B` interpreter.
Either way the child gets the same descriptors, environment and isolation. The child unshares a
network namespace when it can, sets rlimits, confines its filesystem access with Landlock (reads:
the standard library; writes: its work dir, see `confinement.py`), and installs the audit hook
before any candidate code runs (`_child.py`). The parent waits with a wall-clock timeout (no
signals in the parent), then kills the whole process group, so anything the candidate left behind
dies with it (`launch.py`). Exit status is never evidence.
"""

from __future__ import annotations

import fcntl
import marshal
import os
import secrets
import shutil
import signal
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from tasks.code.sandbox.confinement import readable_paths, sandbox_root
from tasks.code.sandbox.evidence import judge_case, parse_evidence
from tasks.code.sandbox.instrument import InstrumentedTest, instrument
from tasks.code.sandbox.forkserver import ForkServerError
from tasks.code.sandbox.launch import environment, run_exec, run_forked
from tasks.code.sandbox.result import CaseResult, ExecutionResult, Outcome

_FORKED_EVIDENCE_FD = 3  # where `_zygote._become_child` puts the evidence descriptor

Launcher = Literal["fork_server", "exec"]
_STDERR_TAIL = 2000


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. Defaults fit HumanEval: 10 s wall, 10 s CPU, 1 GiB address space, 16 MiB
    files, 64 descriptors. `unshare_network` asks for an empty network namespace (needs root or
    CAP_SYS_ADMIN; the audit hook refuses sockets either way). `launcher` is "fork_server" (fast,
    Linux with pidfds; falls back to "exec" where unavailable) or "exec" (a fresh interpreter per
    run); the result's `details["launcher"]` says which ran. `confine_filesystem` limits what the
    candidate can read to the standard library and shared libraries, and writes to its work dir
    (Landlock, Linux 5.13+; `isolation` lists "landlock" when it applied)."""

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_size_mb: int = 16
    open_files: int = 64
    unshare_network: bool = True
    launcher: Launcher = "fork_server"
    confine_filesystem: bool = True

    def __post_init__(self) -> None:
        if self.launcher not in ("fork_server", "exec"):
            raise ValueError(f"SandboxLimits.launcher: {self.launcher!r} is not 'fork_server' or 'exec'")


def run_tests(program: str, test_source: str, entry_point: str, limits: SandboxLimits = SandboxLimits()) -> ExecutionResult:
    """Execute `program` (the candidate module) against a HumanEval-style `check(candidate)` test.

    Raises ValueError when the *test* has no instrumentable `check` (a data problem, not the
    candidate's); everything the candidate does is reported in the result.
    """
    return _run(program, instrument(test_source), entry_point, limits)


def _run(program: str, test: InstrumentedTest, entry_point: str, limits: SandboxLimits) -> ExecutionResult:
    if limits.launcher == "fork_server":
        try:
            return _attempt("fork_server", program, test, entry_point, limits)
        except ForkServerError:
            pass  # unavailable or unresponsive: run it the slow way, with fresh files and work dir
    return _attempt("exec", program, test, entry_point, limits)


def _attempt(launcher: Launcher, program: str, test: InstrumentedTest, entry_point: str, limits: SandboxLimits) -> ExecutionResult:
    workdir = tempfile.mkdtemp(prefix="sandbox-work-", dir=sandbox_root())
    nonce = secrets.token_hex(16)
    job = {
        "nonce": nonce,
        "evidence_fd": _FORKED_EVIDENCE_FD,
        "program": program,
        "tests": test.source,
        "entry_point": entry_point,
        "workdir": workdir,
        "environment": environment(workdir),
        "unshare_network": limits.unshare_network,
        # fork server: reads were confined once in the server, the child narrows writes
        "confinement": "none" if not limits.confine_filesystem else "full" if launcher == "exec" else "writes",
        "readable_paths": list(readable_paths()) if limits.confine_filesystem and launcher == "exec" else None,
        "limits": {k: getattr(limits, k) for k in ("cpu_s", "memory_mb", "file_size_mb", "open_files")},
    }
    started = time.monotonic()
    try:
        # Unnamed files, nothing to create or remove in a directory. The job travels on stdin in a
        # file, not a pipe, so writing it never blocks on a child that does not read and the
        # wall-clock limit covers everything. The evidence file is append-only.
        with tempfile.TemporaryFile() as job_file, tempfile.TemporaryFile() as stderr, tempfile.TemporaryFile() as evidence:
            evidence_fd = evidence.fileno()
            fcntl.fcntl(evidence_fd, fcntl.F_SETFL, fcntl.fcntl(evidence_fd, fcntl.F_GETFL) | os.O_APPEND)
            if launcher == "exec":
                job["evidence_fd"] = evidence_fd  # Popen's pass_fds keeps the parent's number
            job_file.write(marshal.dumps(job))
            job_file.flush()
            job_file.seek(0)
            if launcher == "fork_server":
                policy = (sandbox_root(), readable_paths()) if limits.confine_filesystem else None
                returncode, timed_out = run_forked(job_file, stderr, evidence_fd, limits.wall_s, policy)
            else:
                returncode, timed_out = run_exec(job_file, stderr, evidence_fd, workdir, limits.wall_s)
            stderr.seek(0, os.SEEK_END)
            stderr.seek(max(0, stderr.tell() - _STDERR_TAIL))
            stderr_tail = stderr.read().decode("utf-8", "replace")
            evidence.seek(0)
            raw = evidence.read()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    duration = time.monotonic() - started
    return _judge(raw, nonce, test, returncode, timed_out, duration, stderr_tail, launcher)


def _judge(
    raw: bytes,
    nonce: str,
    test: InstrumentedTest,
    returncode: int | None,
    timed_out: bool,
    duration: float,
    stderr_tail: str,
    launcher: str,
) -> ExecutionResult:
    evidence = parse_evidence(raw, nonce)
    isolation: tuple[str, ...] = ()
    events: list[dict[str, Any]] = []
    cases: list[CaseResult] = []
    aborts: list[str] = []
    done: int | None = None
    malformed = evidence.forged_lines
    for record in evidence.records:
        try:
            kind = record[0]
            if kind == "isolation" and not isolation:
                isolation = tuple(str(name) for name in record[1])
            elif kind == "event":
                events.append({"kind": str(record[1]), "detail": str(record[2]), "test_index": record[3]})
            elif kind == "case" and done is None:
                if record[1] != len(cases):
                    malformed += 1
                cases.append(judge_case(record, test.sites))
            elif kind == "abort":
                aborts.append(f"{record[1]}: {record[2]}: {record[3]}")
            elif kind == "done" and done is None:
                done = int(record[1])
            else:
                malformed += 1
        except (IndexError, TypeError, ValueError, KeyError):
            malformed += 1

    def result(outcome: Outcome, reason: str) -> ExecutionResult:
        return ExecutionResult(
            outcome, reason, tuple(cases), tuple(events), round(duration, 4), isolation, returncode, stderr_tail,
            {"aborts": aborts, "malformed_records": malformed, "launcher": launcher},
        )

    errors = [c.error or "" for c in cases] + aborts
    if timed_out or returncode == -signal.SIGXCPU:
        return result("timeout", "wall-clock limit" if timed_out else "CPU-time limit")
    if any("MemoryError" in error for error in errors) or returncode == -signal.SIGSEGV:
        return result("memory_exceeded", "address-space limit")
    if malformed:
        return result("error", f"{malformed} evidence records without the run's nonce or out of order")
    if done is None:
        return result("error", f"no completion record (process exited with status {returncode})")
    if done != len(cases):
        return result("error", f"completion record claims {done} cases, {len(cases)} reported")
    seen = Counter(case.site for case in cases)
    missing = [s.index for s in test.sites if s.straight_line and seen[s.index] != 1]
    if aborts:
        return result("error", aborts[0])
    if missing:
        return result("error", f"asserts {missing} were not each reported exactly once")
    failed = [case for case in cases if not case.passed]
    if any(case.error and not case.values for case in failed):
        first = next(case for case in failed if case.error and not case.values)
        return result("error", f"case {first.index} raised {first.error}")
    if failed:
        return result("wrong_answer", f"case {failed[0].index} (assert #{failed[0].site}) failed {failed[0].error or ''}".strip())
    return result("pass", f"{len(cases)} cases reported and checked")
