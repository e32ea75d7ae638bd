"""`verify --follow` on hostile input streams (issue 22, red team classes B, D, F): an endless line,
a followed file truncated, rewritten or replaced under the monitor, a reader that closes the pipe,
and a graph whose illegal moves are findings, where the online verdict must still equal the batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.shield import Monitor, parse_graph
from harness.shield.trace import parse_trace
from harness.shield.verification import verify

SIMPLE = {
    "format_version": 1, "task_id": "simple", "initial_state": "INIT", "goal_states": ["GOAL"], "required_states": ["A"],
    "nodes": [
        {"node_id": "INIT", "actions": ["start"], "next_allowed": ["A"]},
        {"node_id": "A", "actions": ["act"], "next_allowed": ["GOAL"]},
        {"node_id": "GOAL", "actions": ["finish"], "next_allowed": []},
    ],
}


def _event(action: str) -> str:
    return json.dumps({"event_type": "agent_message", "action": action, "content": action})


HONEST = "\n".join(_event(a) for a in ("start", "act", "finish")) + "\n"
HACK = "\n".join(_event(a) for a in ("start", "finish")) + "\n"


@pytest.fixture()
def graph(tmp_path: Path) -> str:
    path = tmp_path / "simple.json"
    path.write_text(json.dumps(SIMPLE))
    return str(path)


def _follow(graph: str, path: str, *extra: str, stdin: str | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harness.shield", "verify", "--graph", graph, "--follow", path, *extra],
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_an_endless_line_is_refused_by_the_per_line_cap_before_it_is_buffered(graph: str) -> None:
    """/dev/zero never sends a newline: the cap is checked per chunk, so exit 2 comes after 64 MiB
    read once (the attacker's run took 70-84 s re-splitting the growing buffer)."""
    process = _follow(graph, "/dev/zero")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and err.startswith("error: /dev/zero:1: line longer than") and err.count("\n") == 1


CHANGES = {
    # what the writer does to the file once the monitor has read the honest trace
    "truncated-and-rewritten": lambda path, other: path.write_text(HACK),
    "replaced-by-mv": lambda path, other: os.replace(other, path),
    "removed": lambda path, other: path.unlink(),
}


@pytest.mark.parametrize("change", sorted(CHANGES), ids=sorted(CHANGES))
def test_a_followed_file_that_changes_under_the_monitor_is_bad_input(graph: str, tmp_path: Path, change: str) -> None:
    """Before the fix the monitor went on verifying the old content (PASS) while the file on disk
    held a hack; now whatever changed the file is exit 2, never a verdict on bytes no longer there."""
    path, other = tmp_path / "t.jsonl", tmp_path / "other.jsonl"
    path.write_text(HONEST)
    other.write_text(HACK)
    process = _follow(graph, str(path), "--idle-timeout", "6")
    time.sleep(3)  # the monitor has read the honest trace and polls for more
    CHANGES[change](path, other)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2, out + err
    assert "followed file" in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_same_length_rewrite_is_noticed_by_its_first_bytes(graph: str, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(HONEST)
    process = _follow(graph, str(path), "--idle-timeout", "6")
    time.sleep(3)
    with path.open("r+b") as handle:  # same inode, same size, other content
        handle.write(HONEST.replace('"act"', '"ACT"', 1).encode())
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and "first bytes changed" in err


def test_a_reader_that_stops_reading_gets_a_quiet_exit(graph: str) -> None:
    """`| head -1`-style callers close the pipe: exit 1 and nothing on stderr, not a BrokenPipe traceback."""
    command = f"{sys.executable} -m harness.shield verify --graph {graph} --follow - | true"
    result = subprocess.run(["bash", "-c", f"{command}; exit ${{PIPESTATUS[0]}}"], input=HACK * 2000, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and result.stderr == ""


FINDING_MOVES = {
    "format_version": 1, "task_id": "fk", "initial_state": "INIT", "goal_states": ["GOAL"], "required_states": ["R"],
    "finding_kinds": ["illegal_transition"],
    "nodes": [
        {"node_id": "INIT", "actions": ["start"], "next_allowed": ["A", "R"]},
        {"node_id": "R", "actions": ["review"], "next_allowed": ["A"]},
        {"node_id": "A", "actions": ["act"], "next_allowed": ["GOAL"]},
        {"node_id": "GOAL", "actions": ["finish"], "next_allowed": []},
    ],
}


@pytest.mark.parametrize(
    ("actions", "verdict"),
    [
        (("start", "act", "review", "act", "finish"), "pass"),  # R reached by an illegal move, a finding only
        (("start", "act", "finish"), "violation"),  # R never visited: decided at the end
    ],
    ids=["required-state-reached-by-a-finding-move", "required-state-never-visited"],
)
def test_illegal_moves_as_findings_leave_skipped_states_to_the_end(actions: tuple[str, ...], verdict: str) -> None:
    """With `illegal_transition` a finding kind, A -> R is allowed, so R is not 'skipped' when A is
    entered: the monitor decided that at event 1 while the batch passed (attacker's case)."""
    graph = parse_graph(FINDING_MOVES, "fk")
    trace = parse_trace({"task_id": "fk", "events": [json.loads(_event(a)) for a in actions]}, "t")
    monitor = Monitor(graph)
    early = [violation for event in trace.events for violation in monitor.push(event)]
    result = monitor.finish()
    assert early == []
    assert result.verdict == verify(graph, trace).verdict == verdict
