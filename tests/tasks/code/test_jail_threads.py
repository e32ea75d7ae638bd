"""Threads work in the jail, bounded: honest code using `threading` or `concurrent.futures` passes,
more threads than the limit cannot start, and a Python signal handler is still refused (seccomp
allows glibc's own two handlers only)."""

from __future__ import annotations

import pytest

from tasks.code import CodeAnchor, check_code
from tasks.code.sandbox import SandboxLimits, run_tests
from tests.support.ci import unavailable
from tests.support.sandbox_attacks import ROWS

THREADED = {
    "threading": """
import threading
def has_close_elements(numbers, threshold):
    found = []
    def scan(start):
        for j in range(start + 1, len(numbers)):
            if abs(numbers[start] - numbers[j]) < threshold:
                found.append(True)
    workers = [threading.Thread(target=scan, args=(i,)) for i in range(len(numbers))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return bool(found)
""",
    "concurrent_futures": """
from concurrent.futures import ThreadPoolExecutor
def has_close_elements(numbers, threshold):
    def close(pair):
        i, j = pair
        return abs(numbers[i] - numbers[j]) < threshold
    pairs = [(i, j) for i in range(len(numbers)) for j in range(i + 1, len(numbers))]
    with ThreadPoolExecutor(max_workers=4) as pool:
        return any(pool.map(close, pairs))
""",
}


@pytest.mark.parametrize("text", list(THREADED.values()), ids=list(THREADED))
def test_an_honest_threaded_solution_passes(text: str) -> None:
    row = ROWS["HumanEval/0"]
    outcome = check_code(CodeAnchor("HumanEval/0", row["prompt"], row["test"], row["entry_point"], row["canonical_solution"]), text)
    assert outcome.correct, outcome.details["reason"]
    if "seccomp" not in outcome.details["isolation"]:
        unavailable("seccomp did not apply here: the threads ran unfiltered")
    assert outcome.details["audit_events"] == []


def test_threads_beyond_the_limit_cannot_start() -> None:
    program = """
import threading
def probe():
    gate, started = threading.Event(), []
    for _ in range(100):
        try:
            thread = threading.Thread(target=gate.wait)
            thread.start()
        except RuntimeError:
            break
        started.append(thread)
    gate.set()
    for thread in started:
        thread.join()
    return len(started)
"""
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 5\n", "probe", SandboxLimits(threads=5))
    if "rlimits" not in result.isolation or "unprivileged_uid" not in result.isolation:
        unavailable("the jail's own uid and rlimits did not apply here")
    assert result.passed, f"{result.reason}: {result.cases[0].returned if result.cases else ''}"


def test_a_python_signal_handler_is_still_refused() -> None:
    program = "import signal\ndef probe():\n    signal.signal(signal.SIGUSR1, lambda *args: None)\n    return 1\n"
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 1\n", "probe")
    if "seccomp" not in result.isolation:
        unavailable("seccomp did not apply here")
    assert result.outcome == "error" and [event["kind"] for event in result.audit_events] == ["kernel_refusal"]
