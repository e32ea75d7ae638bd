"""ECE (Guo et al. 2017, eq. 3) and Brier score on hand-computed cases; every expectation is worked in its id or comment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.analysis import brier_score, calibration, expected_calibration_error, plot_reliability, reliability
from harness.selection import ProblemResult


@pytest.mark.parametrize(
    ("scores", "labels", "bins", "expected"),
    [
        # one bin [0.2, 0.3): accuracy 1/4 = mean score 0.25
        pytest.param([0.25] * 4, [True, False, False, False], 10, 0.0, id="calibrated-bin"),
        # one bin: accuracy 0.5, confidence 0.9
        pytest.param([0.9, 0.9], [True, False], 10, 0.4, id="overconfident"),
        # bin 1: |0 - 0.1| * 2/4; bin 8: |0.5 - 0.8| * 2/4 -> 0.05 + 0.15
        pytest.param([0.1, 0.1, 0.8, 0.8], [False, False, True, False], 10, 0.2, id="two-bins"),
        # 1.0 belongs to the last (closed) bin, and is right
        pytest.param([1.0], [True], 10, 0.0, id="score-one-in-last-bin"),
        # bins=2: 0.5 opens the upper bin: |1 - 0.5|/2 + |0 - 0.4|/2 (0.05 if 0.5 fell in the lower bin)
        pytest.param([0.5, 0.4], [True, False], 2, 0.45, id="bin-edge-goes-up"),
        # one bin holds everything: |1/2 - 0.5|
        pytest.param([0.2, 0.8], [False, True], 1, 0.0, id="single-bin"),
    ],
)
def test_expected_calibration_error(scores: list[float], labels: list[bool], bins: int, expected: float) -> None:
    assert expected_calibration_error(scores, labels, bins) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("scores", "labels", "expected"),
    [
        pytest.param([0.9, 0.2], [True, False], (0.01 + 0.04) / 2, id="mostly-right"),
        pytest.param([1.0, 0.0], [False, True], 1.0, id="confidently-wrong"),
        pytest.param([0.5, 0.5], [True, False], 0.25, id="hedging"),
    ],
)
def test_brier_score(scores: list[float], labels: list[bool], expected: float) -> None:
    assert brier_score(scores, labels) == pytest.approx(expected)


def test_no_scores_gives_none_and_bad_input_raises() -> None:
    assert expected_calibration_error([], []) is None
    assert brier_score([], []) is None
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_calibration_error([1.5], [True])
    with pytest.raises(ValueError, match="bins"):
        expected_calibration_error([0.5], [True], bins=0)


def test_calibration_per_member_and_ensemble_ignores_unscored(problem: Callable[..., ProblemResult]) -> None:
    results = [
        problem(
            "p1",
            [
                {"correct": True, "scores": {"a": 0.9, "b": None}, "ensemble": 0.9},
                {"correct": False, "scores": {"a": 0.3, "b": 0.6}, "ensemble": 0.3},
            ],
        ),
        problem("p2", [{"correct": False, "scores": {"a": 0.9, "b": None}, "ensemble": None}]),
    ]
    metrics = calibration(results)
    # a: bin 9 holds 0.9 (right) and 0.9 (wrong): |0.5 - 0.9| * 2/3; bin 3: |0 - 0.3| * 1/3
    assert metrics["calibration.a.ece"] == pytest.approx(0.8 / 3 + 0.1)
    assert metrics["calibration.a.brier"] == pytest.approx((0.01 + 0.09 + 0.81) / 3)
    assert metrics["calibration.a.n"] == 3
    # b scored one candidate, wrongly, at 0.6
    assert metrics["calibration.b.ece"] == pytest.approx(0.6)
    assert metrics["calibration.b.n"] == 1
    # the ensemble's unscored candidate in p2 stays out
    assert metrics["calibration.ensemble.n"] == 2
    assert metrics["calibration.ensemble.brier"] == pytest.approx((0.01 + 0.09) / 2)


def test_calibration_without_a_judge_reports_only_an_empty_ensemble(problem: Callable[..., ProblemResult]) -> None:
    metrics = calibration([problem("p1", [{"correct": True}])])
    assert metrics == {"calibration.ensemble.ece": None, "calibration.ensemble.brier": None, "calibration.ensemble.n": 0}


def test_reliability_table_lists_non_empty_bins_and_plots(problem: Callable[..., ProblemResult], tmp_path: Path) -> None:
    results = [
        problem(
            "p1",
            [
                {"correct": True, "scores": {"a": 0.95}, "ensemble": 0.95},
                {"correct": False, "scores": {"a": 0.85}, "ensemble": 0.85},
                {"correct": False, "scores": {"a": 0.05}, "ensemble": 0.05},
            ],
        )
    ]
    table = reliability(results)
    assert set(table) == {"a", "ensemble"}
    assert table["a"] == [
        {"low": 0.0, "high": 0.1, "confidence": pytest.approx(0.05), "accuracy": 0.0, "count": 1},
        {"low": 0.8, "high": 0.9, "confidence": pytest.approx(0.85), "accuracy": 0.0, "count": 1},
        {"low": 0.9, "high": 1.0, "confidence": pytest.approx(0.95), "accuracy": 1.0, "count": 1},
    ]
    path = plot_reliability(table, tmp_path / "reliability.png", title="test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
