"""The deterministic semantic parser: derive each event's `state_before`/`state_after`.

Traces recorded by a tool wrapper often carry only what happened (`tool_name`, or an `action` for a
message) and not where in the graph it happened. The event's action is `event.action`, else
`action_map[tool_name]`. The state after it is:

1. the state the event records, when it records one;
2. the current state, when the event has no action (a user message moves nothing) or the current
   node itself performs the action (a repeated search stays in the search node);
3. else the first node in `next_allowed` of the current state that performs the action;
4. else the first node anywhere that performs it, so that path legality reports the illegal jump;
5. an action no node performs stays put and is reported as `unmapped_action`.

An LLM-based parser for free-text steps would sit behind the same function signature; it is not
shipped because it must be measured on a labelled set with a real model before it can be trusted.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.shield.compiled import CompiledGraph
from harness.shield.trace import TraceEvent

StatePair = tuple[str, str]


def event_action(graph: CompiledGraph, event: TraceEvent) -> str | None:
    if event.action is not None:
        return event.action
    if event.tool_name is not None:
        return graph.graph.action_map.get(event.tool_name)
    return None


def derive_states(graph: CompiledGraph, events: Sequence[TraceEvent]) -> tuple[list[StatePair], list[tuple[int, str]]]:
    """(state pairs per event, [(event index, action) for actions no node performs])."""
    current = graph.graph.initial_state
    pairs: list[StatePair] = []
    unmapped: list[tuple[int, str]] = []
    for index, event in enumerate(events):
        before = event.state_before if event.state_before is not None else current
        after = event.state_after
        if after is None:
            action = event_action(graph, event)
            performers = graph.action_nodes.get(action, ()) if action is not None else ()
            if action is None or before in performers:
                after = before
            elif not performers:
                unmapped.append((index, action))
                after = before
            else:
                node = graph.nodes.get(before)
                allowed = node.next_allowed if node is not None else frozenset()
                after = next((state for state in performers if state in allowed), performers[0])
        pairs.append((before, after))
        current = after
    return pairs, unmapped
