"""Static analysis of a state graph, before any run.

Findings: CEL syntax errors; nodes unreachable from the initial state; goal states unreachable;
dead ends (reachable non-goal nodes from which no goal is reachable); variables an expression reads
that no source provides (facts, a tool's `provides`, declared `context_variables`, or the built-ins
`event` and `history`); and hackable paths: simple paths from the initial state to a goal that skip a
required state, or that reach a goal guarded by postconditions without passing any of its guards.
Each hackable path is reported as a counterexample. Simple paths are enumerated depth-first up to
`max_paths`, so a graph with a combinatorial number of paths is still analysed in bounded time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from harness.shield.expressions import ExpressionError, compile_expression
from harness.shield.graph import StateGraph
from harness.shield.report import Finding

BUILTIN_VARIABLES = frozenset({"event", "history"})


def _reachable(graph: StateGraph, start: str) -> set[str]:
    edges = {node.node_id: node.next_allowed for node in graph.nodes}
    seen, queue = {start}, deque([start])
    while queue:
        for nxt in edges[queue.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _expressions(graph: StateGraph) -> Iterator[tuple[str | None, str]]:
    for source in graph.global_invariants:
        yield None, source
    for node in graph.nodes:
        for source in (*node.invariant, *node.precondition, *node.postcondition):
            yield node.node_id, source


def _expression_findings(graph: StateGraph) -> list[Finding]:
    findings: list[Finding] = []
    provided = graph.provided_variables() | BUILTIN_VARIABLES
    for node, source in _expressions(graph):
        try:
            expression = compile_expression(source)
        except ExpressionError as error:
            findings.append(Finding(kind="cel_syntax", message=f"CEL syntax error: {error}", node=node, expression=source))
            continue
        for name in expression.variables:
            if name not in provided:
                findings.append(
                    Finding(
                        kind="unprovided_variable",
                        message=f"variable {name!r} is read but no fact source, tool or declared context provides it",
                        node=node,
                        expression=source,
                    )
                )
    return findings


def _simple_paths(graph: StateGraph, goals: frozenset[str], max_paths: int) -> Iterator[tuple[str, ...]]:
    edges = {node.node_id: node.next_allowed for node in graph.nodes}
    stack: list[tuple[str, tuple[str, ...]]] = [(graph.initial_state, (graph.initial_state,))]
    produced = 0
    while stack and produced < max_paths:
        state, path = stack.pop()
        if state in goals:
            produced += 1
            yield path
            continue
        for nxt in reversed(edges[state]):
            if nxt not in path:
                stack.append((nxt, (*path, nxt)))


def _hackable_paths(graph: StateGraph, max_paths: int) -> list[Finding]:
    goals = graph.goals()
    guards = {
        goal: {node.node_id for node in graph.nodes if node.postcondition and goal in node.next_allowed}
        for goal in goals
    }
    findings: list[Finding] = []
    for path in _simple_paths(graph, goals, max_paths):
        visited = set(path)
        skipped = [state for state in graph.required_states if state not in visited]
        goal = path[-1]
        unguarded = bool(guards[goal]) and not (guards[goal] & visited)
        if not skipped and not unguarded:
            continue
        reasons = []
        if skipped:
            reasons.append(f"skips required {', '.join(skipped)}")
        if unguarded:
            reasons.append(f"bypasses the postcondition guard(s) {', '.join(sorted(guards[goal]))} of {goal}")
        findings.append(
            Finding(kind="hackable_path", message=f"{' -> '.join(path)} {' and '.join(reasons)}", node=goal, path=path)
        )
    return findings


def check_graph(graph: StateGraph, *, max_paths: int = 10_000) -> list[Finding]:
    """All static findings for `graph`; an empty list means the graph is clean."""
    findings = _expression_findings(graph)
    reachable = _reachable(graph, graph.initial_state)
    goals = graph.goals()
    for node in graph.nodes:
        if node.node_id not in reachable:
            kind = "unreachable_goal" if node.node_id in goals else "unreachable_node"
            findings.append(Finding(kind=kind, message=f"{node.node_id} is unreachable from {graph.initial_state}", node=node.node_id))
        elif node.node_id not in goals and not (_reachable(graph, node.node_id) & goals):
            findings.append(Finding(kind="dead_end", message=f"no goal state is reachable from {node.node_id}", node=node.node_id))
    findings += _hackable_paths(graph, max_paths)
    return findings
