"""What a jail holds is accounted: a memory, a pids and a cpu cgroup per jail (`_cgroup.py`).

RLIMIT_AS bounds the address space only: memfd pages (each file under RLIMIT_FSIZE, as many as
descriptors allow) and anonymous memory together went past the 1 GiB limit with no record. Under
the memory cgroup the kernel ends such a jail and the run is `memory_exceeded`. With the three
cgroups the jail's rlimits are a login's (RLIMIT_AS and RLIMIT_CPU unlimited, issue 20), so these
are the bounds: memory of every kind, threads, and one CPU. Where cgroups are not delegated the
measure is missing from `isolation`, which fails these tests under CI=true.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


UNLIMITED_AS = "import resource\nassert resource.getrlimit(resource.RLIMIT_AS) == (resource.RLIM_INFINITY,) * 2\n"
HOGS = {
    "anonymous": "held = b'x' * (1200 << 20)",
    "tmpfs_then_anonymous": (
        "[open(f'disk{n}', 'wb').write(b'x' * (15 << 20)) for n in range(4)]; open('/dev/shm/s', 'wb').write(b'x' * (15 << 20))\n"
        "    held = b'x' * (1050 << 20)"
    ),
}


@pytest.mark.parametrize("hog", list(HOGS.values()), ids=list(HOGS))
def test_a_memory_hog_under_an_unlimited_address_space_ends_at_the_memory_cgroup(hog: str) -> None:
    program = f"{UNLIMITED_AS}def probe():\n    {hog}\n    return 1\n"
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 1\n", "probe")
    _require(result.isolation, "memory_cgroup")
    assert (result.outcome, result.reason) == ("memory_exceeded", "memory cgroup limit (the kernel killed the jail)")


BURNER = """
import hashlib, threading, time
def probe(seconds):
    started, cpu, block = time.monotonic(), time.process_time(), bytes(1 << 20)
    def burn():  # hashing a large block releases the GIL: four threads can burn four CPUs
        while time.monotonic() - started < seconds:
            hashlib.sha256(block).digest()
    workers = [threading.Thread(target=burn) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return round((time.process_time() - cpu) / (time.monotonic() - started), 2)
"""


def test_the_cpu_cgroup_holds_four_burning_threads_to_one_cpu() -> None:
    """Four threads that burn for 2 s of wall time get at most one CPU's worth between them: the
    jail's CPU time never exceeds its wall time (the parent's deadline) and a neighbour keeps its core."""
    result = run_tests(BURNER, "def check(candidate):\n    global ratio\n    ratio = candidate(2.0)\n    assert ratio <= 1.2, ratio\n", "probe")
    _require(result.isolation, "cpu_cgroup")
    assert result.passed, f"{result.reason}: {result.cases[0].returned if result.cases else ''}"


def test_four_burning_threads_end_at_the_deadline() -> None:
    limits = SandboxLimits(wall_s=3.0)
    result = run_tests(BURNER, "def check(candidate):\n    assert candidate(60.0) == 1\n", "probe", limits)
    _require(result.isolation, "cpu_cgroup")
    assert (result.outcome, result.reason) == ("timeout", "wall-clock limit")
    assert result.duration_s < limits.wall_s + 2.5, result.duration_s


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
    bases = [Path(root, name) for root in ("/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup")]
    bases = [base for base in bases if base.is_dir()]
    assert bases, f"no {name} directory under /sys/fs/cgroup"
    deadline = time.monotonic() + 5
    while (empty := [p.name for base in bases for p in base.glob("jail-*") if not (p / "cgroup.procs").read_text().strip()]):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert empty == []
    assert len({p.name for base in bases for p in base.glob("jail-*")}) <= 4  # a spare per run shape, at most `_zygote._MAX_SPARES`


# A fork server whose `_cgroup` finds no hierarchy (as on a machine without delegation): imported
# first and pointed elsewhere, then `_zygote.py` runs as `__main__`.
WITHOUT_CGROUPS = (
    "import os, runpy, sys; path = sys.argv[1]; sys.argv = sys.argv[1:]; sys.path.insert(0, os.path.dirname(path)); "
    "import _cgroup; _cgroup._V1_MEMORY = _cgroup._V2 = '/nonexistent'; runpy.run_path(path, run_name='__main__')"
)
FALLBACK_RUN = (
    "import sys; from tasks.code.sandbox import forkserver, run_tests; "
    "forkserver.server_command = lambda *a: [sys.executable, '-c', sys.argv[1], str(forkserver._ZYGOTE), *a]; "
    "program = 'import os, resource\\ndef probe():\\n    return [os.getuid()] + [list(resource.getrlimit(getattr(resource, n))) for n in (\"RLIMIT_AS\", \"RLIMIT_CPU\", \"RLIMIT_NOFILE\", \"RLIMIT_NPROC\")]\\n'; "
    "r = run_tests(program, 'def check(candidate):\\n    print(candidate())\\n    assert True\\n', 'probe'); "
    "print(r.outcome, sorted(set(r.isolation) & {'memory_cgroup', 'pids_cgroup', 'cpu_cgroup', 'rlimits', 'unprivileged_uid'}))"
)


def test_without_the_cgroups_the_rlimits_and_a_uid_of_its_own_are_the_bounds() -> None:
    """Where the cgroups do not apply the jail keeps the rlimits, the only bounds there are, and a
    uid no other jail has (RLIMIT_NPROC counts a uid's tasks machine-wide): 2**30 and more."""
    run = subprocess.run(
        [sys.executable, "-c", FALLBACK_RUN, WITHOUT_CGROUPS], capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()}
    )
    seen, verdict = run.stdout.splitlines()[-2:]
    if "unprivileged_uid" not in verdict:
        unavailable(f"the jail's uid did not change here: {verdict}")
    assert verdict == "pass ['rlimits', 'unprivileged_uid']", verdict
    uid, *limits = eval(seen)  # printed by the check, in that process
    assert uid >= 1 << 30 and limits == [[1 << 30, 1 << 30], [10, 11], [1024, 4096], [SandboxLimits().threads + 1] * 2], seen
