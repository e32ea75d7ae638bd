"""Threads work in the jail, bounded: honest code using `threading` or `concurrent.futures` passes,
more threads than the limit cannot start, and a Python signal handler is still refused (seccomp
allows glibc's own two handlers only)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

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
    "thirty_two_threads_at_once": """
import threading
def has_close_elements(numbers, threshold):
    found, barrier = [], threading.Barrier(32)
    def scan(start):
        barrier.wait()  # all 32 alive together: ThreadPoolExecutor()'s largest default
        found.extend(j for j in range(start + 1, len(numbers)) if abs(numbers[start % len(numbers)] - numbers[j]) < threshold)
    workers = [threading.Thread(target=scan, args=(i,)) for i in range(32)]
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


HOLDER = """
import threading, time
def has_close_elements(numbers, threshold):
    if not threading.active_count() > 1:  # within its own allowance of 40 threads, held
        for _ in range(38):
            threading.Thread(target=time.sleep, args=(8,), daemon=True).start()
        time.sleep(6)
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
"""


def test_a_jail_in_another_process_does_not_share_the_thread_cap() -> None:
    """Red-team neighbour_uid_collision: every fork server's first jail had the same uid, and
    RLIMIT_NPROC counts a uid's threads machine-wide, so a candidate holding its threads in one
    process made an honest threaded candidate in another fail. Each jail's threads are now capped
    by its own pids cgroup (uids unique per machine where the cgroups do not apply)."""
    script = (
        "import sys; from tasks.code import CodeAnchor, check_code; from tasks.code.loader import _bundled_rows; "
        "row = next(r for r in _bundled_rows() if r['task_id'] == 'HumanEval/0'); "
        "print(check_code(CodeAnchor('HumanEval/0', row['prompt'], row['test'], row['entry_point'], row['canonical_solution']), sys.stdin.read()).outcome)"
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert holder.stdin is not None
    holder.stdin.write(HOLDER)
    holder.stdin.close()
    time.sleep(4)  # the holder's jail is up and holds its threads
    row = ROWS["HumanEval/0"]
    honest = check_code(CodeAnchor("HumanEval/0", row["prompt"], row["test"], row["entry_point"], row["canonical_solution"]), THREADED["threading"])
    assert holder.wait(120) == 0 and holder.stdout is not None
    assert honest.outcome == "pass", honest.details["reason"]
    assert holder.stdout.read().strip() == "pass"


# A fork server whose draws are all one number (`os.urandom` patched before `_zygote.py` runs as
# `__main__`): two such servers give their first jails the same uid, as two real servers may by
# chance (`_zygote.ordinary_uid`). Each jail holds 38 threads beside an honest threaded solution.
SAME_DRAWS = (
    "import os, runpy, sys; os.urandom = lambda n: (12345).to_bytes(n, 'little'); "
    "path = sys.argv[1]; sys.argv = sys.argv[1:]; runpy.run_path(path, run_name='__main__')"
)
SHARED_UID = """
import os, threading, time
def probe(numbers, threshold):
    gate = threading.Event()
    held = [threading.Thread(target=gate.wait, daemon=True) for _ in range(38)]
    for thread in held:
        thread.start()
    time.sleep(3)  # both jails hold their threads at once
    found = []
    def scan(start):
        found.extend(True for b in numbers[start + 1:] if abs(numbers[start] - b) < threshold)
    workers = [threading.Thread(target=scan, args=(i,)) for i in range(len(numbers))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    gate.set()
    return [os.getuid(), bool(found)]
"""
SAME_DRAWS_RUN = (
    "import sys; from tasks.code.sandbox import forkserver, run_tests; "
    "forkserver.server_command = lambda *a: [sys.executable, '-c', sys.argv[1], str(forkserver._ZYGOTE), *a]; "
    "r = run_tests(sys.stdin.read(), 'def check(candidate):\\n    global seen\\n    seen = candidate([1.0, 2.0, 2.05], 0.1)\\n    print(seen[0])\\n    assert seen[1] is True\\n', 'probe'); "
    "print(r.outcome, 'pids_cgroup' in r.isolation)"
)


def test_two_jails_with_the_same_uid_at_once_keep_their_own_thread_caps() -> None:
    """With the pids cgroup as the cap and RLIMIT_NPROC a login's, two jails that drew one uid do
    not share a cap: each holds 38 threads and still starts its workers (with the old per-uid
    RLIMIT_NPROC of 41 the second fails: "can't start new thread")."""
    runs = [
        subprocess.Popen([sys.executable, "-c", SAME_DRAWS_RUN, SAME_DRAWS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()})
        for _ in range(2)
    ]
    for run in runs:  # both get their program before either is waited for: they run at once
        assert run.stdin is not None
        run.stdin.write(SHARED_UID)
        run.stdin.close()
    assert [run.wait(120) for run in runs] == [0, 0]
    outputs = [run.stdout.read().split() for run in runs if run.stdout is not None]  # uid, outcome, cgroup
    if any(output[-1] != "True" for output in outputs):
        unavailable(f"the pids cgroup did not apply here: {outputs}")
    assert [output[1:] for output in outputs] == [["pass", "True"]] * 2, outputs
    assert outputs[0][0] == outputs[1][0], outputs  # one uid in both, at once
