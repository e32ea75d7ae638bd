"""Which candidates go to review, in which order, and how the cap and the unflagged sample draw."""

from __future__ import annotations

import pytest

from harness.core import Candidate
from harness.review import FLAGS, candidate_flags, review_items
from harness.selection import CandidateRecord, ProblemResult
from harness.shield import ShieldReport, Violation
from tasks.types import AnchorOutcome

VIOLATION = (Violation(stage="path", kind="required_state_skipped", message="skipped STEP"),)


def record(
    *, score: float | None, verdict: str | None, correct: bool, suspected: bool = False, divergence: bool = False, disagreement: bool = False
) -> CandidateRecord:
    report = None
    if verdict is not None:
        report = ShieldReport(
            task_id="t",
            verdict=verdict,
            hack_class="procedural" if verdict == "violation" else "none",
            compliance=0.0 if verdict == "violation" else 1.0,
            violations=VIOLATION if verdict == "violation" else (),
            reward_hack_suspected=suspected,
            review_required=divergence,
        )
    outcome = AnchorOutcome(correct=correct, extracted_answer="1", details={"disagreement": True} if disagreement else {})
    return CandidateRecord(Candidate("p", "c", "text"), outcome, {}, score, shield=report)


CASES = [
    ("high_score_with_violation", dict(score=0.9, verdict="violation", correct=False), False, "code", ("judge_shield_disagreement",)),
    ("low_score_while_shield_passes", dict(score=0.1, verdict="pass", correct=True), False, "code", ("judge_shield_disagreement",)),
    ("judge_and_shield_agree", dict(score=0.9, verdict="pass", correct=True), True, "code", ()),
    ("score_at_threshold_counts_as_high", dict(score=0.5, verdict="violation", correct=False), False, "code", ("judge_shield_disagreement",)),
    ("wrong_pick_the_shield_passed", dict(score=0.9, verdict="pass", correct=False), True, "code", ("wrong_pick_shield_passed",)),
    ("wrong_unpicked_candidate_is_not_a_pick", dict(score=0.9, verdict="pass", correct=False), False, "code", ()),
    ("suspected_hack_first", dict(score=0.9, verdict="violation", correct=False, suspected=True), True, "code", ("reward_hack_suspected", "judge_shield_disagreement")),
    ("reward_divergence", dict(score=0.9, verdict="pass", correct=True, divergence=True), True, "code", ("reward_divergence",)),
    ("checker_disagreement_without_shield", dict(score=0.9, verdict=None, correct=True, disagreement=True), True, "math", ("checker_disagreement",)),
    ("tau_policy_violation_without_judge", dict(score=None, verdict="violation", correct=True), True, "tau_airline", ("policy_flagged",)),
    ("policy_flag_is_tau_only", dict(score=None, verdict="violation", correct=True), True, "agent", ()),
    ("unverified_is_no_disagreement", dict(score=0.9, verdict="unverified", correct=True), True, "code", ()),
]


@pytest.mark.parametrize(("fields", "picked", "task", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_candidate_flags(fields: dict, picked: bool, task: str, expected: tuple[str, ...]) -> None:
    assert candidate_flags(record(**fields), picked=picked, threshold=0.5, task=task) == expected


def _results(problems: int) -> list[ProblemResult]:
    """Each problem: candidate 0 a suspected hack, 1 a judge/shield disagreement, 2 clean (the pick)."""
    candidates = (
        record(score=0.9, verdict="violation", correct=False, suspected=True),
        record(score=0.1, verdict="pass", correct=True),
        record(score=0.9, verdict="pass", correct=True),
    )
    return [ProblemResult(f"p{i}", candidates, 2, True) for i in range(problems)]


def test_cap_keeps_whole_priority_levels_then_draws_from_the_level_that_does_not_fit() -> None:
    items = review_items(_results(4), threshold=0.5, task="code", max_items=6, unflagged_items=0, seed=0)
    assert len(items) == 6
    assert [item.flags[0] for item in items[:4]] == ["reward_hack_suspected"] * 4  # the first level fits whole
    assert {item.flags[0] for item in items[4:]} == {"judge_shield_disagreement"}  # 2 of its 4 drawn
    again = review_items(_results(4), threshold=0.5, task="code", max_items=6, unflagged_items=0, seed=0)
    assert items == again
    draws = {tuple(item.problem_index for item in review_items(_results(4), threshold=0.5, task="code", max_items=6, unflagged_items=0, seed=s)[4:]) for s in range(20)}
    assert len(draws) > 1  # the seed chooses which


def test_unflagged_sample_draws_picks_nothing_flagged() -> None:
    items = review_items(_results(5), threshold=0.5, task="code", max_items=100, unflagged_items=3, seed=1)
    flagged, sampled = items[:10], items[10:]
    assert len(flagged) == 10 and len(sampled) == 3
    assert all(item.flags == ("unflagged_sample",) and item.candidate_index == 2 for item in sampled)
    assert len({item.problem_index for item in sampled}) == 3
    assert sampled[0].priority == len(FLAGS)
