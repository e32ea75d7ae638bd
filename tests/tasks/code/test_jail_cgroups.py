"""What a jail holds is accounted: a memory cgroup and a pids cgroup per jail (`_cgroup.py`).

RLIMIT_AS bounds the address space only: memfd pages (each file under RLIMIT_FSIZE, as many as
descriptors allow) and anonymous memory together went past the 1 GiB limit with no record. Under
the memory cgroup the kernel ends such a jail and the run is `memory_exceeded`. Where cgroups are
not delegated the measure is missing from `isolation`, which fails these tests under CI=true.
"""

from __future__ import annotations

import time
from pathlib import Path

from tasks.code.sandbox import SandboxLimits, run_tests
from tests.support.ci import unavailable

HOARD = """
import os
def probe(files):
    anonymous = bytearray(512 << 20)
    chunk = b"x" * (15 << 20)
    held = []
    for _ in range(files):
        fd = os.memfd_create("hoard")
        os.write(fd, chunk)
        held.append(fd)
    return len(held) + len(anonymous) // (1 << 30)
"""


def _require(isolation: tuple[str, ...], name: str) -> None:
    if name not in isolation:
        unavailable(f"{name} did not apply here (needs root and delegated memory and pids cgroups, v1 or v2)")


def test_memfd_and_anonymous_memory_together_are_bounded() -> None:
    result = run_tests(HOARD, "def check(candidate):\n    assert candidate(55) == 55\n", "probe")
    _require(result.isolation, "memory_cgroup")
    assert (result.outcome, result.reason) == ("memory_exceeded", "memory cgroup limit (the kernel killed the jail)")
    assert "exit" not in {event["kind"] for event in result.audit_events}


def test_a_run_within_the_limit_is_untouched() -> None:
    result = run_tests(HOARD, "def check(candidate):\n    assert candidate(4) == 4\n", "probe")
    _require(result.isolation, "memory_cgroup")
    assert result.passed, result.reason


def test_the_pids_cgroup_caps_threads_too() -> None:
    program = """
import threading
def probe():
    gate, started = threading.Event(), 0
    for _ in range(50):
        try:
            threading.Thread(target=gate.wait).start()
        except RuntimeError:
            break
        started += 1
    gate.set()
    return started
"""
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 3\n", "probe", SandboxLimits(threads=3))
    _require(result.isolation, "pids_cgroup")
    assert result.passed, f"{result.reason}: {result.cases[0].returned if result.cases else ''}"


def test_each_runs_cgroups_are_removed_once_it_has_ended() -> None:
    """The run's init exits inside its cgroups and the fork server removes them when idle
    (`_cgroup.Layout.sweep`): after the runs, every directory left holds a task (the spare init
    made ahead for the next run, `_zygote._Spare`), none is an ended run's."""
    from tasks.code.sandbox import forkserver
    from tasks.code.sandbox.confinement import readable_paths, sandbox_root

    results = [run_tests(HOARD, "def check(candidate):\n    assert candidate(1) == 1\n", "probe") for _ in range(3)]
    _require(results[-1].isolation, "memory_cgroup")
    assert all(result.passed for result in results), [result.reason for result in results]
    server = forkserver.shared((sandbox_root(), readable_paths()))
    name = f"sandbox-{server._process.pid}"
    bases = [Path(root, name) for root in ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup")]
    bases = [base for base in bases if base.is_dir()]
    assert bases, f"no {name} directory under /sys/fs/cgroup"
    deadline = time.monotonic() + 5
    while (empty := [p.name for base in bases for p in base.glob("jail-*") if not (p / "cgroup.procs").read_text().strip()]):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert empty == []
    assert len({p.name for base in bases for p in base.glob("jail-*")}) <= 4  # a spare per run shape, at most `_zygote._MAX_SPARES`
