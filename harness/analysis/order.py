"""Order sensitivity: does the pick survive reversing the order the candidates were shown in?

A judge that sees several candidates at once (or scores them in batches) can prefer a position
rather than a solution. The pipeline runs the selection a second time with each problem's candidates
reversed and hands both selections here; picks are compared by candidate id, so the positions
themselves do not matter.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.selection import ProblemResult


def _picks(results: Sequence[ProblemResult]) -> dict[str, str | None]:
    return {
        result.problem_id: None if result.selected is None else result.candidates[result.selected].candidate.candidate_id
        for result in results
    }


def order_invariance(original: Sequence[ProblemResult], reordered: Sequence[ProblemResult]) -> dict[str, float | int | None]:
    """Fraction of problems whose selected candidate id is the same in both selections.

    Both selections must cover the same problems (a mismatch is a pipeline bug: ValueError). A
    problem where neither selection picked anything has nothing to compare and is left out; a pick
    in one selection and none in the other counts as changed. Keys: `order_invariance` (None when
    no problem is comparable) and `order_invariance.n` (problems compared).
    """
    first, second = _picks(original), _picks(reordered)
    if first.keys() != second.keys():
        missing = sorted(first.keys() ^ second.keys())
        raise ValueError(f"the two selections cover different problems, e.g. {missing[:3]}")
    compared = [problem for problem in first if first[problem] is not None or second[problem] is not None]
    unchanged = sum(first[problem] == second[problem] for problem in compared)
    return {
        "order_invariance": unchanged / len(compared) if compared else None,
        "order_invariance.n": len(compared),
    }
