"""Best-of-N picks and majority vote: highest score wins, ties are seeded draws, nothing scored means no pick."""

from harness.selection import majority_answer, pick_best, problem_rng


def test_highest_score_wins() -> None:
    assert pick_best([0.2, 0.9, 0.5], problem_rng(0, "p")) == 1


def test_unscored_candidates_are_skipped_and_all_unscored_means_no_pick() -> None:
    assert pick_best([None, 0.1, None], problem_rng(0, "p")) == 1
    assert pick_best([None, None], problem_rng(0, "p")) is None


def test_ties_are_drawn_reproducibly_from_seed_and_problem() -> None:
    picks = {pick_best([0.7, 0.7, 0.7, 0.1], problem_rng(seed, "p")) for seed in range(40)}
    assert picks == {0, 1, 2}
    assert pick_best([0.7, 0.7], problem_rng(3, "p")) == pick_best([0.7, 0.7], problem_rng(3, "p"))


def test_majority_ignores_missing_answers() -> None:
    assert majority_answer(["5", None, None, "5", "7"], problem_rng(0, "p")) == "5"
    assert majority_answer([None, None], problem_rng(0, "p")) is None
    assert majority_answer(["1", "2"], problem_rng(0, "p")) in {"1", "2"}
