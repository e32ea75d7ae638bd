"""`verify --dynamic` and `extend`: an unforeseen but clean move is a review finding with a patch; a
move around a required state or guard, or one after which a check fails, stays a violation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.shield import parse_graph, parse_trace, verify
from harness.shield.dynamic import verify_dynamic, weakened, with_transitions

GRAPH: dict[str, Any] = {
    "task_id": "dyn",
    "initial_state": "START",
    "goal_states": ["G"],
    "required_states": ["R"],
    "nodes": [
        {"node_id": "START", "next_allowed": ["A"]},
        {"node_id": "A", "actions": ["a"], "next_allowed": ["R"]},
        {"node_id": "R", "actions": ["r"], "next_allowed": ["B"]},
        {"node_id": "B", "actions": ["b"], "invariant": "event.index < 6", "next_allowed": ["P"]},
        {"node_id": "P", "actions": ["p"], "postcondition": "event.index >= 0", "next_allowed": ["G"]},
        {"node_id": "G", "actions": ["g"], "next_allowed": []},
    ],
}


def _trace(*actions: str) -> Any:
    return parse_trace({"task_id": "dyn", "reward": 1.0, "events": [{"event_type": "agent_message", "action": a} for a in actions]}, "t")


def _dynamic(*actions: str) -> Any:
    graph, trace = parse_graph(GRAPH, "g"), _trace(*actions)
    return verify_dynamic(graph, trace, lambda g: verify(g, trace))


# Each case: the trace's actions, what --dynamic makes of it (findings or the kinds that stay).
CASES = {
    # B -> R is new; R still dominates G and the guard P still does: a finding, nothing else.
    "legitimate-loop-back": (("a", "r", "b", "r", "b", "p", "g"), [("B", "R", 3)], []),
    # A -> B goes around the required R: allowed, G could be reached without R. The trace visits R
    # later (B -> R), but the patch would weaken the graph, so both moves stay violations.
    "planted-around-required": (("a", "b", "r", "b", "p", "g"), [], ["illegal_transition", "illegal_transition"]),
    # B -> G skips the guard P on the way to the goal: the guard no longer dominates G.
    "around-a-guard": (("a", "r", "b", "g"), [], ["illegal_transition"]),
    # A clean-looking loop, but B's invariant fails once the move is allowed (B reached at event 6).
    "invariant-fails-after": (("a", "r", "b", "r", "b", "r", "b", "p", "g"), [], ["illegal_transition", "illegal_transition"]),
    # A missing move beside another violation (the goal is never reached) stays a violation.
    "with-another-violation": (("a", "r", "b", "r"), [], ["goal_not_reached", "illegal_transition"]),
    # A clean trace has nothing to propose.
    "clean": (("a", "r", "b", "p", "g"), [], []),
}


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_dynamic_verdicts(case: str) -> None:
    actions, findings, kinds = CASES[case]
    result = _dynamic(*actions)
    assert [(f.source, f.target, f.event_index) for f in result.findings] == findings
    assert sorted(v.kind for v in result.report.violations) == kinds
    assert result.report.verdict == ("violation" if kinds else "pass")
    assert result.report.compliance == (0.0 if kinds else 1.0)


def test_weakened_names_what_a_patch_lets_a_route_skip() -> None:
    graph = parse_graph(GRAPH, "g")
    assert weakened(graph, with_transitions(graph, [("B", "R")])) == []
    assert weakened(graph, with_transitions(graph, [("A", "B")])) == ["R before G"]
    assert weakened(graph, with_transitions(graph, [("B", "G")])) == ["P before G"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.shield", *args], capture_output=True, text=True, timeout=60)


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"graph": tmp_path / "g.json", "legit": tmp_path / "legit.json", "planted": tmp_path / "planted.json"}
    paths["graph"].write_text(json.dumps(GRAPH))
    for name, actions in (("legit", CASES["legitimate-loop-back"][0]), ("planted", CASES["planted-around-required"][0])):
        paths[name].write_text(json.dumps({"task_id": "dyn", "events": [{"event_type": "agent_message", "action": a} for a in actions]}))
    return paths


def test_cli_dynamic_lists_the_finding_exits_0_and_extend_applies_the_accepted_patch(files: dict[str, Path], tmp_path: Path) -> None:
    graph, legit = str(files["graph"]), str(files["legit"])
    assert _cli("verify", "--graph", graph, "--trace", legit).returncode == 1
    patches = tmp_path / "patches.json"
    result = _cli("verify", "--graph", graph, "--trace", legit, "--dynamic", "--patches-out", str(patches))
    assert result.returncode == 0, result.stderr
    assert "PASS" in result.stdout and "~ review/unexpected_transition [event 3]: B -> R" in result.stdout
    proposal = json.loads(patches.read_text())
    assert proposal["patches"] == [{"op": "add_transition", "from": "B", "to": "R", "support": 1, "traces": [legit], "accepted": False}]
    out = tmp_path / "extended.json"
    unaccepted = _cli("extend", "--graph", graph, "--patches", str(patches), "--out", str(out))
    assert unaccepted.returncode == 0 and "0 accepted patches" in unaccepted.stdout and "clean" in unaccepted.stdout
    proposal["patches"][0]["accepted"] = True
    patches.write_text(json.dumps(proposal))
    out.unlink()
    applied = _cli("extend", "--graph", graph, "--patches", str(patches), "--out", str(out))
    assert applied.returncode == 0 and "1 accepted patches applied" in applied.stdout
    assert _cli("verify", "--graph", str(out), "--trace", legit).returncode == 0
    assert json.loads(out.read_text())["required_states"] == ["R"]


def test_cli_planted_illegitimate_transition_stays_a_violation(files: dict[str, Path]) -> None:
    result = _cli("verify", "--graph", str(files["graph"]), "--trace", str(files["planted"]), "--dynamic", "--format", "json")
    assert result.returncode == 1
    line = json.loads(result.stdout)
    assert line["findings"] == [] and [v["kind"] for v in line["report"]["violations"]] == ["illegal_transition", "illegal_transition"]


def _patches(**patch: Any) -> dict[str, Any]:
    return {"format_version": 1, "task_id": "dyn", "patches": [{"op": "add_transition", "accepted": True, **patch}]}


BAD_PATCHES = {
    "weakens": (_patches(**{"from": "A", "to": "B"}), "would let a route skip R before G"),
    "unknown-node": (_patches(**{"from": "A", "to": "Z"}), "node 'Z' is not in the graph"),
    "other-op": (_patches(**{"from": "A", "to": "B", "op": "remove_required"}), "invalid patches"),
    "extra-field": (_patches(**{"from": "A", "to": "B", "invariant": "true"}), "invalid patches"),
    "other-task": ({**_patches(**{"from": "B", "to": "R"}), "task_id": "x"}, "patches are for task 'x'"),
}


@pytest.mark.parametrize("case", sorted(BAD_PATCHES), ids=sorted(BAD_PATCHES))
def test_extend_refuses_bad_patches(files: dict[str, Path], tmp_path: Path, case: str) -> None:
    data, message = BAD_PATCHES[case]
    patches = tmp_path / "p.json"
    patches.write_text(json.dumps(data))
    result = _cli("extend", "--graph", str(files["graph"]), "--patches", str(patches), "--out", str(tmp_path / "out.json"))
    assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "out.json").exists()


def test_extend_never_overwrites(files: dict[str, Path], tmp_path: Path) -> None:
    patches = tmp_path / "p.json"
    patches.write_text(json.dumps(_patches(**{"from": "B", "to": "R"})))
    result = _cli("extend", "--graph", str(files["graph"]), "--patches", str(patches), "--out", str(files["graph"]))
    assert result.returncode == 2 and "exists" in result.stderr


def _payment(*routes: dict[str, Any]) -> dict[str, Any]:
    """INIT -> each guarded payment route -> BOOKED; the planted move under test is INIT -> BOOKED."""
    return {
        "task_id": "pay",
        "initial_state": "INIT",
        "goal_states": ["BOOKED"],
        "facts": {"variables": ["paid"], "types": {"paid": "bool"}},
        "nodes": [
            {"node_id": "INIT", "actions": ["start"], "next_allowed": [route["node_id"] for route in routes]},
            *({"actions": [f"pay_{index}"], "next_allowed": ["BOOKED"], **route} for index, route in enumerate(routes)),
            {"node_id": "BOOKED", "actions": ["book"], "next_allowed": []},
        ],
    }


# Graphs whose only guards the red team walked around with --dynamic (INIT -> BOOKED, paid false).
GUARD_BYPASSES = {
    "invariant-guard": (_payment({"node_id": "PAY", "invariant": "paid == true"}), ["every guard before BOOKED", "PAY before BOOKED"]),
    "precondition-guard": (_payment({"node_id": "PAY", "precondition": "paid == true"}), ["every guard before BOOKED", "PAY before BOOKED"]),
    # Two routes, each with a postcondition: neither dominates BOOKED, together they cut it off.
    "two-guarded-routes": (
        _payment({"node_id": "CARD", "postcondition": "paid == true"}, {"node_id": "CASH", "postcondition": "paid == true"}),
        ["every guard before BOOKED"],
    ),
}


@pytest.mark.parametrize("case", sorted(GUARD_BYPASSES), ids=sorted(GUARD_BYPASSES))
def test_a_move_past_every_guard_stays_a_violation(case: str) -> None:
    data, lost = GUARD_BYPASSES[case]
    graph = parse_graph(data, "g")
    assert weakened(graph, with_transitions(graph, [("INIT", "BOOKED")])) == lost
    trace = parse_trace({"task_id": "pay", "reward": 1.0, "events": [{"event_type": "agent_message", "action": a} for a in ("start", "book")]}, "t")
    result = verify_dynamic(graph, trace, lambda g: verify(g, trace, {"paid": False}))
    assert result.findings == () and [v.kind for v in result.report.violations] == ["illegal_transition"]


def test_a_guard_bypass_between_guards_is_refused_by_dominance_alone() -> None:
    """START -> A -> R -> B -> P -> G; A -> P leaves guards on the route (P), but R no longer dominates G."""
    graph = parse_graph(GRAPH, "g")
    assert weakened(graph, with_transitions(graph, [("A", "P")])) == ["B before G", "R before G"]


def _ladder(size: int) -> dict[str, Any]:
    """A chain N1..Nsize, every node also -> GOAL: the dominator analysis runs out of its budget."""
    names = [f"N{index}" for index in range(1, size + 1)]
    return {
        "task_id": "ladder",
        "initial_state": "INIT",
        "goal_states": ["GOAL"],
        "nodes": [
            {"node_id": "INIT", "actions": ["start"], "next_allowed": ["N1", "GOAL"]},
            *({"node_id": name, "actions": [f"a{index + 1}"], "next_allowed": [*names[index + 1 : index + 2], "GOAL"]} for index, name in enumerate(names)),
            {"node_id": "GOAL", "actions": ["finish"], "next_allowed": []},
        ],
    }


def test_an_exhausted_analysis_refuses_the_patch_with_exit_2_not_a_traceback(tmp_path: Path) -> None:
    """The red team's 2,500-rung ladder: `_Exhausted` escaped `verify --dynamic` and `extend` as a
    traceback and exit 1. Undecided is refused: the move stays a violation, extend exits 2."""
    graph = tmp_path / "ladder.json"
    graph.write_text(json.dumps(_ladder(2500)))
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps({"task_id": "ladder", "events": [{"event_type": "agent_message", "action": a} for a in ("start", "a2", "finish")]}))
    verified = _cli("verify", "--graph", str(graph), "--trace", str(trace), "--dynamic")
    assert verified.returncode == 1 and "illegal_transition" in verified.stdout and "unexpected_transition" not in verified.stdout
    patches = tmp_path / "p.json"
    patches.write_text(json.dumps(_patches(**{"from": "INIT", "to": "N2", "accepted": True}) | {"task_id": "ladder"}))
    extended = _cli("extend", "--graph", str(graph), "--patches", str(patches), "--out", str(tmp_path / "out.json"))
    assert extended.returncode == 2 and "undecided: the dominator analysis ran past its budget" in extended.stderr
    assert extended.stderr.count("\n") == 1 and not (tmp_path / "out.json").exists()
