"""Static analysis: each finding kind planted in an otherwise clean graph."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.shield import check_graph, parse_graph


def _planted(data: dict[str, Any], change) -> list:
    data = copy.deepcopy(data)
    change(data)
    return check_graph(parse_graph(data, "planted.json"))


def _node(data: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(node for node in data["nodes"] if node["node_id"] == node_id)


def test_clean_graph_has_no_findings(mini_graph_data: dict[str, Any]) -> None:
    assert _planted(mini_graph_data, lambda data: None) == []


def test_planted_bypass_edge_is_a_hackable_path(mini_graph_data: dict[str, Any]) -> None:
    findings = _planted(mini_graph_data, lambda data: _node(data, "A")["next_allowed"].append("GOAL"))
    hackable = [finding for finding in findings if finding.kind == "hackable_path"]
    assert [finding.path for finding in hackable] == [("A", "GOAL")]
    assert "skips required B" in hackable[0].message and "bypasses the postcondition guard(s) C" in hackable[0].message


def test_bypass_around_a_guard_only(mini_graph_data: dict[str, Any]) -> None:
    findings = _planted(mini_graph_data, lambda data: _node(data, "B")["next_allowed"].append("GOAL"))
    assert [finding.path for finding in findings if finding.kind == "hackable_path"] == [("A", "B", "GOAL")]


PLANTS = [
    ("cel_syntax", lambda data: _node(data, "B").update(invariant="size(results > ")),
    ("unprovided_variable", lambda data: _node(data, "B").update(invariant="secret_flag == true")),
    ("unreachable_node", lambda data: data["nodes"].append({"node_id": "ORPHAN", "next_allowed": ["GOAL"]})),
    ("unreachable_goal", lambda data: (data["goal_states"].append("ISLAND"), data["nodes"].append({"node_id": "ISLAND"}))),
    ("dead_end", lambda data: (data["nodes"].append({"node_id": "TRAP"}), _node(data, "B")["next_allowed"].append("TRAP"))),
]


@pytest.mark.parametrize(("kind", "plant"), PLANTS, ids=[kind for kind, _ in PLANTS])
def test_each_finding_kind(mini_graph_data: dict[str, Any], kind: str, plant) -> None:
    assert kind in {finding.kind for finding in _planted(mini_graph_data, plant)}


def test_agent_scenario_graphs_are_clean() -> None:
    from tasks.agent import SCENARIOS

    for scenario in SCENARIOS.values():
        assert check_graph(scenario.graph()) == [], scenario.name


def _graph(edges: dict[str, list[str]], goals: list[str], *, required: tuple[str, ...] = (), guards: tuple[str, ...] = ()) -> Any:
    nodes = [
        {"node_id": node, "next_allowed": targets, **({"postcondition": "true"} if node in guards else {})}
        for node, targets in edges.items()
    ]
    return parse_graph(
        {"task_id": "g", "initial_state": next(iter(edges)), "goal_states": goals, "required_states": list(required), "nodes": nodes},
        "g.json",
    )


def _hackable(graph) -> list[tuple[str, ...]]:
    return [finding.path for finding in check_graph(graph) if finding.kind == "hackable_path"]


def test_a_goal_leading_into_a_guarded_goal_is_a_route_to_it() -> None:
    # Path enumeration stopped at G1 and never saw INIT -> G1 -> G2, which bypasses G2's guard C.
    graph = _graph({"INIT": ["C", "G1"], "C": ["G2"], "G1": ["G2"], "G2": []}, ["G1", "G2"], guards=("C",))
    assert _hackable(graph) == [("INIT", "G1", "G2")]


def test_a_guard_two_hops_before_the_goal_is_a_guard() -> None:
    graph = _graph({"INIT": ["P", "Y"], "P": ["X"], "X": ["GOAL"], "Y": ["GOAL"], "GOAL": []}, ["GOAL"], guards=("P",))
    findings = [finding for finding in check_graph(graph) if finding.kind == "hackable_path"]
    assert [finding.path for finding in findings] == [("INIT", "Y", "GOAL")]
    assert "bypasses the postcondition guard(s) P of GOAL" in findings[0].message


def test_required_state_skipped_through_a_long_detour_is_found_with_a_shortest_path() -> None:
    chain = {f"N{i}": [f"N{i + 1}"] for i in range(30)}
    chain["N0"].append("R")
    chain["R"] = ["N30"]
    chain["N30"] = []
    # Every route passes R except the 30-hop chain; the counterexample is that chain, found by BFS.
    graph = _graph(chain, ["N30"], required=("R",))
    assert _hackable(graph) == [tuple(f"N{i}" for i in range(31))]


def test_separate_branches_with_their_own_guarded_goals_are_clean() -> None:
    graph = _graph(
        {"INIT": ["CANCEL_CHECK", "MODIFY_CHECK"], "CANCEL_CHECK": ["CANCELLED"], "MODIFY_CHECK": ["MODIFIED"], "CANCELLED": [], "MODIFIED": []},
        ["CANCELLED", "MODIFIED"],
        guards=("CANCEL_CHECK", "MODIFY_CHECK"),
    )
    assert check_graph(graph) == []


def test_a_clique_is_checked_and_its_bypass_reported_once() -> None:
    names = [f"N{i}" for i in range(12)]
    graph = _graph({name: [other for other in names if other != name] for name in names}, ["N11"], required=tuple(names[1:11]))
    findings = [finding for finding in check_graph(graph) if finding.kind == "hackable_path"]
    assert [finding.path for finding in findings] == [("N0", "N11")]
    assert "skips required " + ", ".join(names[1:11]) in findings[0].message


def test_a_large_layered_graph_has_exactly_its_planted_bypass() -> None:
    layers = [[f"L{layer}_{i}" for i in range(10)] for layer in range(30)]
    edges: dict[str, list[str]] = {"INIT": layers[0]}
    for here, there in zip(layers, layers[1:]):
        for node in here:
            edges[node] = ["GATE"] if here is layers[14] else there
    edges["GATE"] = layers[15]
    for node in layers[-1]:
        edges[node] = ["GOAL"]
    edges["GOAL"] = []
    clean = _graph(edges, ["GOAL"], required=("GATE",))
    assert check_graph(clean) == []
    edges["L3_0"] = [*edges["L3_0"], "L20_0"]  # one edge around the gate
    findings = [finding for finding in check_graph(_graph(edges, ["GOAL"], required=("GATE",))) if finding.kind == "hackable_path"]
    assert len(findings) == 1 and findings[0].path[:6] == ("INIT", "L0_0", "L1_0", "L2_0", "L3_0", "L20_0")


def test_a_cut_off_search_is_a_finding_of_its_own(mini_graph_data: dict[str, Any]) -> None:
    _node(mini_graph_data, "A")["next_allowed"].append("GOAL")
    graph = parse_graph(mini_graph_data, "planted.json")
    findings = check_graph(graph, search_budget=0)
    assert [(finding.kind, finding.message) for finding in findings] == [
        ("analysis_incomplete", "the hackable-path analysis ran out of its budget of 0 steps in the dominator tree")
    ]
    # Enough for the dominators (two passes over 5 predecessor lists) but not for the searches.
    [late] = check_graph(graph, search_budget=12)
    assert late.kind == "analysis_incomplete" and late.message.endswith("not decided or shown for: B, C")  # the required state B, then the guard C


def _goal_chain(length: int, guards: bool) -> Any:
    names = [f"G{i}" for i in range(length)]
    nodes = [
        {"node_id": name, "is_goal": i > 0, "next_allowed": names[i + 1 : i + 2], **({"postcondition": "true"} if guards and i > 0 else {})}
        for i, name in enumerate(names)
    ]
    return parse_graph({"task_id": "chain", "initial_state": "G0", "goal_states": [names[-1]], "nodes": nodes}, "chain.json")


@pytest.mark.parametrize("guards", [False, True], ids=["goals", "guarded_goals"])
def test_a_10000_node_chain_of_goals_is_one_pass_over_the_dominator_tree(guards: bool) -> None:
    """A dominator set per goal and a reverse search per goal made this quadratic in time and memory
    (MemoryError at 10,000); every guard dominates the goals after it, so the chain is clean."""
    assert check_graph(_goal_chain(10_000, guards)) == []


def test_a_bypass_in_a_long_chain_is_found_and_a_tiny_budget_ends_in_analysis_incomplete() -> None:
    data = _goal_chain(2_000, True).model_dump(mode="json")
    data["nodes"][0]["next_allowed"] = ["G1", "G1999"]  # around every guard in between
    planted = parse_graph(data, "chain.json")
    [found] = check_graph(planted)
    assert (found.kind, found.path) == ("hackable_path", ("G0", "G1999"))
    assert found.message.startswith("G0 -> G1999 bypasses the postcondition guard(s) G1, G10, G100, ")
    [incomplete] = check_graph(planted, search_budget=1_000)
    assert incomplete.kind == "analysis_incomplete"


def test_a_tool_schema_that_does_not_compile_is_a_finding(mini_graph_data: dict[str, Any]) -> None:
    mini_graph_data["tools"]["search"]["input_schema"] = {"type": "object", "properties": []}
    assert [finding.kind for finding in check_graph(parse_graph(mini_graph_data, "g.json"))] == ["invalid_schema"]


BAD_PATTERNS = [
    ("unbalanced", "^(u[0-9]{4}$"),
    ("python_inline_flag", "(?i)^u[0-9]{4}$"),
    ("python_anchor", "\\Au[0-9]{4}\\Z"),
    ("lookahead", "^(?=u)u[0-9]{4}$"),
    ("backreference", "^(u)\\1[0-9]{4}$"),
]


@pytest.mark.parametrize("pattern", [case[1] for case in BAD_PATTERNS], ids=[case[0] for case in BAD_PATTERNS])
def test_a_tool_pattern_that_is_not_ecma_262_is_a_finding(mini_graph_data: dict[str, Any], pattern: str) -> None:
    mini_graph_data["tools"]["search"]["input_schema"]["properties"]["user_id"]["pattern"] = pattern
    findings = check_graph(parse_graph(mini_graph_data, "g.json"))
    assert [finding.kind for finding in findings] == ["invalid_schema"]
    assert findings[0].message.startswith("tool search: invalid input_schema: pattern at properties.user_id.pattern is refused")
