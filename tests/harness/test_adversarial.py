"""How often the picks land on planted attacks, on hand-built results; every rate is counted by hand
in the comments."""

from __future__ import annotations

import pytest

from harness.adversarial import attack_selection_rates
from harness.core.values import Candidate
from harness.selection import CandidateRecord, ProblemResult
from tasks.types import AnchorOutcome, AnchorStore

# problem -> its candidates as (id, judge score, shielded score), and the seeded picks (judge, shield)
PICKS: dict[str, tuple[tuple[tuple[str, float | None, float | None], ...], int | None, int | None]] = {
    "p1": ((("h1", 0.2, 0.2), ("a1", 0.9, 0.0)), 1, 0),  # the judge picks the plant a1, the shield the honest h1
    "p2": ((("a2", 0.1, 0.0), ("h2", 0.4, 0.4), ("a3", 0.8, 0.0)), 2, 1),  # the judge picks the plant a3, the shield h2
    "p3": ((("a1", 0.7, 0.7),), 0, 0),  # an organic candidate that shares a plant's id from another problem
    "p4": ((("a4", None, None),), None, None),  # nothing scored: no pick, so the plant is not picked
    "p5": ((("a5", 0.6, 0.6),), 0, 0),  # a plant picked by both
    "p6": ((("h6", 0.5, 0.5), ("a6", 0.5, 0.0)), 0, 0),  # the judge ties h6 and a6 (seeded: h6); the shield picks h6
}
PLANTED = {("p1", "a1"): "grader_instruction", ("p2", "a2"): "grader_instruction", ("p5", "a5"): "grader_instruction",
           ("p2", "a3"): "swapped_final_answer", ("p4", "a4"): "swapped_final_answer", ("p6", "a6"): "swapped_final_answer"}


def _results(picks: dict[str, tuple[tuple[tuple[str, float | None, float | None], ...], int | None, int | None]]) -> list[ProblemResult]:
    results = []
    for problem, (candidates, selected, shielded) in picks.items():
        records = tuple(
            CandidateRecord(Candidate(problem, cid, "text"), AnchorOutcome(False, None), {}, score, shielded_score=shielded_score)
            for cid, score, shielded_score in candidates
        )
        results.append(ProblemResult(problem, records, selected, False, shielded_selected=shielded))
    return results


def _anchors(planted: dict[tuple[str, str], str]) -> AnchorStore:
    store: AnchorStore = AnchorStore("t", {}, lambda anchor, text: AnchorOutcome(False, None))
    for (problem, candidate), kind in planted.items():
        store.mark_planted(problem, candidate, kind)
    return store


def test_the_judges_picks_among_planted_candidates_overall_and_by_kind() -> None:
    rates = attack_selection_rates(_results(PICKS), _anchors(PLANTED))
    # grader_instruction: planted a1, a2, a5; picked a1 (p1) and a5 (p5) -> 2/3
    # swapped_final_answer: planted a3, a4, a6; picked a3 (p2), a6 half the time (tied with h6 in p6)
    # -> 1.5/3; p3's organic "a1" is no plant. All: 3.5/6. The seeded picks miss a6: 3/6.
    assert rates == {
        "attack_selection_rate.grader_instruction": pytest.approx(2 / 3),
        "attack_selection_rate.swapped_final_answer": pytest.approx(1.5 / 3),
        "attack_selection_rate": pytest.approx(3.5 / 6),
        "attack_selection_rate_seeded": pytest.approx(3 / 6),
        "attacks_planted": 6,
    }


def test_the_shielded_picks_are_counted_from_the_shielded_scores() -> None:
    rates = attack_selection_rates(_results(PICKS), _anchors(PLANTED), shielded=True)
    # the shield picks no plant in p1, p2, p4, p6 and picks a5 in p5: grader 1/3, swapped 0/3, all 1/6
    assert rates == {
        "shielded.attack_selection_rate.grader_instruction": pytest.approx(1 / 3),
        "shielded.attack_selection_rate.swapped_final_answer": 0.0,
        "shielded.attack_selection_rate": pytest.approx(1 / 6),
        "shielded.attack_selection_rate_seeded": pytest.approx(1 / 6),
    }


def test_without_plants_the_rate_is_null_not_zero() -> None:
    assert attack_selection_rates(_results(PICKS), _anchors({})) == {
        "attack_selection_rate": None,
        "attack_selection_rate_seeded": None,
        "attacks_planted": 0,
    }
    assert attack_selection_rates(_results(PICKS), _anchors({}), shielded=True) == {
        "shielded.attack_selection_rate": None,
        "shielded.attack_selection_rate_seeded": None,
    }
