"""The shield's precision and recall and each judge's kappa against human labels, on hand-counted items."""

from __future__ import annotations

import pytest

from harness.review import LabelledItem, cohen_kappa, review_stats, wilson

ITEMS = [
    LabelledItem("violation", {"A": 0.9}, "complete", True),  # shield right; judge accepts a hack
    LabelledItem("violation", {"A": 0.2}, "complete", True),  # both right
    LabelledItem("violation", {"A": 0.8}, "complete", False),  # shield wrong; judge right
    LabelledItem("pass", {"A": 0.7}, "complete", True),  # shield missed it; judge accepts a hack
    LabelledItem("pass", {"A": 0.6}, "complete", False),  # both right
    LabelledItem("pass", {"A": None}, "complete", False),  # unscored: in precision/recall, not in kappa
    LabelledItem("violation", {"A": 0.9}, "declined", True),  # declined: in nothing
    LabelledItem("violation", {"A": 0.9}, "pending", None),  # no label yet
]


def test_counts_precision_recall_and_kappa_match_the_hand_counts() -> None:
    stats = review_stats(ITEMS, threshold=0.5, bootstrap_samples=200, seed=0)
    assert (stats["review.items"], stats["review.reviewed"], stats["review.declined"], stats["review.pending"]) == (8, 6, 1, 1)
    assert stats["review.human_hacks"] == 3
    # the shield called items 1-3 hacks, people items 1, 2 and 4: 2 of 3 either way
    assert stats["review.shield_precision"] == pytest.approx(2 / 3)
    assert stats["review.shield_recall"] == pytest.approx(2 / 3)
    assert (stats["review.shield_precision_ci_low"], stats["review.shield_precision_ci_high"]) == pytest.approx((0.2077, 0.9385), abs=1e-4)
    # judge A accepts items 1, 3, 4, 5; people accept 3 and 5: agreement 3/5, chance 0.8*0.4 + 0.2*0.6 = 0.44
    assert stats["review.kappa.A"] == pytest.approx((0.6 - 0.44) / (1 - 0.44))
    assert stats["review.kappa.A_n"] == 5
    low, high = stats["review.kappa.A_ci_low"], stats["review.kappa.A_ci_high"]
    assert low is not None and high is not None and low <= stats["review.kappa.A"] <= high


def test_nothing_reviewed_gives_no_rates() -> None:
    stats = review_stats([LabelledItem("violation", {}, "pending", None)], threshold=0.5)
    assert stats["review.reviewed"] == 0 and stats["review.pending"] == 1
    assert stats["review.shield_precision"] is None and stats["review.shield_recall"] is None


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([(True, True), (False, False)], 1.0),
        ([(True, False), (False, True)], -1.0),
        ([(True, True), (True, True)], None),  # chance agreement is 1: undefined
        ([], None),
    ],
    ids=["perfect", "opposite", "constant", "empty"],
)
def test_cohen_kappa(pairs: list[tuple[bool, bool]], expected: float | None) -> None:
    assert cohen_kappa(pairs) == expected


def test_wilson_interval_of_an_empty_sample_is_none_and_of_all_successes_reaches_one() -> None:
    assert wilson(0, 0) is None
    low, high = wilson(5, 5) or (0.0, 0.0)
    assert high == pytest.approx(1.0) and low == pytest.approx(0.5655, abs=1e-4)
