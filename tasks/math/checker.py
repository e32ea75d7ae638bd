"""The MATH anchor checker: extract the final answer, then judge it twice under a hard time cap.

Outcomes (`AnchorOutcome.outcome`):
- `correct` / `wrong_answer`: Math-Verify's verdict (the anchor of record);
- `no_answer`: no `\\boxed{}` or marked final answer in the text (never correct);
- `check_timeout`: Math-Verify overran the cap (never correct);
- `check_error`: Math-Verify raised or its worker died (never correct).

`details` always carries `secondary` (the SymPy verdict: true/false/null for unparsed, or
"timeout"/"error") and `disagreement` (true when both produced a verdict and they differ), so the
pipeline can write `checker_disagreements.jsonl` from it.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from tasks.math.extract import extract_answer
from tasks.math.workers import CallResult, CheckPool
from tasks.types import AnchorOutcome

DEFAULT_TIMEOUT_S = 5.0

_default_pool: CheckPool | None = None
_default_lock = threading.Lock()


def default_pool() -> CheckPool:
    """The process-wide pool used by the anchor store: 2 workers, 5 s cap; started lazily."""
    global _default_pool
    with _default_lock:
        if _default_pool is None:
            _default_pool = CheckPool(workers=2, timeout_s=DEFAULT_TIMEOUT_S)
            atexit.register(_default_pool.close)
        return _default_pool


def _secondary_value(result: CallResult) -> bool | str | None:
    return result.value if result.status == "ok" else result.status


def check_answer(gold: str, text: str, pool: CheckPool | None = None) -> AnchorOutcome:
    """Judge a candidate's full `text` against the `gold` answer (LaTeX, as in MATH's `answer`)."""
    pool = pool or default_pool()
    answer = extract_answer(text)
    if answer is None:
        return AnchorOutcome(False, None, "no_answer", {"secondary": None, "disagreement": False})
    primary = pool.call("math_verify", gold, answer)
    secondary = _secondary_value(pool.call("sympy", gold, answer))
    details: dict[str, Any] = {"secondary": secondary, "disagreement": False}
    if primary.status != "ok":
        details["error"] = primary.error
        outcome = "check_timeout" if primary.status == "timeout" else "check_error"
        return AnchorOutcome(False, answer, outcome, details)
    correct = bool(primary.value)
    if isinstance(secondary, bool) and secondary != correct:
        details["disagreement"] = True
        details["gold"] = gold
    return AnchorOutcome(correct, answer, "correct" if correct else "wrong_answer", details)

