"""Run one candidate in a fresh sandbox process and judge what it reports.

Per run: a new `python -I -S -B` process in its own session (process group), a fresh temporary
working directory, a minimal environment, stdin carrying the job, and an evidence file opened by the
parent and inherited as a descriptor. The child unshares a network namespace when it can, sets
rlimits, and installs the audit hook before any candidate code runs (`_child.py`). The parent waits
with a wall-clock timeout (no signals in the parent), then kills the whole process group, so
anything the candidate left behind dies with it. Exit status is never evidence.
"""

from __future__ import annotations

import marshal
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.code.sandbox.evidence import judge_case, parse_evidence
from tasks.code.sandbox.instrument import InstrumentedTest, instrument
from tasks.code.sandbox.result import CaseResult, ExecutionResult, Outcome

_CHILD = Path(__file__).with_name("_child.py")
_STDERR_TAIL = 2000


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. Defaults fit HumanEval: 10 s wall, 10 s CPU, 1 GiB address space, 16 MiB
    files, 64 descriptors. `unshare_network` asks for an empty network namespace (needs root or
    CAP_SYS_ADMIN; the audit hook refuses sockets either way)."""

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_size_mb: int = 16
    open_files: int = 64
    unshare_network: bool = True


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is already gone


def _environment(workdir: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8"}


def run_tests(program: str, test_source: str, entry_point: str, limits: SandboxLimits = SandboxLimits()) -> ExecutionResult:
    """Execute `program` (the candidate module) against a HumanEval-style `check(candidate)` test.

    Raises ValueError when the *test* has no instrumentable `check` (a data problem, not the
    candidate's); everything the candidate does is reported in the result.
    """
    return _run(program, instrument(test_source), entry_point, limits)


def _run(program: str, test: InstrumentedTest, entry_point: str, limits: SandboxLimits) -> ExecutionResult:
    nonce = secrets.token_hex(16)
    private = tempfile.mkdtemp(prefix="sandbox-parent-")
    workdir = tempfile.mkdtemp(prefix="sandbox-work-")
    started = time.monotonic()
    try:
        evidence_path = os.path.join(private, "evidence")
        evidence_fd = os.open(evidence_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        job = {
            "nonce": nonce,
            "evidence_fd": evidence_fd,
            "program": program,
            "tests": test.source,
            "entry_point": entry_point,
            "workdir": workdir,
            "unshare_network": limits.unshare_network,
            "limits": {k: getattr(limits, k) for k in ("cpu_s", "memory_mb", "file_size_mb", "open_files")},
        }
        with open(os.path.join(private, "stderr"), "w+b") as stderr:
            try:
                process = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-B", str(_CHILD)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    cwd=workdir,
                    env=_environment(workdir),
                    pass_fds=(evidence_fd,),
                    start_new_session=True,
                )
            finally:
                os.close(evidence_fd)
            timed_out = False
            try:
                process.communicate(marshal.dumps(job), timeout=limits.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(process)
                process.wait()
            stderr.seek(0, os.SEEK_END)
            stderr.seek(max(0, stderr.tell() - _STDERR_TAIL))
            stderr_tail = stderr.read().decode("utf-8", "replace")
        raw = Path(evidence_path).read_bytes()
    finally:
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
    return _judge(raw, nonce, test, process.returncode, timed_out, time.monotonic() - started, stderr_tail)


def _judge(
    raw: bytes, nonce: str, test: InstrumentedTest, returncode: int, timed_out: bool, duration: float, stderr_tail: str
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
            {"aborts": aborts, "malformed_records": malformed},
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
