"""Stage 2, path legality: the trace walks the graph from the initial state to a goal.

Checks, in order of the walk: each event starts where the path is (`state_mismatch` otherwise),
names known states, moves only along `next_allowed` (staying put is always allowed); at the end the
path sits in a goal state and has visited every required state.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.shield.compiled import CompiledGraph
from harness.shield.parser import StatePair
from harness.shield.report import Violation


def _violation(kind: str, message: str, node: str | None = None, index: int | None = None) -> Violation:
    return Violation(stage="path", kind=kind, message=message, node=node, event_index=index)  # type: ignore[arg-type]


def check_path(
    graph: CompiledGraph, states: Sequence[StatePair], unmapped: Sequence[tuple[int, str]]
) -> list[Violation]:
    violations = [
        _violation("unmapped_action", f"no node performs action {action!r}", index=index) for index, action in unmapped
    ]
    nodes = graph.nodes
    current = graph.graph.initial_state
    visited = {current}
    for index, (before, after) in enumerate(states):
        if before != current:
            violations.append(
                _violation("state_mismatch", f"event claims state {before!r} but the path is at {current!r}", before, index)
            )
        for state in (before, after):
            if state not in nodes:
                violations.append(_violation("unknown_state", f"state {state!r} is not in the graph", state, index))
        if after != before and before in nodes and after not in nodes[before].next_allowed:
            violations.append(
                _violation("illegal_transition", f"{before} -> {after} is not in next_allowed of {before}", after, index)
            )
        visited.add(before)
        visited.add(after)
        current = after
    if current not in graph.goals:
        violations.append(_violation("goal_not_reached", f"trace ends in {current!r}, not a goal state", current))
    for state in graph.graph.required_states:
        if state not in visited:
            violations.append(_violation("required_state_skipped", f"required state {state!r} was never visited", state))
    return violations
