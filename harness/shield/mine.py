"""`mine`: a draft state graph from traces taken as honest (BenchShield §9.1, graphs drafted for people).

    python -m harness.shield mine --traces DIR [--accept 'reward >= 1'] --out draft.json

What is inferred, each with its support (how many accepted traces show it):
- nodes: one per step an event performs: a tool call performs `call_<tool>` (the `action_map`), any
  other event its `action`; events that perform nothing (plain messages) stay where the path is;
  the path starts in `START`;
- transitions: every move seen between two consecutive steps of an accepted trace;
- goal states: the states accepted traces end in; required states: those every accepted trace visits;
- ordering: "A before B" when, in every accepted trace that reaches B, A came first (a reservation
  read before it is written; the user looked up before any write). Those the transitions already
  force (A dominates B in the draft) are listed as implied; the rest, when A is a tool, become B's
  precondition `'A' in history.tool_counts`; with A a non-tool step they cannot be written as CEL
  over what the verifier records, and are reported as not expressed;
- parameter domains: per tool, the schema of its inputs (`harness.shield.domains`);
- call repeats: the most identical calls (one tool, one input) any accepted trace made, as the global
  invariant `history.max_repeat <= M` (padding with repeated searches breaks it).
The draft is an ordinary graph file (`check` and `verify` read it); it never replaces a graph: `mine`
refuses an `--out` that exists. An accepted trace that labels its steps (`state_before`,
`state_after`, or an `action` on a tool call) is refused (`refuse_labels`): its labels name another
graph's states, which the verifier would follow against the draft. Ordering inference is quadratic
in a trace's distinct steps, so it is bounded (`ORDERING_BUDGET` pairs, the dominator budget); past
the bound no ordering is inferred and `not inferred` says so. Then the draft is checked statically and against the accepted
traces themselves: coverage is the share of them it passes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.core import HarnessError
from harness.shield.accept import AcceptFilter
from harness.shield.domains import DomainOptions, infer_domain
from harness.shield.graph import StateGraph, parse_graph
from harness.shield.report import Finding
from harness.shield.static import SEARCH_BUDGET, BudgetExhausted, DominatorTree, check_graph, dominators
from harness.shield.trace import Trace, TraceEvent
from harness.shield.verification import verify

START = "START"
ORDERING_BUDGET = 1_000_000  # (earlier, later) pairs of first visits mining may compare, over all accepted traces


def step_of(event: TraceEvent) -> str | None:
    """The step (action) an event performs in a mined graph: `call_<tool>` for a tool call."""
    if event.event_type == "tool_call" and event.tool_name:
        return f"call_{event.tool_name}"
    return event.action


@dataclass(frozen=True)
class Constraint:
    """One inferred constraint and the number of accepted traces that show it."""

    kind: str  # transition | goal | required_state | ordering | parameter_domain
    subject: str
    support: int
    detail: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "support": self.support, **self.detail}


@dataclass(frozen=True)
class MineOptions:
    domains: DomainOptions = DomainOptions()
    min_support: int = 1  # fewest accepted traces an ordering constraint needs


@dataclass(frozen=True)
class Draft:
    graph: dict[str, Any]  # the draft graph file's content
    constraints: tuple[Constraint, ...]
    not_inferred: tuple[str, ...]


@dataclass(frozen=True)
class MiningReport:
    draft: Draft
    traces: int
    accepted: tuple[str, ...]
    unevaluable: tuple[tuple[str, str], ...]  # (trace, why the filter could not be read)
    findings: tuple[Finding, ...]
    failing: tuple[tuple[str, tuple[str, ...]], ...]  # accepted traces the draft rejects, with kinds

    @property
    def coverage(self) -> float:
        return 1.0 - len(self.failing) / len(self.accepted)

    def as_json(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "accepted": len(self.accepted),
            "unevaluable": [{"trace": name, "error": error} for name, error in self.unevaluable],
            "coverage": self.coverage,
            "failing": [{"trace": name, "kinds": list(kinds)} for name, kinds in self.failing],
            "check": [finding.model_dump(mode="json") for finding in self.findings],
            "hackable_paths": [list(finding.path or ()) for finding in self.findings if finding.kind == "hackable_path"],
            "constraints": [constraint.as_json() for constraint in self.draft.constraints],
            "not_inferred": list(self.draft.not_inferred),
        }


def _start_name(steps: set[str]) -> str:
    name = START
    while name in steps:
        name += "_"
    return name


def _walk(trace: Trace, start: str) -> list[str]:
    """The states an accepted trace visits, in order, repeats collapsed (staying put is free)."""
    path = [start]
    for event in trace.events:
        step = step_of(event)
        if step is not None and step != path[-1]:
            path.append(step)
    return path


def _orderings(paths: list[list[str]], tools: set[str], edges: dict[str, tuple[str, ...]], start: str, minimum: int) -> tuple[list[Constraint], dict[str, list[str]], list[str]]:
    """Orderings holding in every accepted trace: constraints, preconditions by node, and the
    non-tool ones no expression can state. The pairs of first visits counted are quadratic in a
    trace's distinct steps, so they are spent from `ORDERING_BUDGET` before any is counted; past it
    (or past the dominator analysis' budget) no ordering is inferred and the report says why."""
    pairs = sum(len(set(path)) ** 2 for path in paths)
    if pairs > ORDERING_BUDGET:
        return [], {}, [f"orderings: the accepted traces' distinct steps make {pairs:,} pairs to compare, more than the "
                        f"{ORDERING_BUDGET:,} mining spends on them (mine fewer or shorter traces)"]
    try:
        tree = DominatorTree(dominators(edges, start), start)
    except BudgetExhausted:
        return [], {}, [f"orderings: the draft's dominator tree needs more than the {SEARCH_BUDGET:,} steps the analysis may spend"]
    reaching: Counter[str] = Counter()
    seen_before: Counter[tuple[str, str]] = Counter()
    for path in paths:
        first: dict[str, int] = {}
        for index, state in enumerate(path):
            first.setdefault(state, index)
        for later in first:
            reaching[later] += 1
            for earlier in first:
                if earlier not in (later, start) and first[earlier] < first[later]:
                    seen_before[(earlier, later)] += 1
    constraints: list[Constraint] = []
    preconditions: dict[str, list[str]] = {}
    unexpressed: list[str] = []
    for (earlier, later), count in sorted(seen_before.items()):
        if later == start or count != reaching[later] or count < minimum:
            continue
        if tree.dominates(earlier, later):
            how = "implied"
        elif earlier in tools:
            how = "precondition"
            tool = earlier.removeprefix("call_")
            # A JSON string is a CEL string literal: a tool name from a trace cannot break out of it.
            preconditions.setdefault(later, []).append(f"{json.dumps(tool, ensure_ascii=False)} in history.tool_counts")
        else:
            how = "not_expressed"
            unexpressed.append(f"{earlier} before {later} (support {count}): {earlier} is not a tool call, and the verifier counts only tool calls")
        constraints.append(Constraint("ordering", f"{earlier} before {later}", count, {"before": earlier, "after": later, "expressed": how}))
    return constraints, preconditions, unexpressed


def _tool_inputs(traces: Iterable[Trace]) -> dict[str, list[dict[str, Any]]]:
    inputs: dict[str, list[dict[str, Any]]] = {}
    for trace in traces:
        for event in trace.events:
            if event.event_type == "tool_call" and event.tool_name:
                inputs.setdefault(event.tool_name, []).append(event.tool_input or {})
    return inputs


def _max_repeat(trace: Trace) -> int:
    """Most calls of one tool with one input in `trace` (what the verifier's `history.max_repeat` counts)."""
    counts = Counter(
        (event.tool_name, json.dumps(event.tool_input, sort_keys=True)) for event in trace.events if event.event_type == "tool_call"
    )
    return max(counts.values(), default=0)


def draft_graph(traces: list[Trace], options: MineOptions = MineOptions()) -> Draft:
    """The draft graph of `traces` (all accepted, all one task); see the module docstring."""
    if not traces:
        raise HarnessError("no trace was accepted: nothing to mine (loosen --accept)")
    task_ids = sorted({trace.task_id for trace in traces})
    if len(task_ids) > 1:
        raise HarnessError(f"accepted traces are for several tasks ({', '.join(task_ids[:3])}); mine one task at a time")
    steps = {step for trace in traces for event in trace.events if (step := step_of(event)) is not None}
    start = _start_name(steps)
    paths = [_walk(trace, start) for trace in traces]
    tool_inputs = _tool_inputs(traces)
    tools = {f"call_{tool}" for tool in tool_inputs}

    transitions: Counter[tuple[str, str]] = Counter()
    visits: Counter[str] = Counter()
    finals: Counter[str] = Counter()
    for path in paths:
        transitions.update(set(zip(path, path[1:])))
        visits.update(set(path))
        finals[path[-1]] += 1
    order = [start, *sorted(steps)]
    targets: dict[str, set[str]] = {state: set() for state in order}
    for source, target in transitions:
        targets[source].add(target)
    edges = {state: tuple(sorted(targets[state])) for state in order}
    required = [state for state in order if state != start and visits[state] == len(paths)]
    goals = sorted(finals)

    constraints = [Constraint("transition", f"{a} -> {b}", count, {"from": a, "to": b}) for (a, b), count in sorted(transitions.items())]
    constraints += [Constraint("goal", state, finals[state]) for state in goals]
    constraints += [Constraint("required_state", state, visits[state]) for state in required]
    orderings, preconditions, unexpressed = _orderings(paths, tools, edges, start, options.min_support)
    constraints += orderings

    schemas = {}
    for tool, inputs in sorted(tool_inputs.items()):
        schema = infer_domain(inputs, options.domains)
        schemas[tool] = schema
        constraints.append(Constraint("parameter_domain", tool, len(inputs), {"calls": len(inputs), "schema": schema}))

    repeat = max(_max_repeat(trace) for trace in traces)
    constraints.append(Constraint("call_repeats", f"history.max_repeat <= {repeat}", len(traces), {"max_repeat": repeat}))

    nodes = []
    for state in order:
        node: dict[str, Any] = {
            "node_id": state,
            "description": f"mined: visited by {visits[state]} of {len(paths)} accepted traces",
            "actions": [] if state == start else [state],
            "next_allowed": list(edges[state]),
        }
        if preconditions.get(state):
            node["precondition"] = preconditions[state]
        nodes.append(node)
    graph = {
        "format_version": 1,
        "task_id": task_ids[0],
        "description": f"Draft mined from {len(paths)} accepted traces by `python -m harness.shield mine`: review every "
        "transition, goal, required state and domain before trusting it.",
        "initial_state": start,
        "goal_states": goals,
        "required_states": required,
        "global_invariants": [f"history.max_repeat <= {repeat}"],
        "tools": {tool: {"description": f"mined from {len(inputs)} calls", "input_schema": schemas[tool]} for tool, inputs in sorted(tool_inputs.items())},
        "action_map": {tool: f"call_{tool}" for tool in sorted(tool_inputs)},
        "nodes": nodes,
    }
    not_inferred = [
        "invariants over the environment's facts (what a call did to the database): traces alone do not show facts; "
        "add them by hand or propose them with --policy/--llm",
        "data flow between calls (the same id read, then written): the verifier's history counts calls, not their inputs",
        *unexpressed,
    ]
    return Draft(graph=graph, constraints=tuple(constraints), not_inferred=tuple(not_inferred))


def refuse_labels(name: str, trace: Trace) -> None:
    """Refuse (bad input) an accepted trace that labels its steps with another graph's names: the
    verifier follows a recorded `state_after`, checks `state_before`, and holds a tool call's
    `action` to the `action_map`, so a draft whose states are its own would reject the very trace
    it was mined from. Mining reads unlabelled traces only; it never guesses a mapping."""
    for index, event in enumerate(trace.events):
        for label in ("state_before", "state_after"):
            if getattr(event, label) is not None:
                raise HarnessError(f"{name}: event {index}: {label}: mine reads unlabelled traces (the draft names its own "
                                   "states, and the verifier would follow this label); drop state_before/state_after")
        if event.event_type == "tool_call" and event.tool_name and event.action is not None:
            raise HarnessError(f"{name}: event {index}: action: a tool call's step is its tool (call_{event.tool_name}) in a "
                               "mined draft, and the verifier holds a labelled action to it; drop the action of tool calls")


def mine(named: Iterable[tuple[str, Trace]], accept: AcceptFilter, options: MineOptions = MineOptions()) -> MiningReport:
    """Accept, draft, check and cover: the whole `mine` command minus reading and writing files."""
    accepted: list[tuple[str, Trace]] = []
    unevaluable: list[tuple[str, str]] = []
    total = 0
    for name, trace in named:
        total += 1
        verdict = accept(name, trace)
        if verdict.accepted:
            refuse_labels(name, trace)
            accepted.append((name, trace))
        elif verdict.error is not None:
            unevaluable.append((name, verdict.error))
    draft = draft_graph([trace for _, trace in accepted], options)
    graph: StateGraph = parse_graph(draft.graph, "mined draft")
    failing = []
    for name, trace in accepted:
        report = verify(graph, trace, trace_id=name)
        if report.verdict != "pass":
            failing.append((name, tuple(sorted({violation.kind for violation in report.violations}))))
    return MiningReport(
        draft=draft,
        traces=total,
        accepted=tuple(name for name, _ in accepted),
        unevaluable=tuple(unevaluable),
        findings=tuple(check_graph(graph)),
        failing=tuple(failing),
    )
