"""Stage 2, path legality: the trace walks the graph from the initial state to a goal, in order.

Checks: what the parser found (claims that disagree with the tools, steps without their tool event,
actions no node performs), states the graph does not have, moves outside `next_allowed` (staying
put is always allowed), the order the trace itself records (`event_order`), and at the end that the
path sits in a goal state and visited every required state. Everything found here is procedural.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone

from harness.shield.compiled import CompiledGraph
from harness.shield.parser import Derivation
from harness.shield.report import Violation
from harness.shield.trace import TraceEvent


def _violation(kind: str, message: str, node: str | None = None, index: int | None = None) -> Violation:
    return Violation(stage="path", kind=kind, message=message, node=node, event_index=index)


def _instant(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


class OrderWalk:
    """`event_order` one event at a time: agent steps that do not increase, timestamps that go back
    or cannot be read, and a stamped event repeated verbatim (a duplicated write replays the write)."""

    def __init__(self) -> None:
        self.last_step: tuple[int, int] | None = None
        self.last_time: tuple[datetime, int] | None = None
        self.seen: dict[str, int] = {}

    def step(self, index: int, event: TraceEvent) -> list[Violation]:
        violations: list[Violation] = []
        last_step, last_time = self.last_step, self.last_time
        if event.agent_step is not None:
            if last_step is not None and event.agent_step <= last_step[0]:
                violations.append(
                    _violation("event_order", f"agent_step {event.agent_step} does not follow step {last_step[0]} of event {last_step[1]}", index=index)
                )
            self.last_step = (event.agent_step, index)
        if event.timestamp is not None:
            moment = _instant(event.timestamp)
            if moment is None:
                violations.append(_violation("event_order", f"timestamp {event.timestamp!r} is not ISO 8601", index=index))
            else:
                if last_time is not None and moment < last_time[0]:
                    violations.append(
                        _violation("event_order", f"timestamp {event.timestamp} is before that of event {last_time[1]}", index=index)
                    )
                self.last_time = (moment, index)
        if event.agent_step is not None or event.timestamp is not None:
            key = json.dumps(event.model_dump(mode="json"), sort_keys=True)
            if key in self.seen:
                violations.append(_violation("event_order", f"event {index} repeats event {self.seen[key]} verbatim", index=index))
            else:
                self.seen[key] = index
        return violations


def check_order(events: Sequence[TraceEvent]) -> list[Violation]:
    """Every `event_order` violation of `events` (see `OrderWalk`)."""
    walk = OrderWalk()
    return [violation for index, event in enumerate(events) for violation in walk.step(index, event)]


class PathWalk:
    """Transitions one state pair at a time, then the end-of-path checks (goal, required states)."""

    def __init__(self, graph: CompiledGraph) -> None:
        self.graph = graph
        self.current = graph.graph.initial_state
        self.visited = {self.current}

    def step(self, index: int, before: str, after: str) -> list[Violation]:
        nodes = self.graph.nodes
        self.visited.add(after)
        self.current = after
        if after not in nodes:
            return [_violation("unknown_state", f"state {after!r} is not in the graph", after, index)]
        if after != before and before in nodes and after not in nodes[before].next_allowed:
            return [_violation("illegal_transition", f"{before} -> {after} is not in next_allowed of {before}", after, index)]
        return []

    def finish(self) -> list[Violation]:
        violations = []
        if self.current not in self.graph.goals:
            violations.append(_violation("goal_not_reached", f"trace ends in {self.current!r}, not a goal state", self.current))
        for state in self.graph.graph.required_states:
            if state not in self.visited:
                violations.append(_violation("required_state_skipped", f"required state {state!r} was never visited", state))
        return violations


def check_path(graph: CompiledGraph, derivation: Derivation, events: Sequence[TraceEvent]) -> list[Violation]:
    violations = [_violation(found.kind, found.message, found.node, found.index) for found in derivation.findings]
    walk = PathWalk(graph)
    for index, (before, after) in enumerate(derivation.states):
        violations += walk.step(index, before, after)
    violations += check_order(events)
    return violations + walk.finish()
