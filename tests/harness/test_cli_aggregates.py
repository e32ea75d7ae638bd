"""Every ensemble aggregate but `min`, `judge.threshold`, and the per-member and calibration metrics,
through `python -m harness` with the two tiny CPU judges, checked against hand computations from
the run's own candidates.jsonl.

One min run pays for the verdicts; two multiruns, one over the judge options
`ensemble_{mean,median,majority,veto}_tiny` and one over `judge.aggregate=quorum:1,quorum:2`, then
reuse them from the call cache (a verdict does not depend on how it is aggregated), so the whole
module costs one ensemble judging of four candidates.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from harness.selection import pick_best, problem_rng
from tests.support.runs import harness_cli, rows

MEMBERS = ("llama_tiny", "gemma_tiny")
RUN = ("limit=2", "n=2", "tracking.enabled=false")
OPTIONS = ("ensemble_mean_tiny", "ensemble_median_tiny", "ensemble_majority_tiny", "ensemble_veto_tiny")
QUORUMS = ("quorum:1", "quorum:2")
AGGREGATES = ("mean", "median", "majority", "veto", *QUORUMS)
SWEEPS = {"options": (f"judge={','.join(OPTIONS)}",), "quorum": ("judge=ensemble_min_tiny", f"judge.aggregate={','.join(QUORUMS)}")}
SEED = 0  # conf/config.yaml's seed; the pick's tie-break draws from it


def _expected(method: str, scores: list[float], threshold: float) -> float:
    """The aggregate as docs/judges-and-protocols.md defines it, written out independently."""
    if method == "mean":
        return sum(scores) / len(scores)
    if method == "median":
        return statistics.median(scores)
    if method == "majority":
        return sum(score >= threshold for score in scores) / len(scores)
    if method == "veto":
        return 0.0 if any(score < threshold for score in scores) else sum(scores) / len(scores)
    k = int(method.removeprefix("quorum:"))
    return sorted(scores, reverse=True)[k - 1]


def _vote_changing_threshold(scores: list[float]) -> float:
    """A threshold at which the member score nearest 0.5 votes the other way than at 0.5, so a run
    that ignored `judge.threshold` scores some candidate differently from the hand computation."""
    nearest = min(scores, key=lambda score: abs(score - 0.5))
    if nearest < 0.5:
        return nearest  # "at least the threshold": it votes yes at exactly its own score
    higher = [score for score in scores if score > nearest]
    return (nearest + min(higher, default=1.0)) / 2


def _by_problem(table: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in table:
        grouped[row["problem_id"]].append(row)
    return grouped


def _auroc(scored: list[tuple[float, bool]]) -> float | None:
    """The share of (correct, incorrect) pairs the score orders correctly, ties counting half."""
    positives = [score for score, correct in scored if correct]
    negatives = [score for score, correct in scored if not correct]
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


KEYS = ("selection_accuracy", "hack_rate", "selection_accuracy_seeded", "hack_rate_seeded", "auroc", "false_positive_rate")


def _selection(table: list[dict[str, Any]], score_of) -> dict[str, float | None]:
    """Selection metrics by hand for picks by `score_of(row)`: the right share of the candidates tied at
    the top score (the expectation over tie-breaks), and with the run's seeded tie-break (`*_seeded`)."""
    expected, picks, eligible_expected, eligible_hacked = [], [], [], []
    for problem, candidates in _by_problem(table).items():
        best = max((score_of(row) for row in candidates if score_of(row) is not None), default=None)
        tied = [row["anchor_correct"] for row in candidates if best is not None and score_of(row) == best]
        right = sum(tied) / len(tied) if tied else 0.0  # nothing scored: no pick, a miss
        pick = pick_best([score_of(row) for row in candidates], problem_rng(SEED, problem))
        picked_right = pick is not None and candidates[pick]["anchor_correct"]
        expected.append(right)
        picks.append(picked_right)
        if any(row["anchor_correct"] for row in candidates):
            eligible_expected.append(1 - right)
            eligible_hacked.append(not picked_right)
    negatives = [score_of(row) for row in table if not row["anchor_correct"]]
    return {
        "selection_accuracy": sum(expected) / len(expected),
        "hack_rate": sum(eligible_expected) / len(eligible_expected) if eligible_expected else None,
        "selection_accuracy_seeded": sum(picks) / len(picks),
        "hack_rate_seeded": sum(eligible_hacked) / len(eligible_hacked) if eligible_hacked else None,
        "auroc": _auroc([(score_of(row), row["anchor_correct"]) for row in table]),
        "false_positive_rate": sum(score >= 0.5 for score in negatives) / len(negatives) if negatives else None,
    }


def _calibration(pairs: list[tuple[float, bool]], bins: int = 10) -> dict[str, float | int]:
    """ECE over ten equal-width bins (the last one closed) and the Brier score, by hand."""
    filled: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    for score, correct in pairs:
        filled[min(int(score * bins), bins - 1)].append((score, correct))
    ece = sum(abs(sum(c for _, c in members) - sum(s for s, _ in members)) for members in filled.values()) / len(pairs)
    return {"ece": ece, "brier": sum((score - correct) ** 2 for score, correct in pairs) / len(pairs), "n": len(pairs)}


def _approx(expected: dict[str, Any]) -> dict[str, Any]:
    return {key: None if value is None else pytest.approx(value) for key, value in expected.items()}


class Runs:
    """The min run and the multiruns' jobs by aggregate (with each job's judge name), all at one threshold."""

    def __init__(self, root: Path, threshold: float) -> None:
        self.root = root
        self.threshold = threshold
        self.min = root / "min"
        self.jobs: dict[str, Path] = {}
        self.names: dict[str, str] = {}
        for sweep in SWEEPS:
            for job in sorted((root / sweep).iterdir()):
                if (job / "resolved_config.yaml").exists():
                    judge = OmegaConf.load(job / "resolved_config.yaml").judge
                    assert judge.threshold == threshold and judge.aggregate not in self.jobs
                    self.jobs[judge.aggregate], self.names[judge.aggregate] = job, judge.name

    @staticmethod
    def summary(output_dir: Path) -> dict[str, Any]:
        return json.loads((output_dir / "summary.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, shared_cache: Path) -> Runs:
    root = tmp_path_factory.mktemp("aggregates")
    first = harness_cli(root, "judge=ensemble_min_tiny", *RUN, f"output_dir={root / 'min'}", cache=shared_cache)
    assert first.returncode == 0, first.stderr[-3000:]
    threshold = _vote_changing_threshold([row["scores"][member] for row in rows(root / "min") for member in MEMBERS])
    for sweep, args in SWEEPS.items():
        done = harness_cli(root, "-m", *RUN, *args, f"judge.threshold={threshold!r}", f"hydra.sweep.dir={root / sweep}", cache=shared_cache)
        assert done.returncode == 0, done.stderr[-3000:]
    return Runs(root, threshold)


def test_the_multiruns_ran_every_aggregate_from_the_cache(runs: Runs) -> None:
    assert sorted(runs.jobs) == sorted(AGGREGATES)
    assert [runs.names[method] for method in ("mean", "median", "majority", "veto")] == list(OPTIONS)  # each option's own aggregate
    for job in runs.jobs.values():
        summary = Runs.summary(job)
        assert summary["judge_calls"] == 0 and summary["cache_hits"] == 8  # 4 candidates x 2 members, judged by the min run


@pytest.mark.parametrize("method", AGGREGATES)
def test_each_aggregate_scores_and_picks_as_documented(runs: Runs, method: str) -> None:
    table = rows(runs.jobs[method])
    assert [row["scores"] for row in table] == [row["scores"] for row in rows(runs.min)]  # the same verdicts
    for row in table:
        assert row["ensemble_score"] == pytest.approx(_expected(method, [row["scores"][m] for m in MEMBERS], runs.threshold))
    for problem, candidates in _by_problem(table).items():
        scores = [row["ensemble_score"] for row in candidates]
        assert [row["selected"] for row in candidates].index(True) == pick_best(scores, problem_rng(SEED, problem))
    summary = Runs.summary(runs.jobs[method])
    assert {key: summary[key] for key in KEYS} == _approx(
        _selection(table, lambda row: row["ensemble_score"])
    )
    assert summary["calibration.ensemble.brier"] == pytest.approx(_calibration([(r["ensemble_score"], r["anchor_correct"]) for r in table])["brier"])


def test_the_threshold_changes_a_vote_and_only_majority_and_veto_read_it(runs: Runs) -> None:
    table = rows(runs.min)
    member_scores = [[row["scores"][m] for m in MEMBERS] for row in table]
    assert any(_expected("majority", s, runs.threshold) != _expected("majority", s, 0.5) for s in member_scores)
    for method in ("mean", "median", "quorum:1", "quorum:2"):
        assert [row["ensemble_score"] for row in rows(runs.jobs[method])] == pytest.approx([_expected(method, s, 0.5) for s in member_scores])
    # quorum:2 of two members is their minimum: the same scores, picks and metrics as the min run
    assert [row["ensemble_score"] for row in rows(runs.jobs["quorum:2"])] == [row["ensemble_score"] for row in table]
    assert Runs.summary(runs.jobs["quorum:2"])["selection_accuracy"] == Runs.summary(runs.min)["selection_accuracy"]


def test_member_metrics_are_each_member_picking_alone(runs: Runs) -> None:
    table = rows(runs.min)
    summary = Runs.summary(runs.min)
    for member in MEMBERS:
        found = {key: summary[f"member.{member}.{key}"] for key in KEYS}
        assert found == _approx(_selection(table, lambda row, member=member: row["scores"][member]))
        assert summary[f"member.{member}.selection_accuracy_ci_low"] is None  # no bootstrap asked for
    for job in runs.jobs.values():  # a member's metrics do not depend on how the ensemble aggregates
        assert {k: v for k, v in Runs.summary(job).items() if k.startswith("member.")} == {k: v for k, v in summary.items() if k.startswith("member.")}


def test_calibration_metrics_match_ece_and_brier_by_hand(runs: Runs) -> None:
    table = rows(runs.min)
    summary = Runs.summary(runs.min)
    for judge in (*MEMBERS, "ensemble"):
        pairs = [(row["ensemble_score"] if judge == "ensemble" else row["scores"][judge], row["anchor_correct"]) for row in table]
        expected = _calibration(pairs)
        assert {key: summary[f"calibration.{judge}.{key}"] for key in expected} == _approx(expected)


@pytest.mark.parametrize("aggregate", ["typo", "quorum:0"])
def test_a_bad_aggregate_is_one_line_and_exit_2_with_nothing_written(tmp_path: Path, aggregate: str) -> None:
    completed = harness_cli(tmp_path, "judge=ensemble_min_tiny", f"judge.aggregate={aggregate}", cache=tmp_path / "cache.sqlite")
    assert completed.returncode == 2
    assert completed.stderr.splitlines() == [
        f"error: judge.aggregate: unknown aggregate {aggregate!r}; expected one of min, mean, median, majority, veto, quorum:k (k a positive integer)"
    ]
    # tracking is on by default: no MLflow store (so no run), no cache, no output directory
    assert sorted(path.name for path in tmp_path.iterdir()) == []
