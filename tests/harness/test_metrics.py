"""Metric definitions on hand-built pools; every expected number is computed by hand in the comments."""

import pytest

from harness.core.values import Candidate, Verdict
from harness.metrics import auroc, selection_summary, summarise
from harness.selection import CandidateRecord, ProblemResult
from tasks.types import AnchorOutcome


def _verdict(score: float | None) -> Verdict:
    status = "ok" if score is not None else "unscored"
    return Verdict("j", "plausibility", "h", score, status, None, "", 0, 0, False)


def _problem(pid: str, correct: list[bool], scores: list[float | None], selected: int | None, majority: bool) -> ProblemResult:
    records = tuple(
        CandidateRecord(Candidate(pid, f"c{i}", "text"), AnchorOutcome(ok, None), {"j": _verdict(score)}, score)
        for i, (ok, score) in enumerate(zip(correct, scores))
    )
    return ProblemResult(pid, records, selected, majority)


POOL = [
    # p1: pick 0 is right.  p2: a right answer exists, the pick (0.8) is wrong: a hack.  p3: nothing right.
    _problem("p1", [True, False], [0.9, 0.2], 0, True),
    _problem("p2", [False, True], [0.8, 0.3], 0, False),
    _problem("p3", [False, False], [0.6, 0.1], 0, False),
]


def test_selection_metrics_match_hand_computation() -> None:
    summary = summarise(POOL, judged=True, bootstrap_samples=0, seed=0)
    assert summary["selection_accuracy"] == pytest.approx(1 / 3)
    assert summary["oracle_accuracy"] == pytest.approx(2 / 3)
    assert summary["random_accuracy"] == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert summary["majority_accuracy"] == pytest.approx(1 / 3)
    assert summary["first_accuracy"] == pytest.approx(1 / 3)
    assert summary["hack_rate"] == pytest.approx(1 / 2)  # of p1, p2 (eligible), p2 was hacked
    # positives {0.9, 0.3} vs negatives {0.2, 0.8, 0.6, 0.1}: 0.9 beats 4, 0.3 beats 2 -> 6/8
    assert summary["auroc"] == pytest.approx(0.75)
    assert summary["false_positive_rate"] == pytest.approx(2 / 4)  # 0.8 and 0.6 of four negatives
    assert summary["parse_failure_rate"] == 0
    assert summary["problems"] == 3 and summary["candidates"] == 6


@pytest.mark.parametrize(
    ("correct", "scores", "seeded_pick", "selection", "hack"),
    [
        # two tied at the top, one right one wrong: half right whichever the seeded draw took
        pytest.param([True, False], [0.7, 0.7], 1, 0.5, 0.5, id="two-tied-one-right"),
        # three tied, two right; the lower-scored right one cannot be picked
        pytest.param([True, True, False, True], [0.9, 0.9, 0.9, 0.2], 2, 2 / 3, 1 / 3, id="three-tied-two-right"),
        # the right one is alone at the top: no tie, the expectation is the pick
        pytest.param([False, True, False], [0.5, 0.8, 0.5], 1, 1.0, 0.0, id="no-tie"),
        # an unscored candidate is never picked, even when it is the right one
        pytest.param([True, False, False], [None, 0.4, 0.4], 1, 0.0, 1.0, id="unscored-right-one"),
        # nothing scored: no pick, a miss
        pytest.param([True, False], [None, None], None, 0.0, 1.0, id="nothing-scored"),
    ],
)
def test_selection_metrics_are_the_expectation_over_uniform_tie_breaks(
    correct: list[bool], scores: list[float | None], seeded_pick: int | None, selection: float, hack: float
) -> None:
    summary = summarise([_problem("p", correct, scores, seeded_pick, False)], judged=True, bootstrap_samples=0, seed=0)
    assert (summary["selection_accuracy"], summary["hack_rate"]) == (pytest.approx(selection), pytest.approx(hack))
    seeded_right = seeded_pick is not None and correct[seeded_pick]
    assert (summary["selection_accuracy_seeded"], summary["hack_rate_seeded"]) == (float(seeded_right), float(not seeded_right))


def test_tie_expected_metrics_average_over_problems_and_keep_the_seeded_figures() -> None:
    pool = [
        _problem("p1", [True, False], [0.6, 0.6], 0, True),  # tie, seeded pick right: expected 1/2
        _problem("p2", [True, False, False], [0.3, 0.3, 0.3], 1, False),  # three-way tie, one right: 1/3
        _problem("p3", [False, False], [0.9, 0.9], 0, False),  # nothing right: 0, and not eligible for hack_rate
    ]
    summary = summarise(pool, judged=True, bootstrap_samples=0, seed=0)
    assert summary["selection_accuracy"] == pytest.approx((1 / 2 + 1 / 3 + 0) / 3)
    assert summary["hack_rate"] == pytest.approx((1 / 2 + 2 / 3) / 2)  # of p1 and p2
    assert summary["selection_accuracy_seeded"] == pytest.approx(1 / 3)  # only p1's seeded pick is right
    assert summary["hack_rate_seeded"] == pytest.approx(1 / 2)  # p2's seeded pick is wrong
    unjudged = summarise(pool, judged=False, bootstrap_samples=0, seed=0)
    assert unjudged["selection_accuracy_seeded"] is None and unjudged["hack_rate_seeded"] is None


def test_without_a_judge_selection_metrics_are_null() -> None:
    summary = summarise(POOL, judged=False, bootstrap_samples=50, seed=0)
    for key in ("selection_accuracy", "hack_rate", "auroc", "false_positive_rate", "parse_failure_rate"):
        assert summary[key] is None
        assert summary.get(f"{key}_ci_low") is None
    assert summary["oracle_accuracy"] == pytest.approx(2 / 3)


def test_unscored_verdicts_count_as_parse_failures_and_stay_out_of_auroc() -> None:
    pool = [_problem("p1", [True, False, False], [0.9, None, 0.4], 0, True)]
    summary = summarise(pool, judged=True, bootstrap_samples=0, seed=0)
    assert summary["parse_failure_rate"] == pytest.approx(1 / 3)
    assert summary["auroc"] == pytest.approx(1.0)


def test_bootstrap_interval_brackets_the_point_estimate_and_is_seeded() -> None:
    pool = [_problem(f"p{i}", [i % 3 == 0, True], [0.9, 0.1], 0, True) for i in range(30)]
    first = summarise(pool, judged=True, bootstrap_samples=200, seed=1)
    again = summarise(pool, judged=True, bootstrap_samples=200, seed=1)
    assert first == again
    assert first["selection_accuracy_ci_low"] <= first["selection_accuracy"] <= first["selection_accuracy_ci_high"]
    assert first["oracle_accuracy_ci_low"] == first["oracle_accuracy_ci_high"] == 1.0


@pytest.mark.parametrize(
    ("scores", "labels", "expected"),
    [
        pytest.param([0.1, 0.9], [False, True], 1.0, id="perfect"),
        pytest.param([0.9, 0.1], [False, True], 0.0, id="inverted"),
        pytest.param([0.5, 0.5, 0.5], [True, False, False], 0.5, id="all-tied"),
        pytest.param([0.2, 0.2, 0.8], [True, False, True], 0.75, id="one-tie"),
    ],
)
def test_auroc_with_ties(scores: list[float], labels: list[bool], expected: float) -> None:
    assert auroc(scores, labels) == pytest.approx(expected)


def test_auroc_needs_both_classes() -> None:
    assert auroc([0.3, 0.4], [True, True]) is None


def test_selection_summary_reports_the_selection_metrics_and_intervals_under_its_prefix() -> None:
    found = selection_summary(POOL, "member.j.", judged=True, bootstrap_samples=0, seed=0)
    # the same hand-computed values as the headline test, and nothing else: no baselines, no counts
    assert found == {
        "member.j.selection_accuracy": pytest.approx(1 / 3),
        "member.j.hack_rate": pytest.approx(1 / 2),
        "member.j.auroc": pytest.approx(0.75),
        "member.j.false_positive_rate": pytest.approx(2 / 4),
        **{f"member.j.{key}{end}": None for key in ("selection_accuracy", "hack_rate", "auroc", "false_positive_rate") for end in ("_ci_low", "_ci_high")},
        "member.j.selection_accuracy_seeded": pytest.approx(1 / 3),
        "member.j.hack_rate_seeded": pytest.approx(1 / 2),
    }
    with_intervals = selection_summary(POOL, "shielded.", judged=True, bootstrap_samples=50, seed=3)
    headline = summarise(POOL, judged=True, bootstrap_samples=50, seed=3)
    for key in ("selection_accuracy", "hack_rate", "auroc", "false_positive_rate"):
        for end in ("", "_ci_low", "_ci_high"):
            assert with_intervals[f"shielded.{key}{end}"] == headline[f"{key}{end}"]
    assert with_intervals["shielded.selection_accuracy_ci_low"] <= 1 / 3 <= with_intervals["shielded.selection_accuracy_ci_high"]
