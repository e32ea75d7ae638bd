"""Best-of-N picks, majority vote and re-selection on other scores: highest score wins, ties are seeded
draws, nothing scored means no pick."""

import pytest

from harness.core.values import Candidate, Verdict
from harness.selection import CandidateRecord, ProblemResult, expected_correct, majority_answer, pick_best, pick_probabilities, problem_rng, reselect
from tasks.types import AnchorOutcome


def test_highest_score_wins() -> None:
    assert pick_best([0.2, 0.9, 0.5], problem_rng(0, "p")) == 1


def test_unscored_candidates_are_skipped_and_all_unscored_means_no_pick() -> None:
    assert pick_best([None, 0.1, None], problem_rng(0, "p")) == 1
    assert pick_best([None, None], problem_rng(0, "p")) is None


def test_ties_are_drawn_reproducibly_from_seed_and_problem() -> None:
    picks = {pick_best([0.7, 0.7, 0.7, 0.1], problem_rng(seed, "p")) for seed in range(40)}
    assert picks == {0, 1, 2}
    assert pick_best([0.7, 0.7], problem_rng(3, "p")) == pick_best([0.7, 0.7], problem_rng(3, "p"))


@pytest.mark.parametrize(
    ("scores", "probabilities"),
    [
        pytest.param([0.2, 0.9, 0.5], [0, 1, 0], id="one-best"),
        pytest.param([0.7, 0.7, 0.7, 0.1], [1 / 3, 1 / 3, 1 / 3, 0], id="three-tied"),
        pytest.param([None, 0.4, 0.4], [0, 1 / 2, 1 / 2], id="unscored-never-picked"),
        pytest.param([None, None], [0, 0], id="nothing-scored-no-pick"),
    ],
)
def test_pick_probabilities_are_uniform_over_the_tied_best(scores: list[float | None], probabilities: list[float]) -> None:
    assert pick_probabilities(scores) == pytest.approx(probabilities)
    # the seeded draw picks one of the candidates with a chance
    pick = pick_best(scores, problem_rng(0, "p"))
    assert (pick is None) == (sum(probabilities) == 0) and (pick is None or probabilities[pick] > 0)


def test_expected_correct_is_the_right_share_of_the_tied_best() -> None:
    assert expected_correct([0.7, 0.7], [True, False]) == 0.5
    assert expected_correct([0.9, 0.9, 0.9, 0.95], [True, True, False, False]) == 0.0
    assert expected_correct([0.9, 0.9, 0.9, 0.1], [True, True, False, True]) == 2 / 3
    assert expected_correct([None, None], [True, True]) == 0.0


def test_majority_ignores_missing_answers() -> None:
    assert majority_answer(["5", None, None, "5", "7"], problem_rng(0, "p")) == "5"
    assert majority_answer([None, None], problem_rng(0, "p")) is None
    assert majority_answer(["1", "2"], problem_rng(0, "p")) in {"1", "2"}


def _rescored_problem(pid: str, member_scores: list[float | None]) -> ProblemResult:
    """Three candidates the ensemble scored 0.9, 0.2, 0.5 (so picked the first); member 'a' scored them otherwise."""
    records = tuple(
        CandidateRecord(
            Candidate(pid, f"c{i}", "text"),
            AnchorOutcome(i == 2, str(i)),
            {"a": Verdict("a", "plausibility", "h", score, "ok" if score is not None else "unscored", None, "", 0, 0, False)},
            ensemble,
        )
        for i, (ensemble, score) in enumerate(zip([0.9, 0.2, 0.5], member_scores))
    )
    return ProblemResult(pid, records, 0, True)


def test_reselect_scores_with_the_given_score_and_picks_again_with_the_run_seed() -> None:
    original = _rescored_problem("p", [0.1, 0.3, 0.8])
    [rescored] = reselect([original], lambda record: record.verdicts["a"].score, seed=0)
    assert [record.ensemble_score for record in rescored.candidates] == [0.1, 0.3, 0.8]
    assert rescored.selected == 2  # the member's best, not the ensemble's
    # everything but the scores and the pick is the original's, and the original is untouched
    assert [(r.candidate, r.outcome, r.verdicts) for r in rescored.candidates] == [(r.candidate, r.outcome, r.verdicts) for r in original.candidates]
    assert (rescored.problem_id, rescored.majority_correct) == ("p", True)
    assert original.selected == 0 and [r.ensemble_score for r in original.candidates] == [0.9, 0.2, 0.5]


def test_reselect_breaks_ties_by_seed_and_problem_and_leaves_nothing_scored_unpicked() -> None:
    tied = _rescored_problem("p", [0.1, 0.8, 0.8])
    picks = {seed: reselect([tied], lambda record: record.verdicts["a"].score, seed)[0].selected for seed in range(40)}
    assert set(picks.values()) == {1, 2}
    assert all(pick == pick_best([0.1, 0.8, 0.8], problem_rng(seed, "p")) for seed, pick in picks.items())
    [unscored] = reselect([_rescored_problem("q", [None, None, None])], lambda record: record.verdicts["a"].score, seed=0)
    assert unscored.selected is None and [r.ensemble_score for r in unscored.candidates] == [None, None, None]
