"""Which traces `mine` takes as honest: a CEL filter over a trace's own fields.

    reward >= 1                      # τ-bench's successes
    reward >= 0.9 && meta.source == 'tau-bench'

The filter reads `reward`, `clean_reward` (null when absent), `task_id`, `trace_id`, `meta` and
`event_count`; any other variable is bad input, refused before a trace is read. A trace the filter
cannot be evaluated on (no reward for `reward >= 1`) is not accepted, and is counted as such.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core import HarnessError
from harness.shield.expressions import Expression, ExpressionError, Scope, compile_expression, shown
from harness.shield.trace import Trace

FILTER_VARIABLES = frozenset({"reward", "clean_reward", "task_id", "trace_id", "meta", "event_count"})


@dataclass(frozen=True)
class Acceptance:
    accepted: bool
    error: str | None = None  # why the filter could not be evaluated, when it could not


@dataclass(frozen=True)
class AcceptFilter:
    expression: Expression

    def __call__(self, name: str, trace: Trace) -> Acceptance:
        scope = Scope()
        scope.update(
            {
                "reward": trace.reward,
                "clean_reward": trace.clean_reward,
                "task_id": trace.task_id,
                "trace_id": trace.trace_id or name,
                "meta": trace.meta,
                "event_count": len(trace.events),
            }
        )
        holds, error = scope.evaluate(self.expression)
        return Acceptance(accepted=holds, error=error)


def accept_filter(source: str) -> AcceptFilter:
    """Compile `source`; a syntax error or an unknown variable is bad input (one line, exit 2)."""
    try:
        expression = compile_expression(source)
    except ExpressionError as error:
        raise HarnessError(f"--accept {shown(source)!r}: CEL syntax error: {error}") from None
    unknown = sorted(set(expression.variables) - FILTER_VARIABLES)
    if unknown:
        raise HarnessError(f"--accept {source!r}: unknown variable {unknown[0]!r} (a filter reads {', '.join(sorted(FILTER_VARIABLES))})")
    return AcceptFilter(expression)
