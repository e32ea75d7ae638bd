"""Dynamic graphs (BenchShield §9.1): a legitimate path the graph did not foresee is a finding for
review, with a proposed patch, instead of a failed trace.

`verify_dynamic` verifies a trace as usual. When the only problems are moves the graph lacks
(`illegal_transition`), it verifies the trace again against the graph with those moves added; the
trace's missing transitions become `unexpected_transition` findings (review severity: compliance is
not zeroed and the verdict stays pass) only when all of these hold:
- against the patched graph the trace passes every stage: every invariant, pre- and postcondition
  holds against the facts, every required state is visited, the path ends in a goal;
- the added moves skip no guard (`weakened`): a guard is every required state and every node with
  an invariant, a precondition or a postcondition. No goal the start could reach only through some
  guard becomes reachable past none (a cut over the whole guard set, so two guarded routes of which
  neither dominates the goal alone still protect it), and every guard on all routes to a goal (a
  dominator) still is. When the dominator analysis runs out of its budget the move is refused.
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

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from harness.shield.compiled import compile_graph
from harness.shield.graph import StateGraph
from harness.shield.parser import derive_states
from harness.shield.report import ShieldReport
from harness.shield.static import SEARCH_BUDGET, Budget, BudgetExhausted, dominators
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


def guards(graph: StateGraph) -> frozenset[str]:
    """The nodes a patch must not let a route around: every required state and every node with an
    invariant, a precondition or a postcondition (each checks something when a route passes there)."""
    checked = {node.node_id for node in graph.nodes if node.invariant or node.precondition or node.postcondition}
    return frozenset(checked | set(graph.required_states))


def _open_goals(graph: StateGraph, blocked: frozenset[str]) -> set[str]:
    """Goals a route from the start reaches passing no node of `blocked` on the way (the start and
    the goal itself do not count): one breadth-first search, linear in the graph."""
    edges = {node.node_id: node.next_allowed for node in graph.nodes}
    goals = set(graph.goals())
    seen = {graph.initial_state}
    queue = deque(seen)
    reached = set()
    while queue:
        node = queue.popleft()
        for nxt in edges.get(node, ()):
            if nxt in goals:
                reached.add(nxt)
            if nxt not in seen and nxt not in blocked:
                seen.add(nxt)
                queue.append(nxt)
    return reached


def _dominated(graph: StateGraph, watched: frozenset[str], budget: Budget) -> set[tuple[str, str]]:
    """(node, goal) pairs where a watched node dominates a goal: every route from the start to the
    goal passes through it."""
    edges = {node.node_id: tuple(node.next_allowed) for node in graph.nodes}
    idom = dominators(edges, graph.initial_state, budget)
    pairs = set()
    for goal in graph.goals():
        if goal not in idom:
            continue
        node = goal
        while idom[node] != node:
            node = idom[node]
            budget.spend()
            if node in watched:
                pairs.add((node, goal))
    return pairs


def weakened(original: StateGraph, patched: StateGraph) -> list[str]:
    """What the patch lets a route avoid (empty: the patch weakens nothing). Two tests over the
    original graph's guards (`guards`):
    - the cut: 'every guard before G' for each goal G the start now reaches past no guard at all
      and did not before (two guarded routes of which neither dominates G alone count together);
    - dominance: 'R before G' for each guard R that was on every route to G and no longer is.
    The dominator analysis spends from the static analysis' budget; when it runs out, the patch is
    refused (one entry saying so), never accepted undecided."""
    watched = guards(original)
    lost = [f"every guard before {goal}" for goal in sorted(_open_goals(patched, watched) - _open_goals(original, watched))]
    budget = Budget(SEARCH_BUDGET)
    try:
        before, after = _dominated(original, watched, budget), _dominated(patched, watched, budget)
    except BudgetExhausted:
        return [*lost, f"a guard before a goal (undecided: the dominator analysis ran past its budget of {SEARCH_BUDGET:,} steps)"]
    return [*lost, *(f"{node} before {goal}" for node, goal in sorted(before - after))]


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
