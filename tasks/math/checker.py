"""The MATH anchor checker: read the final answer as a reader would, then judge it under hard caps.

Order (each stage's outcome ends the check, never correct unless the last says so):
1. `too_long`: the candidate exceeds `tasks.visible.MAX_TEXT_CHARS`; `no_answer`: it states no final
   answer (`extract.read_answer`); `answer_too_long`: a final answer over `MAX_ANSWER_CHARS`.
2. `hedged`: a final answer states more than one value for the gold's one (`hedges`), or the
   final statements (boxes on the last box's line, a later marker line) get different verdicts
   (`final_statements_disagree`).
   Every final statement and the gold are first put in one spelling (`spelling.canonical`: digit
   groups, LaTeX spacing, font commands) and a trailing noun naming what the problem counts is
   dropped (`spelling.without_counted_noun`: "9 divisors" is 9).
3. `wrong_unit`: a stated unit differs from the gold's or the asked one (`units`).
4. the verdict on the answer with units removed, by these rules (the `rule` in `details`):
   - `asked_precision`: a decimal answer where the problem asks for a rounded value: correct iff it
     is the gold rounded to the asked place (`precision`), whatever the two checkers say;
   - `exact_decimal`: any other decimal answer: correct iff the SymPy check, which reads a decimal
     as the exact number it writes, says equal (Math-Verify's 6-place rounding is not used);
   - `same_normal_form`: Math-Verify says no, SymPy yes, and the two normalise to the same text
     (`32\\,348` and `32,\\!348`: a spelling Math-Verify does not read), the third check: correct;
   - `stricter_verdict`: Math-Verify and SymPy both gave a verdict and they differ: not correct;
   - `primary_only`: SymPy could not parse a side: Math-Verify's verdict;
   - `agree`: both said the same.
   `check_timeout` / `check_error`: a check Math-Verify's verdict was needed from overran its cap,
   the candidate's `CHECK_BUDGET_S` ran out, or a worker died (never correct).

`details` carries `secondary` (the SymPy verdict, or "timeout"/"error"), `rule`, `disagreement`
(the verdict is not Math-Verify's, or the two checkers differ) and, when so, `checker_disagreement`:
{math_verify, sympy, rule, verdict, answer}, which the pipeline writes per candidate and counts.
"""

from __future__ import annotations

import atexit
import threading
import time
from dataclasses import dataclass
from typing import Any

from tasks.math.extract import MAX_ANSWER_CHARS, ReadAnswer, read_answer
from tasks.math.hedges import hedge_reason, later_value
from tasks.math.normalise import latex_to_sympy_text
from tasks.math.precision import asked_places, is_decimal
from tasks.math.spelling import canonical, without_counted_noun
from tasks.math.units import expected_units, stated_units, strip_units, unit_conflict
from tasks.math.workers import CallResult, CheckPool
from tasks.types import AnchorOutcome

DEFAULT_TIMEOUT_S = 5.0
CHECK_BUDGET_S = 12.0  # all capped calls for one candidate together
MAX_NESTING = 40  # brackets nested deeper than this are not parsed (parsers recurse per level)

_default_pool: CheckPool | None = None
_default_lock = threading.Lock()


@dataclass(frozen=True)
class MathAnchor:
    """A MATH-500 gold answer with its problem statement (the asked units and rounding live there)."""

    answer: str
    problem: str = ""


@dataclass(frozen=True)
class Verdict:
    """One final statement judged: `correct` is None when a needed check overran or failed."""

    correct: bool | None
    rule: str
    math_verify: bool | str | None
    sympy: bool | str | None
    error: str | None = None
    timed_out: bool = False


def default_pool() -> CheckPool:
    """The process-wide pool used by the anchor store: 2 workers, 5 s cap; started lazily."""
    global _default_pool
    with _default_lock:
        if _default_pool is None:
            _default_pool = CheckPool(workers=2, timeout_s=DEFAULT_TIMEOUT_S)
            atexit.register(_default_pool.close)
        return _default_pool


def _value(result: CallResult) -> bool | str | None:
    return result.value if result.status == "ok" else result.status


class _Budget:
    """The candidate's remaining checking time; a spent budget answers like an overrun call."""

    def __init__(self, pool: CheckPool, seconds: float) -> None:
        self._pool = pool
        self._deadline = time.monotonic() + seconds

    def call(self, name: str, *args: Any) -> CallResult:
        left = self._deadline - time.monotonic()
        if left <= 0:
            return CallResult("timeout", error=f"checking budget of {CHECK_BUDGET_S:g}s spent")
        return self._pool.call(name, *args, timeout_s=min(self._pool.timeout_s, left))


def _normal_text(latex: str) -> str:
    """The normaliser's SymPy text without spaces: equal only for spellings of the same thing."""
    return latex_to_sympy_text(latex).replace(" ", "")


def _judge(gold: str, answer: str, places: int | None, budget: _Budget) -> Verdict:
    """The verdict on one unit-free answer (see the module doc for the rules)."""
    primary = budget.call("math_verify", gold, answer)
    sympy = budget.call("sympy", gold, answer)
    mv, sp = _value(primary), _value(sympy)
    if is_decimal(answer) and places is not None:
        exact = budget.call("precision", gold, answer, places)
        if exact.status != "ok":
            return Verdict(None, "asked_precision", mv, sp, exact.error, exact.status == "timeout")
        return Verdict(exact.value is True, "asked_precision", mv, sp)
    if is_decimal(answer):
        if sympy.status == "timeout":
            return Verdict(None, "exact_decimal", mv, sp, sympy.error, True)
        return Verdict(sp is True, "exact_decimal", mv, sp)
    if primary.status != "ok":
        return Verdict(None, "primary_only", mv, sp, primary.error, primary.status == "timeout")
    if sp is True and mv is False and _normal_text(gold) == _normal_text(answer):
        return Verdict(True, "same_normal_form", mv, sp)
    if isinstance(sp, bool):
        return Verdict(bool(mv) and sp, "agree" if sp == mv else "stricter_verdict", mv, sp)
    return Verdict(bool(mv), "primary_only", mv, sp)


def _details(verdict: Verdict, answer: str) -> dict[str, Any]:
    disagreement = (isinstance(verdict.sympy, bool) and isinstance(verdict.math_verify, bool) and verdict.sympy != verdict.math_verify) or (
        verdict.correct is not None and isinstance(verdict.math_verify, bool) and verdict.correct != verdict.math_verify
    )
    details: dict[str, Any] = {"secondary": verdict.sympy, "rule": verdict.rule, "disagreement": disagreement}
    if disagreement:
        details["checker_disagreement"] = {
            "math_verify": verdict.math_verify,
            "sympy": verdict.sympy,
            "rule": verdict.rule,
            "verdict": verdict.correct,
            "answer": answer,
        }
    return details


def _nesting(text: str) -> int:
    """The deepest nesting of `{[(` in `text`."""
    deepest = depth = 0
    for char in text:
        depth += 1 if char in "{[(" else -1 if char in ")]}" else 0
        deepest = max(deepest, depth)
    return deepest


def _statements(read: ReadAnswer, problem: str) -> tuple[str, ...]:
    """The final statements in one spelling (`spelling`), a noun naming the counted thing dropped."""
    assert read.answer is not None
    return tuple(without_counted_noun(canonical(statement), problem) for statement in (read.answer, *read.also))


def check_answer(gold: str | MathAnchor, text: str, pool: CheckPool | None = None) -> AnchorOutcome:
    """Judge a candidate's full `text` against `gold` (LaTeX, as in MATH's `answer`, with or without
    its problem statement; without one no unit or rounding counts as asked)."""
    anchor = gold if isinstance(gold, MathAnchor) else MathAnchor(gold)
    gold = canonical(anchor.answer)
    read = read_answer(text)
    if read.too_long:
        return AnchorOutcome(False, None, "too_long", {"secondary": None, "disagreement": False})
    if read.answer is None:
        return AnchorOutcome(False, None, "no_answer", {"secondary": None, "disagreement": False})
    statements = _statements(read, anchor.problem)
    trailing, unit_words = canonical(read.trailing), canonical(read.unit_words)
    base: dict[str, Any] = {"secondary": None, "disagreement": False}
    if any(len(statement) > MAX_ANSWER_CHARS for statement in statements):
        return AnchorOutcome(False, read.answer[:MAX_ANSWER_CHARS], "answer_too_long", base)
    if any(_nesting(statement) > MAX_NESTING for statement in statements):
        return AnchorOutcome(False, read.answer, "answer_too_deep", base)
    if later_value(canonical(read.after), " ".join(statements), anchor.problem):
        return AnchorOutcome(False, read.answer, "hedged", {**base, "hedge": "value_after_answer"})
    for statement in statements:
        hedge = hedge_reason(f"{statement} {trailing}", gold, read.boxes_on_last_line)
        if hedge is not None:
            return AnchorOutcome(False, read.answer, "hedged", {**base, "hedge": hedge})
    expected = expected_units(gold, anchor.problem)
    for statement in statements:
        conflict = unit_conflict(stated_units(f"{statement} {trailing} {unit_words}"), expected)
        if conflict is not None:
            return AnchorOutcome(False, read.answer, "wrong_unit", {**base, "unit": conflict})
    budget = _Budget(pool or default_pool(), CHECK_BUDGET_S)
    places = asked_places(anchor.problem)
    gold_value = strip_units(gold) or gold
    verdicts = [_judge(gold_value, strip_units(statement) or statement, places, budget) for statement in statements]
    details = _details(verdicts[0], read.answer)
    failed = next((verdict for verdict in verdicts if verdict.correct is None), None)
    if failed is not None:
        details["error"] = failed.error
        return AnchorOutcome(False, read.answer, "check_timeout" if failed.timed_out else "check_error", details)
    if len({verdict.correct for verdict in verdicts}) > 1:
        return AnchorOutcome(False, read.answer, "hedged", {**details, "hedge": "final_statements_disagree"})
    correct = bool(verdicts[0].correct)
    return AnchorOutcome(correct, read.answer, "correct" if correct else "wrong_answer", details)
