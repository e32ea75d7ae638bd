"""The two equivalence checks as plain functions, run inside worker processes (see `workers`).

`math_verify_equivalent` is the primary anchor: Math-Verify's `parse` + `verify` with their signal
timeouts switched off (`parsing_timeout=None`, `timeout_seconds=None`), which is the library's
documented thread-safe mode; the hard time cap comes from the worker process instead.
`sympy_equivalent` (in `normalise`) is the independent second opinion; `precision_equivalent` is the
third check for decimals where the problem asks for a rounded value (`precision`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable


def _boxed(latex: str) -> str:
    return "\\boxed{" + latex + "}"


def math_verify_equivalent(gold: str, answer: str) -> bool:
    """Math-Verify's verdict on `answer` against `gold` (both LaTeX answer strings, not full texts)."""
    from math_verify import parse, verify

    # Math-Verify warns on every call that we must time out ourselves; we do, in the worker.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    gold_parsed = parse(_boxed(gold), parsing_timeout=None)
    answer_parsed = parse(_boxed(answer), parsing_timeout=None)
    if not gold_parsed or not answer_parsed:
        return gold.strip() == answer.strip()
    return bool(verify(gold_parsed, answer_parsed, timeout_seconds=None))


def sympy_second_opinion(gold: str, answer: str) -> bool | None:
    """The normaliser + SymPy verdict; None when either side cannot be parsed safely."""
    from tasks.math.normalise import sympy_equivalent

    return sympy_equivalent(gold, answer)


def precision_equivalent(gold: str, answer: str, places: int) -> bool | None:
    """`answer` is the gold rounded to `places` decimal places (`precision`); None when unparsed."""
    import sympy

    from tasks.math.normalise import parse_answer
    from tasks.math.precision import matches_asked_precision

    left, right = parse_answer(gold), parse_answer(answer)
    if not isinstance(left, sympy.Expr) or not isinstance(right, sympy.Expr):
        return None
    return matches_asked_precision(left, right, places)


def warm_up() -> None:
    """Import the heavy libraries and run one check, so startup cost is paid before any capped call."""
    math_verify_equivalent("1", "1")
    sympy_second_opinion("1", "1")


CHECKS: dict[str, Callable[..., bool | None]] = {"math_verify": math_verify_equivalent, "sympy": sympy_second_opinion, "precision": precision_equivalent}
