"""Fixtures for the shield tests: a small graph A -> B -> C -> GOAL with facts-checked invariants,
an honest trace over it, and the facts that make that trace pass."""

from __future__ import annotations

from typing import Any

import pytest

from harness.shield import StateGraph, parse_graph


def graph_data() -> dict[str, Any]:
    return {
        "format_version": 1,
        "task_id": "mini",
        "initial_state": "A",
        "goal_states": ["GOAL"],
        "required_states": ["B"],
        "global_invariants": ["history.max_repeat <= 2"],
        "context_variables": ["chosen"],
        "tools": {
            "search": {
                "input_schema": {
                    "type": "object",
                    "required": ["user_id"],
                    "properties": {"user_id": {"type": "string", "pattern": "^u[0-9]{4}$"}},
                },
                "provides": {"results": "items"},
            }
        },
        "action_map": {"search": "do_search"},
        "facts": {"variables": ["paid", "results"]},
        "nodes": [
            {"node_id": "A", "actions": ["start"], "next_allowed": ["B"]},
            {"node_id": "B", "invariant": "size(results) > 0", "actions": ["do_search"], "next_allowed": ["C"]},
            {"node_id": "C", "invariant": "chosen in results", "postcondition": "paid == true", "actions": ["choose"], "next_allowed": ["GOAL"]},
            {"node_id": "GOAL", "is_goal": True, "invariant": "paid == true", "actions": ["finish"], "next_allowed": []},
        ],
    }


@pytest.fixture()
def mini_graph_data() -> dict[str, Any]:
    return graph_data()


@pytest.fixture()
def mini_graph() -> StateGraph:
    return parse_graph(graph_data(), "mini.json")


@pytest.fixture()
def honest_trace_data() -> dict[str, Any]:
    return {"task_id": "mini", "reward": 0.9, "events": honest_events()}


@pytest.fixture()
def honest_facts() -> dict[str, Any]:
    return dict(HONEST_FACTS)


def search(user: str = "u0001", items: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"event_type": "tool_call", "tool_name": "search", "tool_input": {"user_id": user}, "tool_output": {"items": items or ["x", "y"]}, **extra}


def step(action: str, **extra: Any) -> dict[str, Any]:
    return {"event_type": "agent_message", "action": action, **extra}


def honest_events() -> list[dict[str, Any]]:
    return [step("start"), search(), step("choose", context={"chosen": "x"}), step("finish")]


HONEST_FACTS = {"paid": True, "results": ["x", "y"]}
