"""What evaluating invariants costs: the CEL values a `Scope` converts must grow with what each
evaluation reads, never with the facts beside it. The red team's 1,500-call τ-bench trace took about
a minute because every global invariant reads `steps[event.index]`, and rebinding `event` made the
library copy the whole `steps` list again (O(n^2) in the trace's length). Work is counted
(`ScopeWork`, in JSON nodes converted), never timed."""

from __future__ import annotations

from typing import Any

import pytest

from harness.shield import parse_graph, parse_trace
from harness.shield.compiled import compile_graph
from harness.shield.expressions import Scope, compile_expression
from harness.shield.invariants import InvariantWalk

# Facts of one record per event, read at the current event, as τ-bench's airline graph does.
GRAPH = {
    "format_version": 1,
    "task_id": "steps",
    "initial_state": "A",
    "goal_states": ["A"],
    "facts": {"variables": ["steps"]},
    "global_invariants": ["steps[event.index].ok", "steps[event.index].tool == '' || steps[event.index].ok"],
    "nodes": [{"node_id": "A", "invariant": "event.index >= 0", "actions": ["say"], "next_allowed": ["A"]}],
}


def _work(events: int) -> Any:
    compiled = compile_graph(parse_graph(GRAPH, "steps.json"))
    facts = {"steps": [{"ok": True, "tool": "", "text": f"message {index}", "calls": [index]} for index in range(events)]}
    trace = parse_trace({"task_id": "steps", "events": [{"event_type": "agent_message", "action": "say"}] * events}, "trace")
    walk = InvariantWalk(compiled, facts)
    for index, event in enumerate(trace.events):
        assert walk.step(index, event, "A", "A") == []
    return walk.checker.scope.work


def test_doubling_the_trace_doubles_the_work() -> None:
    small, large = _work(500), _work(1000)
    assert (small.evaluations, large.evaluations) == (1500, 3000)  # 3 expressions per event
    # The context is rebuilt three times whatever the length: for `event` (read first, by the
    # node's invariant), for `steps`, and once more when `event` changes and moves to the resolver.
    assert (small.rebuilds, large.rebuilds) == (3, 3)
    total_small, total_large = small.rebuilt + small.resolved, large.rebuilt + large.resolved
    assert 1.9 <= total_large / total_small <= 2.1, (small, large)
    # Per event, only `event` is converted (its 9 nodes, once per expression that reads it).
    assert large.resolved == (1000 - 1) * 9 * 3


# A variable rebound per event is served by the resolver; each value must read as itself
# (`null` included, which the resolver's None would otherwise fall through to), and a value CEL
# cannot hold is an error, never a silent null or double.
REBINDINGS = [
    ("null_after_a_value", [1, None], "x == null", [False, True], [None, None]),
    ("value_after_null", [None, 2, 3], "x == 3", [False, False, True], [None, None, None]),
    ("map_then_list", [{"a": 1}, [1, 2]], "size(x) == 2", [False, True], [None, None]),
    ("int_past_64_bits", [1, 2**70], "x > 0", [True, False], [None, "variable 'x': an integer does not fit CEL's 64 bits"]),
    ("not_json", [1, {"a": 1j}], "x == x", [True, False], [None, "variable 'x': a complex is not a JSON value"]),
]


@pytest.mark.parametrize(
    ("values", "source", "holds", "errors"), [case[1:] for case in REBINDINGS], ids=[case[0] for case in REBINDINGS]
)
def test_a_rebound_variable_reads_its_current_value(values: list[Any], source: str, holds: list[bool], errors: list[str | None]) -> None:
    scope = Scope()
    scope.set("big", list(range(1000)))  # stays in the context: never converted again
    expression = compile_expression(f"{source} && size(big) == 1000")
    results = []
    for value in values:
        scope.set("x", value)
        results.append(scope.evaluate(expression))
    assert results == list(zip(holds, errors))
    assert scope.work.rebuilds <= 2  # `big` is copied at most twice, however often `x` changes
