"""The deterministic semantic parser: derive each event's `state_before`/`state_after`.

What the tools did outranks what the trace says it did. A `tool_call` whose tool is in the graph's
`action_map` performs that tool's action, whatever its `action`, `state_before` or `state_after`
fields claim; a disagreeing claim is reported (`action_mismatch`, `state_mismatch`), never followed.
`tool_name` on any other event type moves nothing (intake still checks its input). Other events
perform their `action`. The state after an event is:

1. for a mapped tool call, a node performing the tool's action: the recorded `state_after` when that
   node performs it (several nodes may), else the derived one below;
2. for other events, the recorded `state_after` when there is one;
3. the current state, when the event has no action or the current node itself performs it
   (a repeated search stays in the search node);
4. else the first node in `next_allowed` of the current state that performs the action;
5. else the first node anywhere that performs it, so that path legality reports the illegal jump;
6. an action no node performs stays put and is reported as `unmapped_action`.

A step without its tool event is `missing_tool_call`: an event other than the tool's call performing
an action the `action_map` gives to a tool, or entering a node whose actions are all tools' actions.

An LLM-based step labeller for free-text steps sits in front of this one (`step_labels.annotate`
fills `action`); what it labels is held to the same rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.shield.compiled import CompiledGraph
from harness.shield.trace import TraceEvent

StatePair = tuple[str, str]


@dataclass(frozen=True)
class PathFinding:
    """A disagreement the parser found between an event and what its tool or the graph allows."""

    kind: str  # unmapped_action | state_mismatch | action_mismatch | missing_tool_call
    message: str
    index: int
    node: str | None = None


@dataclass(frozen=True)
class Derivation:
    states: list[StatePair] = field(default_factory=list)
    findings: list[PathFinding] = field(default_factory=list)


def mapped_tool(graph: CompiledGraph, event: TraceEvent) -> str | None:
    """The tool a `tool_call` event called, when the `action_map` gives it an action."""
    if event.event_type == "tool_call" and event.tool_name in graph.graph.action_map:
        return event.tool_name
    return None


def event_action(graph: CompiledGraph, event: TraceEvent) -> str | None:
    """The action an event performs: its tool's mapped action for a tool call, else its `action`."""
    tool = mapped_tool(graph, event)
    return graph.graph.action_map[tool] if tool is not None else event.action


def _derived(graph: CompiledGraph, before: str, action: str | None) -> str:
    if action is None:
        return before
    performers = graph.action_nodes.get(action, ())
    if before in performers or not performers:
        return before
    node = graph.nodes.get(before)
    allowed = node.next_allowed if node is not None else frozenset()
    return next((state for state in performers if state in allowed), performers[0])


def _performs(graph: CompiledGraph, state: str, action: str | None) -> bool:
    node = graph.nodes.get(state)
    return node is not None and action in node.node.actions


class Deriver:
    """The parser one event at a time (what `derive_states` loops over, and what the online
    `Monitor` feeds as events arrive): the current state, the pairs so far and the findings."""

    def __init__(self, graph: CompiledGraph) -> None:
        self.graph = graph
        self.current = graph.graph.initial_state
        self.result = Derivation()

    def step(self, index: int, event: TraceEvent) -> StatePair:
        graph, findings, current = self.graph, self.result.findings, self.current
        action_map = graph.graph.action_map
        tool = event.tool_name if event.event_type == "tool_call" and event.tool_name in action_map else None
        action = action_map[tool] if tool is not None else event.action
        if tool is not None and event.action is not None and event.action != action:
            findings.append(PathFinding("action_mismatch", f"{tool} performs {action!r}, but the event says {event.action!r}", index))
        if event.state_before is not None and event.state_before != current:
            findings.append(
                PathFinding("state_mismatch", f"event claims state {event.state_before!r} but the path is at {current!r}", index, event.state_before)
            )
        if action is not None and action not in graph.action_nodes:
            findings.append(PathFinding("unmapped_action", f"no node performs action {action!r}", index))
        before = current
        after = _derived(graph, before, action)
        claimed = event.state_after
        if claimed is not None and claimed != after:
            if tool is not None and not _performs(graph, claimed, action):
                findings.append(
                    PathFinding("action_mismatch", f"{tool} performs {action!r}, which {claimed!r} (the event's state_after) does not", index, claimed)
                )
            else:
                if tool is None and action is not None and claimed in graph.nodes and not _performs(graph, claimed, action):
                    findings.append(PathFinding("action_mismatch", f"state {claimed!r} does not perform the event's action {action!r}", index, claimed))
                after = claimed
        tools = graph.tool_actions.get(action) if action is not None and tool is None else None
        if tools:
            findings.append(
                PathFinding("missing_tool_call", f"action {action!r} belongs to {', '.join(sorted(tools))}, which this event did not call", index, after)
            )
        elif after != before and after in graph.tool_only_nodes and not _performs(graph, after, action):
            findings.append(PathFinding("missing_tool_call", f"entered {after!r}, which only its tools' calls may enter, without one", index, after))
        self.result.states.append((before, after))
        self.current = after
        return before, after


def derive_states(graph: CompiledGraph, events: Sequence[TraceEvent]) -> Derivation:
    """The state pairs of `events` and every disagreement between an event and its tool."""
    deriver = Deriver(graph)
    for index, event in enumerate(events):
        deriver.step(index, event)
    return deriver.result
