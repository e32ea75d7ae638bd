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
dominator algorithm); the dominator tree is numbered once, so "R dominates G" is two comparisons and a
required state needs only a count of the goals below it in the tree. A guard is examined only when an
edge leaves its dominator subtree towards a node that reaches a goal (one pass over the edges); each
such guard's bypassed goals are found by a search from it, and each bypass is shown with a shortest
counterexample path, a breadth-first search with the node removed. Every phase (dominators, guard
searches, counterexample searches) spends from one budget of steps; what is left undecided or without
a path when it runs out is reported in one `analysis_incomplete` finding, never dropped silently, so a
graph of any shape ends in a bounded time and memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Literal

from harness.core import HarnessError
from harness.shield.expressions import ExpressionError, compile_expression
from harness.shield.graph import StateGraph
from harness.shield.json_schema import compile_tool_schema
from harness.shield.report import Finding

BUILTIN_VARIABLES = frozenset({"event", "history"})
SEARCH_BUDGET = 2_000_000  # steps of work shared by every phase of the hackable-path analysis

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


class BudgetExhausted(Exception):
    """The analysis budget ran out."""


class Budget:
    """Steps of work shared by every phase of the hackable-path analysis (dominators, candidate
    confirmation, counterexample searches), so no graph makes `check` run or grow without bound."""

    def __init__(self, steps: int) -> None:
        self.total = steps
        self.left = steps

    def spend(self, steps: int = 1) -> None:
        self.left -= steps
        if self.left < 0:
            raise BudgetExhausted


def dominators(edges: Edges, start: str, budget: Budget | None = None) -> dict[str, str]:
    """Immediate dominator of every node reachable from `start` (`start` maps to itself).

    Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001): iterate over reverse
    postorder, intersecting the dominator-tree paths of each node's processed predecessors. Every
    predecessor visited and every step up the tree is spent from `budget`."""
    budget = budget or Budget(SEARCH_BUDGET)
    postorder = _postorder(edges, start)
    number = {node: index for index, node in enumerate(postorder)}
    predecessors = _reverse(edges)
    idom: dict[str, str] = {start: start}
    changed = True
    while changed:
        changed = False
        for node in reversed(postorder[:-1]):
            budget.spend(len(predecessors[node]))
            processed = [p for p in predecessors[node] if p in idom]
            new = processed[0]
            for other in processed[1:]:
                a, b = other, new
                while a != b:
                    while number[a] < number[b]:
                        a = idom[a]
                        budget.spend()
                    while number[b] < number[a]:
                        b = idom[b]
                        budget.spend()
                new = a
            if idom.get(node) != new:
                idom[node] = new
                changed = True
    return idom


class DominatorTree:
    """The dominator tree numbered once (pre-order intervals, depths), so "A dominates B" is two
    comparisons and no set of dominators is ever built per node."""

    def __init__(self, idom: Mapping[str, str], start: str) -> None:
        children: dict[str, list[str]] = {node: [] for node in idom}
        for node, parent in idom.items():
            if node != start:
                children[parent].append(node)
        self.children = children
        self.enter: dict[str, int] = {}
        self.leave: dict[str, int] = {}
        self.depth: dict[str, int] = {start: 0}
        self.postorder: list[str] = []
        clock = 0
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            node, child = stack.pop()
            if child == 0:
                self.enter[node] = clock
                clock += 1
            if child < len(children[node]):
                stack.append((node, child + 1))
                nxt = children[node][child]
                self.depth[nxt] = self.depth[node] + 1
                stack.append((nxt, 0))
            else:
                self.leave[node] = clock
                self.postorder.append(node)

    def dominates(self, a: str, b: str) -> bool:
        """Whether `a` dominates `b` (both reachable; a node dominates itself)."""
        return self.enter[a] <= self.enter[b] and self.leave[b] <= self.leave[a]

    def subtree_sums(self, weight: Mapping[str, int]) -> dict[str, int]:
        total: dict[str, int] = {}
        for node in self.postorder:
            total[node] = weight.get(node, 0) + sum(total[child] for child in self.children[node])
        return total


class _Search:
    """Shortest paths from the initial state avoiding one node, under the shared budget."""

    def __init__(self, edges: Edges, start: str, budget: Budget) -> None:
        self.edges, self.start, self.budget = edges, start, budget

    def avoiding(self, removed: str, is_target: Callable[[str], bool]) -> tuple[str, ...] | None:
        parent: dict[str, str | None] = {self.start: None}
        queue = deque([self.start])
        while queue:
            node = queue.popleft()
            if is_target(node):
                path = [node]
                while (previous := parent[path[-1]]) is not None:
                    path.append(previous)
                return tuple(reversed(path))
            targets = self.edges[node]
            self.budget.spend(len(targets))
            for nxt in targets:
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


def _bypass_candidates(edges: Edges, tree: DominatorTree, guards: list[str], reaches_goal: set[str]) -> list[str]:
    """The reachable guards that may be bypassed: those whose dominator subtree has an edge leaving it
    towards a node that reaches a goal (a guard without one can only lead to goals it dominates).
    One pass over the edges and one over the tree; a necessary condition, confirmed per candidate."""
    depth = tree.depth
    low: dict[str, int] = {}
    for node in tree.enter:
        for nxt in edges[node]:
            if nxt in reaches_goal:
                # The deepest common dominator of node and nxt: nxt itself when it dominates node, else
                # nxt's immediate dominator (which dominates every predecessor of nxt).
                common = depth[nxt] if tree.dominates(nxt, node) else depth[nxt] - 1
                low[node] = min(low.get(node, common), common)
    lowest: dict[str, int] = {}
    for node in tree.postorder:
        values = [lowest[child] for child in tree.children[node]]
        if node in low:
            values.append(low[node])
        lowest[node] = min(values, default=len(depth))
    return [guard for guard in guards if lowest[guard] < depth[guard]]


def _goals_other_than(state: str, live_goals: set[str]) -> Callable[[str], bool]:
    return lambda node: node in live_goals and node != state


def _goals_not_dominated_by(state: str, live_goals: set[str], tree: DominatorTree) -> Callable[[str], bool]:
    return lambda node: node in live_goals and not tree.dominates(state, node)


def _hackable_paths(graph: StateGraph, edges: Edges, goals: frozenset[str], budget_steps: int) -> list[Finding]:
    start = graph.initial_state
    budget = Budget(budget_steps)
    try:
        idom = dominators(edges, start, budget)
    except BudgetExhausted:
        return [_incomplete(budget, "the dominator tree", [])]
    tree = DominatorTree(idom, start)
    live_goals = {goal for goal in goals if goal in idom}
    goals_below = tree.subtree_sums({goal: 1 for goal in live_goals})
    reaches_goal = _reachable(_reverse(edges), goals)
    post_nodes = _post_nodes(graph)

    # What must not be avoidable: (removed node, is this goal a target: reached without it).
    obligations: list[tuple[str, Callable[[str], bool]]] = []
    for state in dict.fromkeys(graph.required_states):
        if state == start:
            continue
        if state not in idom:  # never reached at all: every live goal is reached without it
            if live_goals - {state}:
                obligations.append((state, _goals_other_than(state, live_goals)))
        elif len(live_goals) > goals_below[state]:  # some live goal that `state` does not dominate
            obligations.append((state, _goals_not_dominated_by(state, live_goals, tree)))

    reachable_guards = sorted(node for node in post_nodes if node in idom and node in reaches_goal)
    unreached_guards = sorted(node for node in post_nodes if node not in idom and node in reaches_goal)
    reverse = _reverse(edges)
    search = _Search(edges, start, budget)
    paths: list[tuple[tuple[str, ...], set[str], set[str]]] = []  # counterexample, its nodes, the guards it bypasses
    covered: set[str] = set()  # guards some counterexample already goes around

    def found(path: tuple[str, ...]) -> None:
        """Keep `path` and every guard it goes around (guards that reach its goal without dominating
        it and are not on it), found by one search back from the goal instead of one per guard."""
        goal, visited = path[-1], set(path)
        bypassed = {
            node
            for node in _reachable_within(reverse, goal, budget)
            if node in post_nodes and node not in visited and (node not in idom or not tree.dominates(node, goal))
        }
        covered.update(bypassed)
        paths.append((path, visited, bypassed))

    unexplained: list[str] = []
    for removed, is_target in obligations:
        try:
            budget.spend(len(paths))
            if any(removed not in visited and is_target(path[-1]) for path, visited, _ in paths):
                continue  # an earlier counterexample already avoids this node on the way to its goal
            path = search.avoiding(removed, is_target)
            if path is not None:
                found(path)
        except BudgetExhausted:
            unexplained.append(removed)
    for guard in sorted([*_bypass_candidates(edges, tree, reachable_guards, reaches_goal), *unreached_guards]):
        if guard in covered:
            continue
        try:
            targets = _bypassed_goals(edges, tree, guard, live_goals, budget)
            path = search.avoiding(guard, targets.__contains__) if targets else None
            if path is not None:
                found(path)
        except BudgetExhausted:
            unexplained.append(guard)

    findings = [_hackable(graph, path, bypassed) for path, _, bypassed in paths]
    if unexplained:
        findings.append(_incomplete(budget, "the counterexample searches", unexplained))
    return findings


def _reachable_within(reverse: Mapping[str, list[str]], goal: str, budget: Budget) -> set[str]:
    """Nodes from which `goal` is reachable (a search back along `reverse`), under the budget."""
    seen = {goal}
    queue = deque([goal])
    while queue:
        sources = reverse[queue.popleft()]
        budget.spend(len(sources))
        for node in sources:
            if node not in seen:
                seen.add(node)
                queue.append(node)
    return seen


def _bypassed_goals(edges: Edges, tree: DominatorTree, guard: str, live_goals: set[str], budget: Budget) -> set[str]:
    """Goals reachable from `guard` that it does not dominate (a route reaches them around it)."""
    found: set[str] = set()
    seen = {guard}
    queue = deque([guard])
    while queue:
        node = queue.popleft()
        targets = edges[node]
        budget.spend(len(targets))
        for nxt in targets:
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
                if nxt in live_goals and (guard not in tree.enter or not tree.dominates(guard, nxt)):
                    found.add(nxt)
    return found


def _incomplete(budget: Budget, phase: str, nodes: list[str]) -> Finding:
    left = f"; not decided or shown for: {', '.join(nodes[:50])}{' ...' if len(nodes) > 50 else ''}" if nodes else ""
    return Finding(
        kind="analysis_incomplete",
        message=f"the hackable-path analysis ran out of its budget of {budget.total} steps in {phase}{left}",
    )


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

    `search_budget` bounds the work of the hackable-path analysis (see the module docstring)."""
    edges = _edges(graph)
    goals = graph.goals()
    findings = _expression_findings(graph) + _schema_findings(graph)
    findings += _reachability_findings(graph, edges, goals)
    findings += _hackable_paths(graph, edges, goals, search_budget)
    return findings
