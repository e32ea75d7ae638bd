"""CEL evaluation on hostile values: every failure is an `(False, reason)` result, never an exception."""

from __future__ import annotations

from typing import Any

import pytest

from harness.shield.expressions import Scope, compile_expression

FAILURES = [
    ("division_by_zero", "x / 0 > 0", {"x": 1}, "division by zero"),
    ("index_out_of_range", "x[5] == 1", {"x": [1]}, "index out of bounds"),
    ("int64_overflow", "x + 1 > 0", {"x": 9223372036854775807}, "overflow"),
    ("unconvertible_value", "x == x", {"x": {"a": 1j}}, "variable 'x': a complex is not a JSON value"),
    ("missing_variable", "y == 1", {}, "no source provides variable 'y'"),
]


@pytest.mark.parametrize(("source", "values", "reason"), [case[1:] for case in FAILURES], ids=[case[0] for case in FAILURES])
def test_evaluation_failures_are_results(source: str, values: dict[str, Any], reason: str) -> None:
    scope = Scope()
    scope.update(values)
    holds, error = scope.evaluate(compile_expression(source))
    assert holds is False and error is not None and reason in error
