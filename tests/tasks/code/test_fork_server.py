"""The fork server: a forked child inherits nothing a candidate could abuse, and failures fall back.

Each probe is a tiny program whose `probe()` reports what a candidate could see; the hidden test
asserts the safe value, so a pass means the guarantee held inside the sandbox.
"""

from __future__ import annotations

import os
import signal
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tasks.code.sandbox import SandboxLimits, forkserver, run_tests
from tasks.code.sandbox.confinement import readable_paths, sandbox_root
from tests.support.ci import unavailable
from tests.support.sandbox_attacks import ATTACKS, FAST, ROWS, human_eval_anchor, jails_under

LAUNCHERS = ["fork_server", "exec"]
REPOSITORY = Path(__file__).resolve().parents[3]
POLICY = (sandbox_root(), readable_paths())  # the confinement default limits ask the server for

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

# Open the trusted parent's memory (it holds the hidden test): the hook refuses and records it,
# and Landlock and the PID namespace would stop it below the hook.
PARENT_MEMORY = """
def probe(pid):
    try:
        with open(f"/proc/{pid}/mem", "rb") as memory:
            return "opened"
    except PermissionError as error:
        return "refused" if "sandbox refused" in str(error) else "denied by the kernel"
"""


def _memory_count(pid: int, needles: list[bytes]) -> int:
    """Occurrences of `needles` in the writable memory of process `pid` (read from this process)."""
    found = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as memory:
        for line in maps:
            addresses, permissions = line.split()[:2]
            if not permissions.startswith("rw"):
                continue
            start, end = (int(x, 16) for x in addresses.split("-"))
            try:
                memory.seek(start)
                chunk = memory.read(end - start)
            except OSError:
                continue  # guard pages and the like
            found += sum(chunk.count(needle) for needle in needles)
    return found


def _probe(program: str, expected: object, launcher: str) -> tuple[str, tuple[str, ...], str]:
    """(outcome, the probe's answer as text, launcher): "pass" means the answer equalled `expected`."""
    test = f"def check(candidate):\n    assert candidate() == {expected!r}\n"
    result = run_tests(textwrap.dedent(program), test, "probe", SandboxLimits(wall_s=10.0, launcher=launcher))
    return result.outcome, result.cases[0].returned if result.cases else (), result.details["launcher"]


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_jail_holds_only_stdio_its_two_pipe_ends_among_them(launcher: str) -> None:
    outcome, value, used = _probe(OPEN_DESCRIPTORS, [0, 1, 2], launcher)
    assert (outcome, used) == ("pass", launcher), value


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_jail_environment_is_an_ordinary_logins_and_nothing_of_the_parents(launcher: str) -> None:
    keys = ["HOME", "LANG", "LOGNAME", "PATH", "PWD", "SHELL", "SHLVL", "TERM", "TMPDIR", "USER", "_"]
    outcome, value, _ = _probe(ENVIRONMENT, keys, launcher)
    assert outcome == "pass", value


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_jail_cannot_open_another_process_proc_entries(launcher: str) -> None:
    test = f"def check(candidate):\n    assert candidate({os.getpid()}) == 'refused'\n"
    result = run_tests(textwrap.dedent(PARENT_MEMORY), test, "probe", SandboxLimits(launcher=launcher))
    assert result.outcome == "pass", result.cases
    assert "process_inspection" in {event["kind"] for event in result.audit_events}


def test_fork_server_never_holds_a_job() -> None:
    marker = f"job-marker-{uuid.uuid4().hex}"
    program = f"MARKER = {marker!r}\ndef probe():\n    return 0\n"
    assert _probe(program, 0, "fork_server")[0] == "pass"
    server = forkserver.shared(POLICY)
    try:
        count = _memory_count(server._process.pid, [marker.encode(), b"_become_jail"])
    except PermissionError:
        pytest.skip("this process may not read the fork server's memory")
    assert count > 0, "the scan must at least find the server's own code names"
    assert _memory_count(server._process.pid, [marker.encode()]) == 0


def test_unavailable_fork_server_falls_back_to_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(policy: forkserver.Policy = None, variant: bool = False) -> forkserver.ForkServer:
        raise forkserver.ForkServerError("refused for the test")

    monkeypatch.setattr(forkserver, "shared", refuse)
    row = ROWS["HumanEval/0"]
    result = run_tests(row["prompt"] + row["canonical_solution"], row["test"], row["entry_point"], FAST, helpers=row["prompt"])
    assert (result.outcome, result.details["launcher"]) == ("pass", "exec")


def test_dead_fork_server_is_replaced() -> None:
    row = ROWS["HumanEval/0"]
    program = row["prompt"] + row["canonical_solution"]
    server = forkserver.shared(POLICY)
    server._process.kill()
    server._process.wait()
    outcomes = [run_tests(program, row["test"], row["entry_point"], FAST, helpers=row["prompt"]) for _ in range(3)]
    assert [o.outcome for o in outcomes] == ["pass"] * 3
    assert outcomes[-1].details["launcher"] == "fork_server" and forkserver.shared(POLICY) is not server


def test_stopped_fork_server_is_killed_and_replaced() -> None:
    """A server that cannot answer (here SIGSTOPped) misses its start deadline once; it is killed,
    that run goes to a one-shot server, and the next run gets a fresh warm server at once."""
    row = ROWS["HumanEval/0"]
    program = row["prompt"] + row["canonical_solution"]
    server = forkserver.shared(POLICY)
    os.kill(server._process.pid, signal.SIGSTOP)
    try:
        first = run_tests(program, row["test"], row["entry_point"], FAST, helpers=row["prompt"])
        started = time.monotonic()
        second = run_tests(program, row["test"], row["entry_point"], FAST, helpers=row["prompt"])
        second_s = time.monotonic() - started
    finally:
        if server._process.poll() is None:
            os.kill(server._process.pid, signal.SIGKILL)
    assert (first.outcome, first.details["launcher"]) == ("pass", "exec")
    assert (second.outcome, second.details["launcher"]) == ("pass", "fork_server")
    assert server._process.poll() is not None and forkserver.shared(POLICY) is not server
    assert second_s < forkserver._START_TIMEOUT_S


def _spare_inits(server_pid: int, gone: int | None = None) -> list[int]:
    """The server's children while no run is in flight (the spare inits it made when idle), once
    there is one and `gone` is not among them (waited for up to 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        children = [int(pid) for pid in Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()]
        if (children and gone not in children) or time.monotonic() > deadline:
            return children
        time.sleep(0.02)


def test_a_spare_init_killed_unused_is_reaped_and_runs_go_on() -> None:
    """The server makes the next run's init ahead (`_zygote._Spare`); one killed from outside
    before its run is reaped and replaced, and the next run passes."""
    row = ROWS["HumanEval/0"]
    program = row["prompt"] + row["canonical_solution"]
    assert run_tests(program, row["test"], row["entry_point"], FAST, helpers=row["prompt"]).outcome == "pass"
    server = forkserver.shared(POLICY)
    spares = _spare_inits(server._process.pid)
    assert len(spares) == 1, spares  # one shape of run so far
    os.kill(spares[0], signal.SIGKILL)
    replaced = _spare_inits(server._process.pid, gone=spares[0])
    assert len(replaced) == 1 and replaced != spares, (spares, replaced)  # reaped, and a new one made
    result = run_tests(program, row["test"], row["entry_point"], FAST, helpers=row["prompt"])
    assert (result.outcome, result.details["launcher"]) == ("pass", "fork_server")
    assert forkserver.shared(POLICY) is server


QUICK_ATTACKS = [a for a in ATTACKS if a[2] != {"timeout"}]


@pytest.mark.parametrize(("text", "outcomes", "event_kind"), [a[1:] for a in QUICK_ATTACKS], ids=[a[0] for a in QUICK_ATTACKS])
def test_attacks_also_fail_under_exec_launcher(text: str, outcomes: set[str], event_kind: str | None) -> None:
    from tasks.code import check_code

    outcome = check_code(human_eval_anchor(), text, SandboxLimits(wall_s=5.0, cpu_s=4, memory_mb=512, launcher="exec"))
    assert outcome.correct is False and outcome.outcome in outcomes, outcome.details["reason"]
    if event_kind is not None:
        assert event_kind in {event["kind"] for event in outcome.details["audit_events"]}


SLEEPER = "import time\ndef probe():\n    open('in-call', 'w').close()\n    time.sleep(60)\n    return 1\n"
PARENT = """
import sys
from tasks.code.sandbox import SandboxLimits, run_tests
from tasks.code.sandbox.confinement import sandbox_root
print(sandbox_root(), flush=True)
run_tests({program!r}, "def check(candidate):\\n    assert candidate() == 1\\n", "probe", SandboxLimits(wall_s=60.0, launcher={launcher!r}))
"""


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_a_killed_parent_leaves_no_jail_behind(launcher: str) -> None:
    import subprocess
    import sys

    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT.format(program=SLEEPER, launcher=launcher)],
        stdout=subprocess.PIPE, text=True, cwd=str(REPOSITORY),
    )
    try:
        assert parent.stdout is not None
        root = parent.stdout.readline().strip()
        deadline = time.monotonic() + 20

        def in_call() -> bool:  # the jail is inside its call, so only a kill can end it now
            return any(os.path.exists(f"/proc/{pid}/cwd/in-call") for pid in jails_under(root))

        while not in_call() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not in_call():
            unavailable("cannot see the jail's working directory from here (not root)")
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while jails_under(root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert jails_under(root) == []
