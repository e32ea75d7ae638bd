"""Order invariance compares picks by candidate id, so reversing the list does not fool it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.analysis import order_invariance
from harness.selection import ProblemResult

IDS = ["a", "b", "c"]


def _selection(problem: Callable[..., ProblemResult], picks: dict[str, str | None], *, reverse: bool) -> list[ProblemResult]:
    """One problem per entry, candidates a, b, c (reversed when `reverse`), the pick given by id."""
    ids = IDS[::-1] if reverse else IDS
    return [
        problem(pid, [{"id": cid} for cid in ids], selected=None if pick is None else ids.index(pick))
        for pid, pick in picks.items()
    ]


@pytest.mark.parametrize(
    ("original", "reordered", "expected", "compared"),
    [
        pytest.param({"p1": "a", "p2": "c"}, {"p1": "a", "p2": "c"}, 1.0, 2, id="same-ids-at-reversed-positions"),
        pytest.param({"p1": "a", "p2": "b"}, {"p1": "c", "p2": "b"}, 0.5, 2, id="one-of-two-changed"),
        pytest.param({"p1": "a", "p2": None}, {"p1": "a", "p2": "b"}, 0.5, 2, id="pick-vs-none-is-a-change"),
        pytest.param({"p1": None, "p2": "b"}, {"p1": None, "p2": "b"}, 1.0, 1, id="neither-picked-is-left-out"),
        pytest.param({"p1": None}, {"p1": None}, None, 0, id="nothing-comparable"),
    ],
)
def test_order_invariance(
    problem: Callable[..., ProblemResult],
    original: dict[str, str | None], reordered: dict[str, str | None], expected: float | None, compared: int
) -> None:
    metrics = order_invariance(_selection(problem, original, reverse=False), _selection(problem, reordered, reverse=True))
    assert metrics == {"order_invariance": expected, "order_invariance.n": compared}


def test_order_invariance_rejects_different_problem_sets(problem: Callable[..., ProblemResult]) -> None:
    with pytest.raises(ValueError, match="different problems"):
        order_invariance([problem("p1", [{}], selected=0)], [problem("p2", [{}], selected=0)])
