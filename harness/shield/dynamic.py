"""Dynamic graphs (BenchShield §9.1): a legitimate path the graph did not foresee is a finding for
review, with a proposed patch, instead of a failed trace.

`verify_dynamic` verifies a trace as usual. When the only problems are moves the graph lacks
(`illegal_transition`), it verifies the trace again against the graph with those moves added; the
trace's missing transitions become `unexpected_transition` findings (review severity: compliance is
not zeroed and the verdict stays pass) only when all of these hold:
- against the patched graph the trace passes every stage: every invariant, pre- and postcondition
  holds against the facts, every required state is visited, the path ends in a goal;
- the added moves skip no required state or guard: every required state and every node with a
  postcondition that dominated a goal (every route from the start to it passed there) still does
  in the patched graph, so no goal can now be entered without its required states (`weakened`).
Anything else (another violation kind beside the missing move, an invariant that fails once the
move is allowed, a move around a required state or guard) leaves the original report untouched:
the missing transition stays a violation.

A patch only ever adds moves (`next_allowed` entries): it cannot remove a required state, a node or
an invariant. `python -m harness.shield extend` applies those a person accepted; nothing here edits
a graph file.

Severity: `unexpected_transition` is not a `Violation` (those zero compliance); it is an
`UnexpectedTransition` beside the report, in `DynamicResult.findings`, and in the JSON output as
`"findings": [{"severity": "review", "kind": "unexpected_transition", ...}]`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from harness.shield.compiled import compile_graph
from harness.shield.graph import StateGraph
from harness.shield.parser import derive_states
from harness.shield.report import ShieldReport
from harness.shield.static import dominators
from harness.shield.trace import Trace

Edge = tuple[str, str]


@dataclass(frozen=True)
class UnexpectedTransition:
    """A move the graph lacks, in a trace that is otherwise clean: a person decides whether to add it."""

    source: str
    target: str
    event_index: int | None
    kind: Literal["unexpected_transition"] = "unexpected_transition"
    severity: Literal["review"] = "review"

    def as_json(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "kind": self.kind,
            "from": self.source,
            "to": self.target,
            "event_index": self.event_index,
            "message": f"{self.source} -> {self.target} is not in the graph; the trace is clean with it (proposed patch: add it)",
        }


@dataclass(frozen=True)
class DynamicResult:
    report: ShieldReport  # the patched graph's passing report when the findings were accepted, else the original
    findings: tuple[UnexpectedTransition, ...] = ()


def with_transitions(graph: StateGraph, edges: Iterable[Edge]) -> StateGraph:
    """`graph` with each `(from, to)` added to `from`'s `next_allowed` (nothing else changes)."""
    added: dict[str, list[str]] = {}
    for source, target in edges:
        added.setdefault(source, []).append(target)
    nodes = [
        node.model_copy(update={"next_allowed": tuple(dict.fromkeys((*node.next_allowed, *added.get(node.node_id, ()))))})
        for node in graph.nodes
    ]
    data = graph.model_dump(mode="json", exclude_defaults=False)
    data["nodes"] = [node.model_dump(mode="json") for node in nodes]
    return StateGraph.model_validate(data)


def _protected(graph: StateGraph) -> set[tuple[str, str]]:
    """(node, goal) pairs where a required state or a guard (a node with a postcondition) dominates
    a goal: every route from the start to the goal passes through it."""
    edges = {node.node_id: tuple(node.next_allowed) for node in graph.nodes}
    idom = dominators(edges, graph.initial_state)
    watched = set(graph.required_states) | {node.node_id for node in graph.nodes if node.postcondition}
    pairs = set()
    for goal in graph.goals():
        if goal not in idom:
            continue
        node = goal
        while idom[node] != node:
            node = idom[node]
            if node in watched:
                pairs.add((node, goal))
    return pairs


def weakened(original: StateGraph, patched: StateGraph) -> list[str]:
    """What the patch lets a route avoid: 'R before G' for each required state or guard R that
    dominated goal G and no longer does (empty: the patch weakens nothing)."""
    return [f"{node} before {goal}" for node, goal in sorted(_protected(original) - _protected(patched))]


def _missing(graph: StateGraph, trace: Trace, report: ShieldReport) -> list[tuple[Edge, int]] | None:
    """The moves the trace made that the graph lacks (read off the derived path at each
    `illegal_transition`), or None when the report has any other violation."""
    if any(violation.kind != "illegal_transition" or violation.event_index is None for violation in report.violations):
        return None
    states = derive_states(compile_graph(graph), trace.events).states
    return [(states[index], index) for index in (violation.event_index for violation in report.violations) if index is not None]


def verify_dynamic(graph: StateGraph, trace: Trace, check: Callable[[StateGraph], ShieldReport]) -> DynamicResult:
    """`check(g)` verifies `trace` against a graph `g` (facts, replay and options are the caller's);
    see the module docstring for when its missing transitions become findings."""
    report = check(graph)
    missing = _missing(graph, trace, report) if report.verdict == "violation" else None
    if not missing:
        return DynamicResult(report=report)
    patched = with_transitions(graph, [edge for edge, _ in missing])
    if weakened(graph, patched):
        return DynamicResult(report=report)
    again = check(patched)
    if again.verdict != "pass":
        return DynamicResult(report=report)
    first: dict[Edge, int] = {}
    for edge, index in missing:
        first.setdefault(edge, index)
    return DynamicResult(report=again, findings=tuple(UnexpectedTransition(a, b, index) for (a, b), index in first.items()))
