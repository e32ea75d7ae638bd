"""Every known way to fake a pass must FAIL, and the audit trace must name what was tried.

Each case is a candidate *body* for HumanEval/0 (`has_close_elements`) unless it says otherwise.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from tasks.code import check_code
from tasks.code.sandbox import SandboxLimits, run_tests
from tasks.code.sandbox.confinement import sandbox_root
from tests.support.ci import unavailable
from tests.support.sandbox_attacks import ATTACKS, FAST, OUTSIDE, ROWS, body, human_eval_anchor, jails_under


@pytest.mark.parametrize(("text", "outcomes", "event_kind"), [a[1:] for a in ATTACKS], ids=[a[0] for a in ATTACKS])
def test_attack_fails(text: str, outcomes: set[str], event_kind: str | None) -> None:
    outcome = check_code(human_eval_anchor(), text, FAST)
    assert outcome.correct is False
    assert outcome.outcome in outcomes, outcome.details["reason"]
    kinds = {event["kind"] for event in outcome.details["audit_events"]}
    if event_kind is not None:
        assert event_kind in kinds, kinds
    assert not OUTSIDE.exists() and not Path("/tmp/sandbox-shell-marker").exists()


@pytest.mark.parametrize("launcher", ["fork_server", "exec"])
def test_the_cpu_limit_ends_a_busy_loop_as_a_timeout_long_before_the_wall_clock(launcher: str) -> None:
    # The soft limit's SIGXCPU must end the jail as a timeout (as PID 1 of its namespace the kernel
    # dropped it, and only the hard limit's SIGKILL, a second later, ended it, read as an error).
    # With the cpu cgroup (one CPU) the parent's deadline is cpu_s (`SandboxLimits.deadline_s`).
    limits = SandboxLimits(wall_s=30.0, cpu_s=1, memory_mb=512, launcher=launcher)
    outcome = check_code(human_eval_anchor(), body("while True: pass"), limits)
    assert (outcome.correct, outcome.outcome) == (False, "timeout")
    assert outcome.details["reason"] in ("CPU-time limit", "CPU-time limit (cpu_s seconds on one CPU)")
    assert outcome.details["duration_s"] < 10
    assert "exit" not in {event["kind"] for event in outcome.details["audit_events"]}


def test_honest_solution_passes_with_evidence() -> None:
    row = ROWS["HumanEval/0"]
    outcome = check_code(human_eval_anchor(), row["canonical_solution"], FAST)
    assert (outcome.correct, outcome.outcome) == (True, "pass")
    assert len(outcome.details["cases"]) == 7 and all(case["passed"] for case in outcome.details["cases"])
    assert outcome.details["audit_events"] == []
    assert "audit_hook" in outcome.details["isolation"]


def test_the_network_namespace_is_reported_exactly_when_it_holds() -> None:
    # The jail has no /proc (`_root.py`), so this process reads the jail's namespace link while
    # its call sleeps, and compares it with its own: a difference means the jail's network is not ours.
    ours = os.readlink("/proc/self/ns/net")
    seen: list[str] = []

    def watch() -> None:
        deadline = time.monotonic() + 4
        while not seen and time.monotonic() < deadline:
            for pid in jails_under(sandbox_root()):
                with contextlib.suppress(OSError):
                    seen.append(os.readlink(f"/proc/{pid}/ns/net"))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    probe = "import time\ndef probe():\n    time.sleep(1)\n    return 1\n"
    result = run_tests(probe, "def check(candidate):\n    assert candidate() == 1\n", "probe", FAST)
    watcher.join()
    assert result.outcome == "pass" and seen, (result.reason, seen)
    held = seen[0] != ours
    assert held == ("netns" in result.isolation), (result.isolation, seen)  # claimed exactly when it holds
    if held:
        return
    assert os.geteuid() != 0, f"root, yet the jail shares this process's network namespace {ours}"
    unavailable(f"netns is reported missing: the jail could not unshare its network namespace (uid {os.geteuid()})")
