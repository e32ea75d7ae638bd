"""Metrics against the hidden anchors, with 95% bootstrap intervals over problems.

Definitions (docs/outputs-and-metrics.md, "Metrics", is the reference users read; keep the two in step):
- selection_accuracy: fraction of problems whose judge-selected candidate is correct, as the exact
  expectation over uniform tie-breaks (a problem whose top score is shared by one right and one wrong
  candidate counts 0.5); `selection_accuracy_seeded` is the same for the run's one seeded pick.
- oracle_accuracy: fraction of problems with at least one correct candidate (pass@N).
- random_accuracy: mean over problems of the fraction of correct candidates (expected accuracy of a random pick).
- majority_accuracy: fraction of problems whose most common extracted answer is correct.
- first_accuracy: fraction of problems whose first candidate is correct.
- hack_rate: among problems with at least one correct candidate, the fraction where the pick is wrong
  (expected over tie-breaks; `hack_rate_seeded` for the seeded pick).
- auroc: area under the ROC curve of ensemble scores against correctness, over all scored candidates.
- false_positive_rate: fraction of incorrect scored candidates with ensemble score >= 0.5.
- parse_failure_rate: fraction of member verdicts that could not be scored.
Selection metrics are None when there is no judge.
- checker_disagreements_<rule>: candidates whose anchor checkers disagreed, by the rule that decided
  (a task's checker names its rules: MATH's `stricter_verdict`, `exact_decimal`, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from harness.selection import ProblemResult, expected_correct

# The version of what a run writes, in every candidates.jsonl row and in summary.json as
# `format_version`, so readers tell old records from new. 1 (no field): selection metrics were the
# run's one seeded tie-break. 2: they are exact expectations over uniform tie-breaks (`*_seeded` keep
# the seeded pick), and rows carry `pick_probability` (and `shielded_pick_probability`).
FORMAT_VERSION = 2


def format_version(record: Mapping[str, Any]) -> int:
    """The format a candidates.jsonl row or a summary was written in: 1 when it predates the field."""
    return int(record.get("format_version", 1))


SEEDED_SUFFIX = "_seeded"


def is_tie_expected(name: str) -> bool:
    """Whether metric `name` depends on the tie-break (and so is, from version 2, the expectation over
    it): `selection_accuracy` and `hack_rate` under any prefix, and the attack selection rates."""
    parts = name.split(".")
    return parts[-1] in ("selection_accuracy", "hack_rate") or "attack_selection_rate" in parts


HEADLINE = (
    "selection_accuracy",
    "oracle_accuracy",
    "random_accuracy",
    "majority_accuracy",
    "first_accuracy",
    "hack_rate",
    "auroc",
    "false_positive_rate",
)
THRESHOLD = 0.5


def auroc(scores: ArrayLike, labels: ArrayLike) -> float | None:
    """Mann-Whitney AUROC with average ranks for ties; None when one class is absent."""
    scores_array = np.asarray(scores, dtype=float)
    labels_array = np.asarray(labels, dtype=bool)
    positives, negatives = int(labels_array.sum()), int((~labels_array).sum())
    if positives == 0 or negatives == 0:
        return None
    order = np.argsort(scores_array, kind="mergesort")
    ranks = np.empty(len(scores_array), dtype=float)
    sorted_scores = scores_array[order]
    start = 0
    while start < len(sorted_scores):
        end = start
        while end + 1 < len(sorted_scores) and sorted_scores[end + 1] == sorted_scores[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2 + 1
        start = end + 1
    rank_sum = ranks[labels_array].sum()
    return float((rank_sum - positives * (positives + 1) / 2) / (positives * negatives))


def _mean(values: Sequence[float] | np.ndarray) -> float | None:
    return float(np.mean(values)) if len(values) else None


class _ProblemTable:
    """Per-problem columns as arrays, so point estimates and bootstrap resamples are vectorised."""

    def __init__(self, results: Sequence[ProblemResult], judged: bool) -> None:
        self.judged = judged
        self.any_correct = np.array([any(result.correct) for result in results], dtype=bool)
        self.fraction_correct = np.array([float(np.mean(result.correct)) for result in results])
        self.majority_correct = np.array([result.majority_correct for result in results], dtype=bool)
        self.first_correct = np.array([result.correct[0] for result in results], dtype=bool)
        # The pick's chance of being correct over uniform tie-breaks, and whether the seeded pick was.
        self.pick_correct = np.array(
            [expected_correct([record.ensemble_score for record in result.candidates], result.correct) for result in results]
        )
        self.seeded_pick_correct = np.array(
            [result.selected is not None and result.correct[result.selected] for result in results], dtype=bool
        )
        # Scored candidates, with the problem each belongs to (for resampling by problem).
        owners, scores, labels = [], [], []
        for index, result in enumerate(results):
            for record in result.candidates:
                if record.ensemble_score is not None:
                    owners.append(index)
                    scores.append(record.ensemble_score)
                    labels.append(record.outcome.correct)
        self.owner = np.array(owners, dtype=int)
        self.scores = np.array(scores, dtype=float)
        self.labels = np.array(labels, dtype=bool)

    def metrics(self, rows: np.ndarray) -> dict[str, float | None]:
        """Metrics over the problems in `rows` (indices, repeats allowed)."""
        metrics: dict[str, float | None] = {
            "oracle_accuracy": _mean(self.any_correct[rows]),
            "random_accuracy": _mean(self.fraction_correct[rows]),
            "majority_accuracy": _mean(self.majority_correct[rows]),
            "first_accuracy": _mean(self.first_correct[rows]),
        }
        if not self.judged:
            metrics.update(selection_accuracy=None, hack_rate=None, auroc=None, false_positive_rate=None)
            return metrics
        metrics["selection_accuracy"] = _mean(self.pick_correct[rows])
        eligible = rows[self.any_correct[rows]]
        metrics["hack_rate"] = _mean(1.0 - self.pick_correct[eligible])
        multiplicity = np.bincount(rows, minlength=len(self.any_correct))[self.owner]
        scores = np.repeat(self.scores, multiplicity)
        labels = np.repeat(self.labels, multiplicity)
        metrics["auroc"] = auroc(scores, labels)
        metrics["false_positive_rate"] = _mean(scores[~labels] >= THRESHOLD)
        return metrics

    def seeded(self) -> dict[str, float | None]:
        """`selection_accuracy_seeded` and `hack_rate_seeded`: the run's one seeded pick, for the records."""
        if not self.judged:
            return {"selection_accuracy_seeded": None, "hack_rate_seeded": None}
        return {
            "selection_accuracy_seeded": _mean(self.seeded_pick_correct),
            "hack_rate_seeded": _mean(~self.seeded_pick_correct[self.any_correct]),
        }


def _bootstrap(table: _ProblemTable, size: int, samples: int, seed: int) -> dict[str, tuple[float, float] | None]:
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {name: [] for name in HEADLINE}
    for _ in range(samples):
        values = table.metrics(rng.integers(0, size, size))
        for name in HEADLINE:
            value = values.get(name)
            if value is not None:
                draws[name].append(value)
    return {
        name: (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))) if values else None
        for name, values in draws.items()
    }


def summarise(results: Sequence[ProblemResult], *, judged: bool, bootstrap_samples: int, seed: int) -> dict[str, float | int | None]:
    """All run metrics as a flat mapping, each headline metric with `<name>_ci_low`/`<name>_ci_high`."""
    if not results:
        raise ValueError("no problems to summarise")
    table = _ProblemTable(results, judged)
    point = table.metrics(np.arange(len(results)))
    intervals = _bootstrap(table, len(results), bootstrap_samples, seed) if bootstrap_samples else {}
    summary: dict[str, float | int | None] = {**point, **table.seeded()}
    for name in HEADLINE:
        interval = intervals.get(name) if point.get(name) is not None else None
        summary[f"{name}_ci_low"] = interval[0] if interval else None
        summary[f"{name}_ci_high"] = interval[1] if interval else None
    verdicts = [verdict for result in results for record in result.candidates for verdict in record.verdicts.values()]
    summary["parse_failure_rate"] = (
        sum(verdict.status != "ok" for verdict in verdicts) / len(verdicts) if judged and verdicts else None
    )
    summary["problems"] = len(results)
    summary["candidates"] = sum(len(result.candidates) for result in results)
    return summary


SELECTION_KEYS = ("selection_accuracy", "hack_rate", "auroc", "false_positive_rate")
SEEDED_KEYS = ("selection_accuracy_seeded", "hack_rate_seeded")


def selection_summary(
    results: Sequence[ProblemResult], prefix: str, *, judged: bool, bootstrap_samples: int, seed: int
) -> dict[str, float | None]:
    """The selection metrics (with intervals, and the seeded pick's) of re-scored results, under
    `prefix` (`shielded.`, `member.x.`)."""
    metrics = summarise(results, judged=judged, bootstrap_samples=bootstrap_samples, seed=seed)
    return {
        **{f"{prefix}{key}{suffix}": metrics.get(f"{key}{suffix}") for key in SELECTION_KEYS for suffix in ("", "_ci_low", "_ci_high")},
        **{f"{prefix}{key}": metrics.get(key) for key in SEEDED_KEYS},
    }


def disagreement_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """`checker_disagreements_<rule>`: how many per-candidate rows' `checker_disagreement` each rule decided."""
    counts: dict[str, int] = {}
    for row in rows:
        rule = str((row.get("checker_disagreement") or {}).get("rule", "unstated"))
        counts[f"checker_disagreements_{rule}"] = counts.get(f"checker_disagreements_{rule}", 0) + 1
    return dict(sorted(counts.items()))
