"""Ensemble aggregates on hand-computed cases; unscored members are left out, never imputed."""

import pytest

from judges.ensemble import aggregate
from judges.judge import option_score


@pytest.mark.parametrize(
    ("method", "scores", "expected"),
    [
        ("min", [0.9, 0.2, 0.6], 0.2),
        ("mean", [0.9, 0.3, 0.6], 0.6),
        ("median", [0.9, 0.2, 0.6], 0.6),
        ("median", [0.9, 0.1], 0.5),
        ("majority", [0.9, 0.2, 0.6], 2 / 3),
        ("majority", [0.5, 0.49], 0.5),
        ("min", [0.9, None, 0.4], 0.4),
        ("mean", [None, 0.8], 0.8),
        ("veto", [0.9, 0.7, 0.8], 0.8),
        ("veto", [0.9, 0.4, 0.8], 0.0),
        ("quorum:2", [0.9, 0.3, 0.6], 0.6),
        ("quorum:1", [0.2, 0.3], 0.3),
        ("quorum:3", [0.9, 0.8, 0.1], 0.1),
    ],
)
def test_aggregates(method: str, scores: list[float | None], expected: float) -> None:
    assert aggregate(scores, method) == pytest.approx(expected)


def test_nothing_scored_gives_no_score() -> None:
    assert aggregate([None, None], "min") is None


@pytest.mark.parametrize("method", ["max", "quorum:0", "quorum:x", "quorum"])
def test_unknown_aggregate_is_rejected(method: str) -> None:
    with pytest.raises(ValueError):
        aggregate([0.5], method)


def test_quorum_needs_k_scored_members() -> None:
    assert aggregate([0.9, None, None], "quorum:2") is None


def test_option_score_normalises_over_the_two_options() -> None:
    import math

    assert option_score({"Yes": math.log(0.3), "No": math.log(0.1)}, "Yes", "No") == pytest.approx(0.75)
    assert option_score({"Yes": -math.inf, "No": -math.inf}, "Yes", "No") is None
