"""Stage 3, invariants: CEL checks against the environment's facts, walking the trace's states.

Variables come from three sources, in order of trust:
1. facts (the environment's end-of-run state: a JSON facts file or SQLite named queries);
2. recorded tool outputs, through each tool's `provides` (`search_result` <- `flights` of the output);
3. the agent's reported `context`, accepted only for the graph's declared `context_variables`.
A claim never stands in for a fact: a reported value for a variable that 1 or 2 already provide is
compared with it, and only on the keys the agent reported (a true but partial report of a map is
not a fabrication); a disagreement is a `fabricated_state` violation. Reports of any other variable
are not a source at all. A claim is bound once, at the first event that reports it, and the checks
that read it see that value: a later event that reports it with another value is `claim_rebound`
(the agent "selects" the cheapest flight, then books the dearest and reports it as the choice), and
the rebinding is ignored. The same value reported again is not a rebinding. Two variables are built in and reserved (no source may bind them):
`event` (the current event: `index`, `event_type`, `tool_name`, `tool_input`, `tool_output`,
`action`, `state`, `content`) and `history` (`calls`, `distinct_calls`, `max_repeat` (most identical
calls of one tool with one input), `tool_counts`). `tool_counts` counts each declared tool by name
and every call to a tool the graph does not declare under `<undeclared>` (when the graph declares
tools, each such call is an `unknown_tool` violation already; when it declares none, every call is
`<undeclared>`), so binding it stays linear in the trace's length whatever names a trace invents.

When each check runs: on a transition A -> B, A's postcondition and B's precondition against the
state before the event; after every event, the current node's invariant and the global invariants;
at the end, the final node's postcondition. Every occurrence is reported: a check (kind, node,
expression) yields one violation at each event where it starts failing (it held, or had not run, at
its previous evaluation), with the values of the variables it read; a check that keeps failing on
the same state is one occurrence, a rule broken at three bookings is three. The first
`MAX_LISTED_PER_KIND` occurrences of a kind are listed, the rest counted (`Checked.unlisted`). An expression that cannot be
evaluated (a missing variable, division by zero, overflow, an index out of range, an integer CEL's
64 bits cannot hold) is an `invariant_error`, which fails the trace like a false one.

A walk spends at most `WALK_BUDGET_S` seconds on its events. The event cap (`trace.MAX_EVENTS`) and
the expression cap bound the work on the shipped graphs, but the cost of one evaluation is the size
of what it reads (a comprehension over a tool output the agent made huge, read again at every
event), so the walk also keeps time: past its budget it stops with a `verification_deadline`
violation at the event it reached, which fails the trace closed (the rest is not checked, so it
cannot pass). An honest trace takes milliseconds; the budget only ever ends a pathological one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import Any, NamedTuple

from harness.core import HarnessError
from harness.shield.compiled import RESERVED_VARIABLES, CompiledGraph
from harness.shield.expressions import Expression, Scope
from harness.shield.facts import check_fact_types
from harness.shield.json_values import same_value
from harness.shield.parser import StatePair, event_action
from harness.shield.report import MAX_LISTED_PER_KIND, Violation
from harness.shield.trace import Trace, TraceEvent

_MISSING = object()
UNDECLARED_TOOL = "<undeclared>"
_INT_RANGE = (-(2**63), 2**64 - 1)  # CEL's int and uint; outside it the binding silently goes lossy
# What evaluating a compiled CEL program can raise on bad data (the bindings map CEL's errors onto
# these): division or modulo by zero, overflow, an index out of range, a failed conversion.
_EVALUATION_ERRORS = (ArithmeticError, LookupError, TypeError, ValueError, RuntimeError)


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
    if isinstance(value, bool):  # `True == 1` and `hash(True) == hash(1)`: a boolean is not a number
        return (bool, value)
    return value


def claim_holds(claim: Any, fact: Any) -> bool:
    """A claim agrees with a fact when every key it reports (recursively, in maps) matches."""
    if isinstance(claim, dict):
        return isinstance(fact, dict) and all(key in fact and claim_holds(value, fact[key]) for key, value in claim.items())
    return same_value(claim, fact)


def unrepresentable(value: Any) -> str | None:
    """Why CEL cannot hold `value` faithfully (an integer beyond 64 bits), or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and not _INT_RANGE[0] <= item <= _INT_RANGE[1]:
            return f"integer {str(item)[:24]}{'...' if len(str(item)) > 24 else ''} does not fit CEL's 64 bits"
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


class _History:
    """Call statistics for the `history` variable; only the fields some expression reads are bound,
    because converting a map into CEL costs microseconds per entry."""

    __slots__ = ("calls", "counts", "declared", "fields", "max_repeat", "tool_counts")

    def __init__(self, fields: frozenset[str], declared: frozenset[str]) -> None:
        self.fields = fields
        self.declared = declared
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
        bucket = name if name in self.declared else UNDECLARED_TOOL
        self.tool_counts[bucket] = self.tool_counts.get(bucket, 0) + 1
        self.max_repeat = max(self.max_repeat, count)

    def value(self) -> dict[str, Any]:
        full = {
            "calls": self.calls,
            "distinct_calls": len(self.counts),
            "max_repeat": self.max_repeat,
            "tool_counts": self.tool_counts,
        }
        return {name: (dict(value) if isinstance(value, dict) else value) for name, value in full.items() if name in self.fields}


class _OutOfTime(Exception):
    """The walk's budget ran out before the next evaluation (`_Checker.deadline`)."""


class _Checker:
    """Runs expressions in one scope and collects first failures."""

    def __init__(self, named_kinds: Mapping[str, str]) -> None:
        self.deadline = float("inf")  # perf_counter() past which no expression is evaluated
        self.scope = Scope()
        self._named_kinds = named_kinds
        self.violations: list[Violation] = []
        self.listed: Counter[str] = Counter()
        self.unlisted: Counter[str] = Counter()
        self._failing: set[tuple[str, str | None, str]] = set()  # checks that failed at their last evaluation
        self._unbindable: dict[str, str] = {}

    def admit(self, kind: str) -> bool:
        """Whether this occurrence of `kind` is listed; past `MAX_LISTED_PER_KIND` it is only counted."""
        if self.listed[kind] < MAX_LISTED_PER_KIND:
            self.listed[kind] += 1
            return True
        self.unlisted[kind] += 1
        return False

    def bind(self, name: str, value: Any) -> None:
        reason = unrepresentable(value)
        if reason is None:
            self._unbindable.pop(name, None)
        else:
            self._unbindable[name] = f"variable {name!r}: {reason}"
        self.scope.set(name, value)

    def _evaluate(self, expression: Expression) -> tuple[bool, str | None]:
        for name in expression.variables:
            if name in self._unbindable:
                return False, self._unbindable[name]
        try:
            return self.scope.evaluate(expression)
        except _EVALUATION_ERRORS as error:
            return False, f"evaluation failed: {str(error).splitlines()[0] if str(error) else type(error).__name__}"

    def run(self, kind: str, expressions: Sequence[Expression], node: str | None, index: int | None) -> None:
        for expression in expressions:
            if perf_counter() > self.deadline:
                raise _OutOfTime
            holds, error = self._evaluate(expression)
            if holds:
                if self._failing:
                    self._failing.discard((kind, node, expression.source))
                continue
            check = (kind, node, expression.source)
            if check in self._failing:
                continue  # the same occurrence, still failing
            self._failing.add(check)
            failed = self._named_kinds.get(expression.source, kind)
            key = (failed if error is None else "invariant_error", node, expression.source)
            if not self.admit(key[0]):
                continue
            where = f"at {node}" if node else "globally"
            message = f"{expression.source!r} {'is false' if error is None else error} {where}"
            self.violations.append(
                Violation(
                    stage="invariants",
                    kind=key[0],
                    message=message,
                    node=node,
                    expression=expression.source,
                    event_index=index,
                    values=self.scope.values_for(expression.variables),
                )
            )

    def rebound(self, name: str, bound: tuple[Any, int], reported: Any, node: str, index: int) -> None:
        if not self.admit("claim_rebound"):
            return
        self.violations.append(
            Violation(
                stage="invariants",
                kind="claim_rebound",
                message=f"reported {name}={reported!r}, but it was bound to {bound[0]!r} at event {bound[1]}, where it was checked",
                node=node,
                event_index=index,
                values={name: {"bound": bound[0], "bound_at": bound[1], "reported": reported}},
            )
        )

    def fabricated(self, name: str, reported: Any, actual: Any, node: str, index: int, source: str) -> None:
        if not self.admit("fabricated_state"):
            return
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


def require_facts(graph: CompiledGraph, facts: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The facts to verify against; bad input when the graph declares facts the source lacks, or the
    source names a built-in. A missing fact is never left for the agent's claims to fill."""
    declared = graph.fact_variables
    if facts is None:
        if declared:
            raise HarnessError(
                f"graph {graph.graph.task_id} declares facts ({', '.join(sorted(declared))}) but none were given "
                "(--facts or --facts-db); the agent's claims cannot stand in for them"
            )
        return {}
    missing = sorted(declared - set(facts))
    if missing:
        raise HarnessError(f"graph {graph.graph.task_id}: the facts do not provide declared fact {missing[0]!r}")
    reserved = sorted(RESERVED_VARIABLES & set(facts))
    if reserved:
        raise HarnessError(f"facts name {reserved[0]!r}, a built-in variable of the verifier")
    check_fact_types(graph.graph.facts.types, facts, "facts")
    return facts


class Checked(NamedTuple):
    """The listed violations and, per kind, the occurrences counted beyond `MAX_LISTED_PER_KIND`."""

    violations: list[Violation]
    unlisted: dict[str, int]


WALK_BUDGET_S = 8.0  # seconds one walk may spend on its events; see the module docstring


class InvariantWalk:
    """Stage 3 one event at a time (what `check_invariants` loops over, and what the online
    `Monitor` feeds as events arrive): each `step` returns the violations that event decided.
    Only the time spent inside `step` counts against the budget (a monitor waits between events)."""

    def __init__(self, graph: CompiledGraph, facts: Mapping[str, Any]) -> None:
        self.budget_s = WALK_BUDGET_S
        self.spent_s = 0.0
        self.stopped = False
        self.graph = graph
        self.checker = _Checker(graph.graph.invariant_kinds)
        for name, value in facts.items():
            self.checker.bind(name, value)
        self.environment: dict[str, tuple[Any, str]] = {name: (value, "environment") for name, value in facts.items()}
        self.claims: dict[str, tuple[Any, int]] = {}  # claim -> (value, event that bound it)
        self.wants_event = "event" in graph.referenced
        self.wants_history = "history" in graph.referenced
        self.history = _History(graph.history_fields, graph.declared_tools)
        if self.wants_history:
            self.checker.bind("history", self.history.value())

    def _new(self, before: int) -> list[Violation]:
        return self.checker.violations[before:]

    def step(self, index: int, event: TraceEvent, before: str, after: str) -> list[Violation]:
        if self.stopped:
            return []
        start = perf_counter()
        seen = len(self.checker.violations)
        self.checker.deadline = start + self.budget_s - self.spent_s
        try:
            self._step(index, event, before, after)
        except _OutOfTime:
            self.stopped = True
            self.checker.violations.append(
                Violation(
                    stage="invariants",
                    kind="verification_deadline",
                    message=f"checking the invariants took more than {self.budget_s:g} s by event {index}; the rest of the trace was not checked",
                    event_index=index,
                )
            )
        self.spent_s += perf_counter() - start
        return self._new(seen)

    def _step(self, index: int, event: TraceEvent, before: str, after: str) -> None:
        graph, checker, environment = self.graph, self.checker, self.environment
        nodes = graph.nodes
        empty: tuple[Expression, ...] = ()
        if after != before:
            left, entered = nodes.get(before), nodes.get(after)
            checker.run("postcondition_failed", left.postcondition if left else empty, before, index)
            checker.run("precondition_failed", entered.precondition if entered else empty, after, index)
        if event.event_type == "tool_call":
            spec = graph.graph.tools.get(event.tool_name or "")
            for name, dotted in (spec.provides.items() if spec else ()):
                value = _dig(event.tool_output, dotted)
                if value is _MISSING:
                    continue
                known = environment.get(name)
                if known is not None and known[1] == "environment" and not same_value(value, known[0]):
                    checker.fabricated(name, value, known[0], after, index, "environment (recorded tool output)")
                    continue
                environment[name] = (value, f"recorded output of {event.tool_name}")
                checker.bind(name, value)
            if self.wants_history:
                self.history.record(event)
                checker.bind("history", self.history.value())
        for name, value in event.context.items():
            known = environment.get(name)
            if known is not None:
                if not claim_holds(value, known[0]):
                    checker.fabricated(name, value, known[0], after, index, known[1])
            elif name in self.claims:
                if not same_value(value, self.claims[name][0]):
                    checker.rebound(name, self.claims[name], value, after, index)
            elif name in graph.context_variables:
                self.claims[name] = (value, index)
                checker.bind(name, value)
        if self.wants_event:
            checker.bind(
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

    def finish(self, final: str, last_index: int | None) -> list[Violation]:
        """The final node's postcondition, at the last event (None for an empty trace); nothing
        once the walk has stopped at its budget."""
        if self.stopped:
            return []
        self.checker.deadline = float("inf")  # one node's postcondition, after the budgeted walk
        seen = len(self.checker.violations)
        final_node = self.graph.nodes.get(final)
        if final_node is not None:
            self.checker.run("postcondition_failed", final_node.postcondition, final, last_index)
        return self._new(seen)


def check_invariants(
    graph: CompiledGraph, trace: Trace, states: Sequence[StatePair], facts: Mapping[str, Any]
) -> Checked:
    walk = InvariantWalk(graph, facts)
    for index, event in enumerate(trace.events):
        walk.step(index, event, *states[index])
    final = states[-1][1] if states else graph.graph.initial_state
    walk.finish(final, len(trace.events) - 1 if states else None)
    return Checked(walk.checker.violations, dict(walk.checker.unlisted))
