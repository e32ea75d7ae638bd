"""Run many sandboxed candidates at once with a bounded number of sandbox processes.

Each job is its own sandbox process (see `executor`); the pool only bounds how many run together.
Threads here merely wait on those processes, so no signals are involved and it works from any
thread or Ray actor.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tasks.code.sandbox.executor import SandboxLimits, run_tests
from tasks.code.sandbox.reference import Reference
from tasks.code.sandbox.result import ExecutionResult


@dataclass(frozen=True)
class SandboxJob:
    """One candidate program with the hidden test it must pass, the test's helpers (the reference
    program), the number of asserts a correct solution makes run and the canonical answers (see
    `run_tests`)."""

    program: str
    test_source: str
    entry_point: str
    helpers: str = ""
    min_cases: int = 1
    reference: Reference | None = None
    differential: bool = False
    calls: tuple[tuple[Any, Any], ...] | None = None  # the test's calls, for the jail's test file (`run_tests`)


def run_many(jobs: Sequence[SandboxJob], workers: int = 2, limits: SandboxLimits = SandboxLimits()) -> list[ExecutionResult]:
    """`run_tests` for every job, at most `workers` sandboxes at a time, results in job order."""
    def run(job: SandboxJob) -> ExecutionResult:
        return run_tests(
            job.program, job.test_source, job.entry_point, limits, helpers=job.helpers, min_cases=job.min_cases, reference=job.reference,
            differential=job.differential, calls=job.calls,
        )

    with ThreadPoolExecutor(max_workers=max(1, workers)) as threads:
        return list(threads.map(run, jobs))
