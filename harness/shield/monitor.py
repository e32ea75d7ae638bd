"""`Monitor`: verification while the agent runs (BenchShield §4.2: invariants checked when the agent
reaches a node, not after the run).

Events arrive one at a time (`push`); each returns the violations that event made decidable:
- intake (an undeclared tool, an input outside its domain) and the parser's findings, at the event;
- an illegal transition or an unknown state, when it is entered;
- a required state skipped, as soon as the state just entered can no longer reach it by legal moves
  (so the path is a violation whatever follows: reaching it later needs an illegal move); only
  what no continuation can undo under the graph's own rules is decided early, so when the graph or
  the options list `illegal_transition` among the finding kinds (an illegal move is then allowed),
  skipped required states are decided at the end;
- node invariants, pre- and postconditions and global invariants, at the event, when the facts are
  known from the start (`facts=`: a facts file, or facts computed per step such as τ-bench's replay,
  whose record of event i depends only on the trajectory through event i's message); with the facts
  read only at the end (`facts_at_end=True`), those checks that read no fact (`history`, `event`,
  recorded tool outputs) still run at each event;
- what only the end can tell, at `finish`: a goal not reached, required states never visited, the
  final node's postcondition, and, with `facts_at_end=True` (an environment database read when the run
  is over), every invariant that reads a fact, walked over the buffered events then.
The per-event work is that of one step of each stage (the same `Deriver`, `PathWalk`, `OrderWalk`,
`InvariantWalk` the batch verifier loops over): it does not grow with the trace, except where the
graph itself reads something that does (a fact listing every event is bound once; `history` holds
one entry per distinct call).

`finish` returns the batch report (`verify` on the whole trace) beside what was decided online; its
verdict equals the online one (a test holds the two equal on every shipped trace). Online
violations can list more than the report: the batch skips invariants once path legality failed,
the monitor has already checked them by then. The seeded deep-stage sample hashes the whole trace,
so the monitor refuses `deep_sample_rate < 1`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core import HarnessError
from harness.shield.compiled import CompiledGraph, compile_graph
from harness.shield.facts import FactsProvider, resolve_facts
from harness.shield.graph import StateGraph
from harness.shield.intake import check_event
from harness.shield.invariants import InvariantWalk, require_facts
from harness.shield.parser import Deriver
from harness.shield.path import OrderWalk, PathWalk
from harness.shield.report import FINDING_KINDS, ShieldReport, VerifyOptions, Violation
from harness.shield.trace import MAX_EVENTS, Trace, TraceEvent
from harness.shield.verification import verify

MAX_REACH_NODES = 2_000  # above this, skipped required states are decided at the end only


def _reach(graph: CompiledGraph) -> dict[str, frozenset[str]] | None:
    """Nodes reachable from each node by legal moves (itself included), or None for huge graphs."""
    nodes = graph.nodes
    if len(nodes) > MAX_REACH_NODES:
        return None
    reach: dict[str, frozenset[str]] = {}
    for start in nodes:
        seen = {start}
        queue = deque([start])
        while queue:
            for nxt in nodes[queue.popleft()].next_allowed:
                if nxt not in seen and nxt in nodes:
                    seen.add(nxt)
                    queue.append(nxt)
        reach[start] = frozenset(seen)
    return reach


@dataclass(frozen=True)
class MonitorResult:
    """The batch report of the whole trace, and what the monitor decided online, in decision order."""

    report: ShieldReport
    online: tuple[Violation, ...]
    decided_at: tuple[int | None, ...]  # per online violation: the event index it was decided at, None: at the end

    @property
    def verdict(self) -> str:
        return "violation" if self.online else "pass"

    @property
    def first_event(self) -> int | None:
        """The event at which the first violation was decided (None: clean, or only the end told)."""
        return self.decided_at[0] if self.decided_at else None


class Monitor:
    """Verify a trace as it grows; see the module docstring.

    `header` holds the trace's own fields (`task_id`, `reward`, ...; its events are ignored): without
    one, the trace is taken to be for the graph's task and to carry no reward."""

    def __init__(
        self,
        graph: StateGraph,
        header: Trace | None = None,
        facts: FactsProvider | Mapping[str, Any] | None = None,
        options: VerifyOptions = VerifyOptions(),
        *,
        facts_at_end: bool = False,
    ) -> None:
        if options.deep_sample_rate < 1.0:
            raise HarnessError("the monitor verifies every trace deeply: --deep-sample-rate draws from a hash of the whole trace")
        self.graph = graph
        self.compiled = compile_graph(graph)
        self.header = header if header is not None else Trace(task_id=graph.task_id, events=())
        if self.header.task_id != graph.task_id:
            raise HarnessError(f"trace is for task {self.header.task_id!r}, graph is {graph.task_id!r}")
        self.options = options
        # Kinds the report lists as findings, never violations (the graph's, e.g. τ-bench's
        # effect_mismatch): the online verdict leaves them out as the batch one does.
        self.finding_kinds = FINDING_KINDS | options.finding_kinds | self.compiled.finding_kinds
        self.facts_at_end = facts_at_end
        self.facts: Mapping[str, Any] | None = None
        if not facts_at_end:
            self.facts = require_facts(self.compiled, None if facts is None else resolve_facts(facts))
        # With the facts still unknown, the checks that read none of them run now all the same.
        self.invariants = InvariantWalk(self.compiled, self.facts if self.facts is not None else {})
        self.deriver = Deriver(self.compiled)
        self.path = PathWalk(self.compiled)
        self.order = OrderWalk()
        # Early "skipped" holds only when a later visit needs a move that is itself a violation: with
        # illegal moves reported as findings, any state may still come, so the end decides.
        self.reach = None if "illegal_transition" in self.finding_kinds else _reach(self.compiled)
        self.events: list[TraceEvent] = []
        self.online: list[Violation] = []
        self.decided_at: list[int | None] = []
        self._skipped: set[str] = set()

    def _required_now_unreachable(self, index: int, after: str) -> list[Violation]:
        if self.reach is None or after not in self.reach:
            return []
        found = []
        for state in self.graph.required_states:
            if state not in self.path.visited and state not in self._skipped and state not in self.reach[after]:
                self._skipped.add(state)
                found.append(
                    Violation(
                        stage="path",
                        kind="required_state_skipped",
                        message=f"required state {state!r} cannot be reached from {after!r}, entered without it",
                        node=state,
                        event_index=index,
                    )
                )
        return found

    def push(self, event: TraceEvent) -> list[Violation]:
        """Take the next event; return the violations it made decidable. A trace is held to
        `MAX_EVENTS`, as a batch input is: the event past it is refused (bad input)."""
        index = len(self.events)
        if index >= MAX_EVENTS:
            raise HarnessError(f"event {index:,} is past the {MAX_EVENTS:,} events one trace may hold (split the run into traces)")
        self.events.append(event)
        found = check_event(self.compiled, index, event)
        seen = len(self.deriver.result.findings)
        before, after = self.deriver.step(index, event)
        found += [
            Violation(stage="path", kind=item.kind, message=item.message, node=item.node, event_index=item.index)
            for item in self.deriver.result.findings[seen:]
        ]
        found += self.path.step(index, before, after)
        found += self.order.step(index, event)
        if after != before:
            found += self._required_now_unreachable(index, after)
        checked = self.invariants.step(index, event, before, after)
        found += checked if not self.facts_at_end else [v for v in checked if self._reads_no_fact(v)]
        return self._record(found, index)

    def _reads_no_fact(self, violation: Violation) -> bool:
        """Whether a check run before the facts are known read none of them (its verdict stands)."""
        return violation.expression is not None and not set(violation.values) & self.compiled.fact_variables

    def _record(self, found: list[Violation], index: int | None) -> list[Violation]:
        found = [violation for violation in found if violation.kind not in self.finding_kinds]
        self.online += found
        self.decided_at += [index] * len(found)
        return found

    def trace(self) -> Trace:
        """The trace so far: the header's fields and every event pushed."""
        return self.header.model_copy(update={"events": tuple(self.events)})

    def finish(self, facts: FactsProvider | Mapping[str, Any] | None = None) -> MonitorResult:
        """End of input: decide what only the end can tell and return the result. `facts` are the
        end-of-run facts when the monitor was built with `facts_at_end=True` (else ignored)."""
        last = len(self.events) - 1 if self.events else None
        end = [v for v in self.path.finish() if not (v.kind == "required_state_skipped" and v.node in self._skipped)]
        if self.facts_at_end:
            self.facts = require_facts(self.compiled, None if facts is None else resolve_facts(facts))
            walk = InvariantWalk(self.compiled, self.facts)
            for index, event in enumerate(self.events):
                walk.step(index, event, *self.deriver.result.states[index])
            walk.finish(self.deriver.current, last)
            early = {(v.kind, v.node, v.expression, v.event_index) for v in self.online}
            end += [v for v in walk.checker.violations if (v.kind, v.node, v.expression, v.event_index) not in early]
        else:
            end += self.invariants.finish(self.deriver.current, last)
        self._record(end, None)
        report = verify(self.graph, self.trace(), self.facts, self.options, trace_id=self.header.trace_id)
        return MonitorResult(report=report, online=tuple(self.online), decided_at=tuple(self.decided_at))
