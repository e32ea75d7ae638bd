"""The fork server: a forked child inherits nothing a candidate could abuse, and failures fall back.

Each probe is a tiny program whose `probe()` reports what a candidate could see; the hidden test
asserts the safe value, so a pass means the guarantee held inside the sandbox.
"""

from __future__ import annotations

import textwrap
import uuid

import pytest

from tasks.code.sandbox import SandboxLimits, forkserver, run_tests
from tests.tasks.code.test_sandbox_attacks import ATTACKS, FAST, ROWS, _anchor

LAUNCHERS = ["fork_server", "exec"]

OPEN_DESCRIPTORS = """
import os
def probe():
    found = []
    for fd in range(4096):  # inherited descriptors may sit above the child's RLIMIT_NOFILE
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found
"""

ENVIRONMENT = """
import os
def probe():
    return sorted(os.environ)
"""

# Read the *parent* process's writable memory (the fork server, when forked from it) and count
# occurrences of two markers: one from an earlier run's program, one from this run's own program.
PARENT_MEMORY = """
import os
def probe():
    needles = [MARKERS[0].encode(), MARKERS[1].encode()]
    pid = os.getppid()
    found = 0
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError:
        return -1
    for line in maps:
        addresses, perms = line.split()[:2]
        if not perms.startswith("rw"):
            continue
        start, end = (int(x, 16) for x in addresses.split("-"))
        try:
            mem.seek(start)
            chunk = mem.read(end - start)
        except OSError:
            continue
        found += sum(chunk.count(needle) for needle in needles)
    return found
"""


def _probe(program: str, expected: object, launcher: str) -> tuple[str, object, str]:
    test = f"def check(candidate):\n    assert candidate() == {expected!r}\n"
    result = run_tests(textwrap.dedent(program), test, "probe", SandboxLimits(wall_s=10.0, launcher=launcher))
    value = result.cases[0].values[0] if result.cases and result.cases[0].values else None
    return result.outcome, value, result.details["launcher"]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_child_holds_only_stdio_and_the_evidence_descriptor(launcher: str) -> None:
    _, value, used = _probe(OPEN_DESCRIPTORS, None, launcher)
    assert used == launcher
    # exec keeps the evidence descriptor's number from the parent; the fork server moves it to 3
    assert isinstance(value, list) and value[:3] == [0, 1, 2] and len(value) == 4, value
    assert launcher == "exec" or value == [0, 1, 2, 3]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_child_environment_is_minimal(launcher: str) -> None:
    outcome, value, _ = _probe(ENVIRONMENT, ["HOME", "LANG", "PATH", "TMPDIR"], launcher)
    assert outcome == "pass", value


def test_fork_server_never_holds_a_job() -> None:
    markers = [f"job-marker-{uuid.uuid4().hex}" for _ in range(2)]
    earlier = f"MARKERS = {markers!r}\ndef probe():\n    return 0\n"
    assert _probe(earlier, 0, "fork_server")[0] == "pass"
    program = f"MARKERS = {markers!r}\n" + PARENT_MEMORY
    outcome, value, launcher = _probe(program, 0, "fork_server")
    if value == -1:
        pytest.skip("this kernel does not let a process read its parent's memory")
    assert (outcome, value, launcher) == ("pass", 0, "fork_server")


def test_unavailable_fork_server_falls_back_to_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> forkserver.ForkServer:
        raise forkserver.ForkServerError("refused for the test")

    monkeypatch.setattr(forkserver, "shared", refuse)
    row = ROWS["HumanEval/0"]
    result = run_tests(row["prompt"] + row["canonical_solution"], row["test"], row["entry_point"], FAST)
    assert (result.outcome, result.details["launcher"]) == ("pass", "exec")


def test_dead_fork_server_is_replaced() -> None:
    row = ROWS["HumanEval/0"]
    program = row["prompt"] + row["canonical_solution"]
    server = forkserver.shared()
    server._process.kill()
    server._process.wait()
    outcomes = [run_tests(program, row["test"], row["entry_point"], FAST) for _ in range(3)]
    assert [o.outcome for o in outcomes] == ["pass"] * 3
    assert outcomes[-1].details["launcher"] == "fork_server" and forkserver.shared() is not server


QUICK_ATTACKS = [a for a in ATTACKS if a[2] != {"timeout"}]


@pytest.mark.parametrize(("text", "outcomes", "event_kind"), [a[1:] for a in QUICK_ATTACKS], ids=[a[0] for a in QUICK_ATTACKS])
def test_attacks_also_fail_under_exec_launcher(text: str, outcomes: set[str], event_kind: str | None) -> None:
    from tasks.code import check_code

    outcome = check_code(_anchor(), text, SandboxLimits(wall_s=5.0, cpu_s=4, memory_mb=512, launcher="exec"))
    assert outcome.correct is False and outcome.outcome in outcomes, outcome.details["reason"]
    if event_kind is not None:
        assert event_kind in {event["kind"] for event in outcome.details["audit_events"]}
