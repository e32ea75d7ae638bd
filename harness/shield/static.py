"""Static analysis of a state graph, before any run.

Findings: CEL syntax errors; tool input schemas that do not compile (a pattern that is not a valid
ECMA-262 regular expression, a remote `$ref`); nodes unreachable from the initial state; goal states
unreachable; dead ends (reachable non-goal nodes from which no goal is reachable); variables an
expression reads that no source provides (facts, a tool's `provides`, declared `context_variables`,
or the built-ins `event` and `history`); and hackable paths.

Hackable paths are found by reachability, not by enumerating paths (which is exponential on dense
graphs and stops at the first goal it meets):
- a required state R is skippable when some goal other than R can be reached with R removed;
- a guard is a node with a postcondition; it is bypassable for a goal G it can reach when G can be
  reached with the guard removed (a guard any number of hops before G counts, and alternative
  guarded branches into one goal are each reported: a postcondition guarantees nothing about G unless
  every route to G leaves through it; put shared checks on a join node or on G itself).
Goals do not stop a route: a goal that leads into another, guarded goal is a route to that goal.
"Reachable with R removed" is "R does not dominate G" (Cooper, Harvey and Kennedy's iterative
dominator algorithm, one pass over the graph); each bypass is then shown with a shortest
counterexample path, a breadth-first search with R removed. Counterexample searches share a budget of
edge visits; bypasses left without a path when it runs out are reported in one `analysis_incomplete`
finding, never dropped silently.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Literal

from harness.core import HarnessError
from harness.shield.expressions import ExpressionError, compile_expression
from harness.shield.graph import StateGraph
from harness.shield.json_schema import compile_tool_schema
from harness.shield.report import Finding

BUILTIN_VARIABLES = frozenset({"event", "history"})
SEARCH_BUDGET = 5_000_000  # edge visits shared by all counterexample searches

Edges = Mapping[str, tuple[str, ...]]


def _edges(graph: StateGraph) -> dict[str, tuple[str, ...]]:
    return {node.node_id: tuple(dict.fromkeys(node.next_allowed)) for node in graph.nodes}


def _reverse(edges: Edges) -> dict[str, list[str]]:
    reverse: dict[str, list[str]] = {node: [] for node in edges}
    for node, targets in edges.items():
        for target in targets:
            reverse[target].append(node)
    return reverse


def _reachable(edges: Mapping[str, Iterable[str]], starts: Iterable[str]) -> set[str]:
    seen = set(starts)
    queue = deque(seen)
    while queue:
        for nxt in edges[queue.popleft()]:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return seen


def _postorder(edges: Edges, start: str) -> list[str]:
    """Depth-first postorder of the nodes reachable from `start`, without recursion."""
    order: list[str] = []
    seen = {start}
    stack: list[tuple[str, Iterator[str]]] = [(start, iter(edges[start]))]
    while stack:
        node, children = stack[-1]
        child = next((c for c in children if c not in seen), None)
        if child is None:
            stack.pop()
            order.append(node)
        else:
            seen.add(child)
            stack.append((child, iter(edges[child])))
    return order


def dominators(edges: Edges, start: str) -> dict[str, str]:
    """Immediate dominator of every node reachable from `start` (`start` maps to itself).

    Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001): iterate over reverse
    postorder, intersecting the dominator-tree paths of each node's processed predecessors."""
    postorder = _postorder(edges, start)
    number = {node: index for index, node in enumerate(postorder)}
    predecessors = _reverse(edges)
    idom: dict[str, str] = {start: start}
    changed = True
    while changed:
        changed = False
        for node in reversed(postorder[:-1]):
            processed = [p for p in predecessors[node] if p in idom]
            new = processed[0]
            for other in processed[1:]:
                a, b = other, new
                while a != b:
                    while number[a] < number[b]:
                        a = idom[a]
                    while number[b] < number[a]:
                        b = idom[b]
                new = a
            if idom.get(node) != new:
                idom[node] = new
                changed = True
    return idom


def _dominator_set(idom: Mapping[str, str], node: str) -> set[str]:
    chain = {node}
    while idom[node] != node:
        node = idom[node]
        chain.add(node)
    return chain


class _Search:
    """Shortest paths from the initial state avoiding one node, under a shared edge-visit budget."""

    def __init__(self, edges: Edges, start: str, budget: int) -> None:
        self.edges, self.start, self.budget = edges, start, budget

    def avoiding(self, removed: str, targets: set[str]) -> tuple[str, ...] | None:
        parent: dict[str, str | None] = {self.start: None}
        queue = deque([self.start])
        while queue:
            node = queue.popleft()
            if node in targets:
                path = [node]
                while (previous := parent[path[-1]]) is not None:
                    path.append(previous)
                return tuple(reversed(path))
            for nxt in self.edges[node]:
                self.budget -= 1
                if self.budget < 0:
                    return None
                if nxt != removed and nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
        return None


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


def _schema_findings(graph: StateGraph) -> list[Finding]:
    findings = []
    for name, spec in graph.tools.items():
        if spec.input_schema is None:
            continue
        try:
            compile_tool_schema(spec.input_schema, f"tool {name}")
        except HarnessError as error:
            findings.append(Finding(kind="invalid_schema", message=str(error)))
    return findings


def _reachability_findings(graph: StateGraph, edges: Edges, goals: frozenset[str]) -> list[Finding]:
    findings: list[Finding] = []
    reachable = _reachable(edges, [graph.initial_state])
    reaches_goal = _reachable(_reverse(edges), goals)
    for node in graph.nodes:
        if node.node_id not in reachable:
            kind: Literal["unreachable_goal", "unreachable_node"] = "unreachable_goal" if node.node_id in goals else "unreachable_node"
            findings.append(Finding(kind=kind, message=f"{node.node_id} is unreachable from {graph.initial_state}", node=node.node_id))
        elif node.node_id not in reaches_goal:
            findings.append(Finding(kind="dead_end", message=f"no goal state is reachable from {node.node_id}", node=node.node_id))
    return findings


def _hackable_paths(graph: StateGraph, edges: Edges, goals: frozenset[str], budget: int) -> list[Finding]:
    start = graph.initial_state
    idom = dominators(edges, start)
    live_goals = [goal for goal in sorted(goals) if goal in idom]
    dominated_by = {goal: _dominator_set(idom, goal) for goal in live_goals}
    reverse = _reverse(edges)
    # Guards of a goal: nodes with a postcondition from which the goal can be reached.
    guards = {goal: {n for n in _reachable(reverse, [goal]) if n != goal} & _post_nodes(graph) for goal in live_goals}
    required = [state for state in dict.fromkeys(graph.required_states) if state != start]

    # What must not be avoidable: (removed node, goals that must be reached through it).
    obligations: list[tuple[str, set[str]]] = []
    for state in required:
        targets = {goal for goal in live_goals if goal != state and state not in dominated_by[goal]}
        if targets:
            obligations.append((state, targets))
    for guard in sorted({g for goal in live_goals for g in guards[goal]}):
        targets = {goal for goal in live_goals if guard in guards[goal] and guard not in dominated_by[goal]}
        if targets:
            obligations.append((guard, targets))

    search = _Search(edges, start, budget)
    paths: list[tuple[str, ...]] = []
    unexplained: list[str] = []
    for removed, targets in obligations:
        if any(removed not in path and path[-1] in targets for path in paths):
            continue  # an earlier counterexample already avoids this node on the way to its goal
        path = search.avoiding(removed, targets)
        if path is None:
            unexplained.append(removed)
        else:
            paths.append(path)

    findings = [_hackable(graph, path, guards[path[-1]]) for path in paths]
    if unexplained:
        findings.append(
            Finding(
                kind="analysis_incomplete",
                message=f"the counterexample search stopped after {budget} edge visits; these nodes can be avoided "
                f"on the way to a goal but no path is shown: {', '.join(unexplained)}",
            )
        )
    return findings


def _post_nodes(graph: StateGraph) -> set[str]:
    return {node.node_id for node in graph.nodes if node.postcondition}


def _hackable(graph: StateGraph, path: tuple[str, ...], goal_guards: set[str]) -> Finding:
    visited = set(path)
    goal = path[-1]
    skipped = [state for state in dict.fromkeys(graph.required_states) if state not in visited and state != goal]
    bypassed = sorted(goal_guards - visited)
    reasons = []
    if skipped:
        reasons.append(f"skips required {', '.join(skipped)}")
    if bypassed:
        reasons.append(f"bypasses the postcondition guard(s) {', '.join(bypassed)} of {goal}")
    return Finding(kind="hackable_path", message=f"{' -> '.join(path)} {' and '.join(reasons)}", node=goal, path=path)


def check_graph(graph: StateGraph, *, search_budget: int = SEARCH_BUDGET) -> list[Finding]:
    """All static findings for `graph`; an empty list means the graph is clean.

    `search_budget` bounds the edge visits of the counterexample searches (see the module docstring)."""
    edges = _edges(graph)
    goals = graph.goals()
    findings = _expression_findings(graph) + _schema_findings(graph)
    findings += _reachability_findings(graph, edges, goals)
    findings += _hackable_paths(graph, edges, goals, search_budget)
    return findings
