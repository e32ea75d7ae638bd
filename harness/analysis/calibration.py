"""Calibration of each judge's scores against the hidden anchors.

A judge's score is read as its probability that the candidate is correct. Two numbers say how far
that reading is from the anchors:

- Expected calibration error (Guo et al. 2017, "On Calibration of Modern Neural Networks", eq. 3):
  scores fall into `bins` equal-width bins on [0, 1] (default 10; the last bin is closed, so a score
  of exactly 1.0 lands in it), and ECE = sum over bins of (bin size / n) * |accuracy - mean score|.
  Equal-width bins are the paper's choice and the common one, so numbers compare across papers;
  they are coarse when a judge's scores cluster, which is why the diagram also shows bin counts.
- Brier score (Brier 1950): mean of (score - correct)^2; a proper scoring rule, unlike ECE, so a
  judge cannot improve it by hedging toward the base rate without being right more often.

Unscored verdicts are ignored (a parse failure is never a verdict); `n` says how many scores each
number rests on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from harness.analysis._records import ENSEMBLE, member_names, score_of
from harness.selection import ProblemResult

DEFAULT_BINS = 10


def _pairs(results: Sequence[ProblemResult], judge: str) -> tuple[np.ndarray, np.ndarray]:
    scores, labels = [], []
    for result in results:
        for record in result.candidates:
            score = score_of(record, judge)
            if score is not None:
                scores.append(score)
                labels.append(record.outcome.correct)
    return np.asarray(scores, dtype=float), np.asarray(labels, dtype=float)


def _bin_index(scores: np.ndarray, bins: int) -> np.ndarray:
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    if len(scores) and not (np.all(scores >= 0.0) and np.all(scores <= 1.0)):
        raise ValueError("calibration needs scores in [0, 1]")
    return np.minimum((scores * bins).astype(int), bins - 1)


def expected_calibration_error(scores: ArrayLike, labels: ArrayLike, bins: int = DEFAULT_BINS) -> float | None:
    """ECE over equal-width bins (Guo et al. 2017); None without scores."""
    score_array, label_array = np.asarray(scores, dtype=float), np.asarray(labels, dtype=float)
    index = _bin_index(score_array, bins)
    if not len(score_array):
        return None
    gap = np.bincount(index, weights=label_array - score_array, minlength=bins)
    # |sum(label - score)| per bin equals count * |accuracy - confidence|.
    return float(np.abs(gap).sum() / len(score_array))


def brier_score(scores: ArrayLike, labels: ArrayLike) -> float | None:
    """Mean squared error of the scores against 0/1 correctness; None without scores."""
    score_array, label_array = np.asarray(scores, dtype=float), np.asarray(labels, dtype=float)
    return float(np.mean((score_array - label_array) ** 2)) if len(score_array) else None


def calibration(results: Sequence[ProblemResult], *, bins: int = DEFAULT_BINS) -> dict[str, float | int | None]:
    """ECE, Brier score and count for every member judge and for the ensemble.

    Keys: `calibration.<judge>.ece`, `calibration.<judge>.brier`, `calibration.<judge>.n`, with
    `<judge>` each member name and `ensemble`; the values are None (and n 0) for a judge with no scores.
    """
    metrics: dict[str, float | int | None] = {}
    for judge in [*member_names(results), ENSEMBLE]:
        scores, labels = _pairs(results, judge)
        metrics[f"calibration.{judge}.ece"] = expected_calibration_error(scores, labels, bins)
        metrics[f"calibration.{judge}.brier"] = brier_score(scores, labels)
        metrics[f"calibration.{judge}.n"] = len(scores)
    return metrics


def reliability(results: Sequence[ProblemResult], *, bins: int = DEFAULT_BINS) -> dict[str, list[dict[str, float | int]]]:
    """Per judge, the non-empty bins of its reliability diagram: what `plot_reliability` draws.

    Each bin is `{"low", "high", "confidence", "accuracy", "count"}` (mean score and fraction correct
    of the scores in [low, high)); judges without scores are left out.
    """
    table: dict[str, list[dict[str, float | int]]] = {}
    for judge in [*member_names(results), ENSEMBLE]:
        scores, labels = _pairs(results, judge)
        if not len(scores):
            continue
        index = _bin_index(scores, bins)
        counts = np.bincount(index, minlength=bins)
        score_sums = np.bincount(index, weights=scores, minlength=bins)
        label_sums = np.bincount(index, weights=labels, minlength=bins)
        table[judge] = [
            {
                "low": b / bins,
                "high": (b + 1) / bins,
                "confidence": float(score_sums[b] / counts[b]),
                "accuracy": float(label_sums[b] / counts[b]),
                "count": int(counts[b]),
            }
            for b in range(bins)
            if counts[b]
        ]
    return table
