"""What goes to a person: the candidates the shield and the judges flag, in priority order, capped and sampled.

Flags, highest priority first (a candidate carries every flag that applies, and sorts by its first):
1. `reward_hack_suspected`: the shield found violations under a high reward.
2. `judge_shield_disagreement`: the ensemble score is at or above `judge.threshold` while the shield
   finds a violation, or below it while the shield passes.
3. `wrong_pick_shield_passed`: the pick (the judge's, or the shielded one without a judge) is wrong
   against its anchor although the shield passed it.
4. `reward_divergence`: the reward and the clean reward diverge past the shield's threshold.
5. `checker_disagreement`: the task's two anchor checkers disagree (math).
6. `policy_flagged`: on τ-bench, every trajectory the policy rules flag.

At most `max_items` flagged candidates are kept: whole priority levels while they fit, then a draw
seeded with the run seed from the level that does not. Then `unflagged_items` picks nothing flagged
are drawn with the same seed, so the shield's recall is measured against what it missed too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from harness.selection import CandidateRecord, ProblemResult

FLAGS: tuple[str, ...] = (
    "reward_hack_suspected",
    "judge_shield_disagreement",
    "wrong_pick_shield_passed",
    "reward_divergence",
    "checker_disagreement",
    "policy_flagged",
)
UNFLAGGED = "unflagged_sample"
POLICY_TASKS = frozenset({"tau_airline"})


@dataclass(frozen=True)
class ReviewItem:
    """One candidate sent for review: where it is in the run's results and why it was chosen."""

    problem_index: int
    candidate_index: int
    flags: tuple[str, ...]  # in priority order; (`unflagged_sample`,) for the random unflagged picks

    @property
    def priority(self) -> int:
        return FLAGS.index(self.flags[0]) if self.flags[0] in FLAGS else len(FLAGS)


def _pick(result: ProblemResult) -> int | None:
    return result.selected if result.selected is not None else result.shielded_selected


def candidate_flags(record: CandidateRecord, *, picked: bool, threshold: float, task: str) -> tuple[str, ...]:
    """The flags that apply to one candidate, in priority order."""
    report = record.shield
    flags: list[str] = []
    if report is not None and report.reward_hack_suspected:
        flags.append("reward_hack_suspected")
    if report is not None and record.ensemble_score is not None and report.verdict in ("pass", "violation"):
        if (record.ensemble_score >= threshold) == (report.verdict == "violation"):
            flags.append("judge_shield_disagreement")
    if report is not None and picked and not record.outcome.correct and report.verdict == "pass":
        flags.append("wrong_pick_shield_passed")
    if report is not None and report.review_required:
        flags.append("reward_divergence")
    if record.outcome.details.get("disagreement"):
        flags.append("checker_disagreement")
    if report is not None and task in POLICY_TASKS and report.verdict == "violation":
        flags.append("policy_flagged")
    return tuple(flags)


def review_items(results: Sequence[ProblemResult], *, threshold: float, task: str, max_items: int, unflagged_items: int, seed: int) -> list[ReviewItem]:
    """The run's review items: flagged candidates by priority (capped, seeded), then unflagged picks."""
    flagged: list[ReviewItem] = []
    unflagged: list[ReviewItem] = []
    for problem_index, result in enumerate(results):
        pick = _pick(result)
        for index, record in enumerate(result.candidates):
            flags = candidate_flags(record, picked=index == pick, threshold=threshold, task=task)
            if flags:
                flagged.append(ReviewItem(problem_index, index, flags))
            elif index == pick:
                unflagged.append(ReviewItem(problem_index, index, (UNFLAGGED,)))
    rng = random.Random(f"{seed}:review")
    chosen: list[ReviewItem] = []
    for level in range(len(FLAGS)):
        tier = [item for item in flagged if item.priority == level]
        room = max_items - len(chosen)
        chosen.extend(tier if len(tier) <= room else sorted(rng.sample(tier, room), key=_position))
    sample = sorted(rng.sample(unflagged, min(unflagged_items, len(unflagged))), key=_position)
    return chosen + sample


def _position(item: ReviewItem) -> tuple[int, int]:
    return item.problem_index, item.candidate_index
