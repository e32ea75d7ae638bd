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


# Deep expressions crash the CEL library itself: a chain of 16,384 additions compiles and then
# overflows the evaluator's stack (SIGSEGV), and 50,000 parentheses panic in its parser's message.
LONG = [
    ("addition_chain", "+".join(["1"] * 16_384) + " > 0"),
    ("negations", "!" * 20_000 + "true"),
    ("parentheses", "(" * 50_000 + "1" + ")" * 50_000 + " > 0"),
]


@pytest.mark.parametrize("source", [case[1] for case in LONG], ids=[case[0] for case in LONG])
def test_an_expression_longer_than_the_cap_is_a_syntax_error_never_a_crash(source: str) -> None:
    """Graphs, `--llm` proposals and `extend` patches all compile through `compile_expression`, so
    the cap there closes the class: the process never reaches the library's recursion."""
    import subprocess
    import sys

    program = (
        "import sys\nfrom harness.shield.expressions import ExpressionError, Scope, compile_expression\n"
        "try:\n    Scope().evaluate(compile_expression(sys.stdin.read()))\n"
        "except ExpressionError as error:\n    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], input=source, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == f"the expression is {len(source):,} characters, more than the 2,048 an expression may have\n"


def test_an_expression_at_the_cap_compiles_and_evaluates() -> None:
    source = "+".join(["1"] * 1_022) + " > 0"
    assert len(source) == 2_047
    assert Scope().evaluate(compile_expression(source)) == (True, None)
