"""Stage 3, invariants: CEL checks against the environment's facts, walking the trace's states.

Variables come from three sources, in order of trust:
1. facts (the environment's end-of-run state: a JSON facts file or SQLite named queries);
2. recorded tool outputs, through each tool's `provides` (`search_result` <- `flights` of the output);
3. the agent's reported `context`, accumulated over events, used only for variables 1 and 2 lack.
A reported value that disagrees with 1 or 2 is a `fabricated_state` violation. Two variables are
built in: `event` (the current event: `index`, `event_type`, `tool_name`, `tool_input`,
`tool_output`, `action`, `state`, `content`) and `history` (`calls`, `distinct_calls`,
`max_repeat` (most identical calls of one tool with one input), `tool_counts`).

When each check runs: on a transition A -> B, A's postcondition and B's precondition against the
state before the event; after every event, the current node's invariant and the global invariants;
at the end, the final node's postcondition. Each failing (kind, node, expression) is reported once,
at its first event, with the values of the variables it read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.shield.compiled import CompiledGraph
from harness.shield.expressions import Expression, Scope
from harness.shield.parser import StatePair, event_action
from harness.shield.report import Violation
from harness.shield.trace import Trace, TraceEvent

_MISSING = object()


def _dig(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _frozen(value: Any) -> Any:
    """A hashable, order-independent key for a JSON value (cheaper than canonical JSON)."""
    if isinstance(value, dict):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    return value


class _History:
    """Call statistics for the `history` variable; only the fields some expression reads are bound,
    because converting a map into CEL costs microseconds per entry."""

    __slots__ = ("calls", "counts", "tool_counts", "max_repeat", "fields")

    def __init__(self, fields: frozenset[str]) -> None:
        self.fields = fields
        self.calls = 0
        self.counts: dict[Any, int] = {}
        self.tool_counts: dict[str, int] = {}
        self.max_repeat = 0

    def record(self, event: TraceEvent) -> None:
        name = event.tool_name or ""
        key = (name, _frozen(event.tool_input))
        count = self.counts.get(key, 0) + 1
        self.counts[key] = count
        self.calls += 1
        self.tool_counts[name] = self.tool_counts.get(name, 0) + 1
        self.max_repeat = max(self.max_repeat, count)

    def value(self) -> dict[str, Any]:
        full = {
            "calls": self.calls,
            "distinct_calls": len(self.counts),
            "max_repeat": self.max_repeat,
            "tool_counts": self.tool_counts,
        }
        return {name: (dict(value) if isinstance(value, dict) else value) for name, value in full.items() if name in self.fields}


class _Checker:
    """Runs expressions in one scope and collects first failures."""

    def __init__(self, named_kinds: Mapping[str, str]) -> None:
        self.scope = Scope()
        self._named_kinds = named_kinds
        self.violations: list[Violation] = []
        self._reported: set[tuple[str, str | None, str]] = set()

    def run(self, kind: str, expressions: Sequence[Expression], node: str | None, index: int | None) -> None:
        for expression in expressions:
            holds, error = self.scope.evaluate(expression)
            if holds:
                continue
            failed = self._named_kinds.get(expression.source, kind)
            key = (failed if error is None else "invariant_error", node, expression.source)
            if key in self._reported:
                continue
            self._reported.add(key)
            where = f"at {node}" if node else "globally"
            message = f"{expression.source!r} {'is false' if error is None else error} {where}"
            self.violations.append(
                Violation(
                    stage="invariants",
                    kind=key[0],  # type: ignore[arg-type]
                    message=message,
                    node=node,
                    expression=expression.source,
                    event_index=index,
                    values=self.scope.values_for(expression.variables),
                )
            )

    def fabricated(self, name: str, reported: Any, actual: Any, node: str, index: int, source: str) -> None:
        key = ("fabricated_state", node, name)
        if key in self._reported:
            return
        self._reported.add(key)
        self.violations.append(
            Violation(
                stage="invariants",
                kind="fabricated_state",
                message=f"reported {name}={reported!r} but the {source} says {actual!r}",
                node=node,
                event_index=index,
                values={name: {"reported": reported, "actual": actual}},
            )
        )


def check_invariants(
    graph: CompiledGraph, trace: Trace, states: Sequence[StatePair], facts: Mapping[str, Any]
) -> list[Violation]:
    checker = _Checker(graph.graph.invariant_kinds)
    scope = checker.scope
    scope.update(dict(facts))
    environment: dict[str, tuple[Any, str]] = {name: (value, "environment") for name, value in facts.items()}
    wants_event = "event" in graph.referenced
    wants_history = "history" in graph.referenced
    history = _History(graph.history_fields)
    if wants_history:
        scope.set("history", history.value())
    tools = graph.graph.tools
    nodes = graph.nodes
    empty: tuple[Expression, ...] = ()

    for index, event in enumerate(trace.events):
        before, after = states[index]
        if after != before:
            left, entered = nodes.get(before), nodes.get(after)
            checker.run("postcondition_failed", left.postcondition if left else empty, before, index)
            checker.run("precondition_failed", entered.precondition if entered else empty, after, index)
        if event.event_type == "tool_call":
            spec = tools.get(event.tool_name or "")
            for name, dotted in (spec.provides.items() if spec else ()):
                value = _dig(event.tool_output, dotted)
                if value is _MISSING:
                    continue
                known = environment.get(name)
                if known is not None and known[1] == "environment" and known[0] != value:
                    checker.fabricated(name, value, known[0], after, index, "environment (recorded tool output)")
                    continue
                environment[name] = (value, f"recorded output of {event.tool_name}")
                scope.set(name, value)
            if wants_history:
                history.record(event)
                scope.set("history", history.value())
        for name, value in event.context.items():
            known = environment.get(name)
            if known is not None:
                if known[0] != value:
                    checker.fabricated(name, value, known[0], after, index, known[1])
                continue
            if name not in scope or scope.get(name) != value:
                scope.set(name, value)
        if wants_event:
            scope.set(
                "event",
                {
                    "index": index,
                    "event_type": event.event_type,
                    "tool_name": event.tool_name,
                    "tool_input": event.tool_input,
                    "tool_output": event.tool_output,
                    "action": event_action(graph, event),
                    "state": after,
                    "content": event.content,
                },
            )
        node = nodes.get(after)
        if node is not None:
            checker.run("invariant_failed", node.invariant, after, index)
        checker.run("global_invariant_failed", graph.global_invariants, None, index)

    final = states[-1][1] if states else graph.graph.initial_state
    final_node = nodes.get(final)
    if final_node is not None:
        checker.run("postcondition_failed", final_node.postcondition, final, len(trace.events) - 1 if states else None)
    return checker.violations
