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
