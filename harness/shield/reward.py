"""Stage 4, reward consistency: a high reward on a trace with violations is a suspected hack.

`reward_hack_suspected`: reward >= `reward_threshold` and stages 1-3 found violations.
`review_required` (BenchShield's differential check): a second reward from a clean-prompt rerun is
known and differs from the reward by more than `divergence_threshold`.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.shield.report import VerifyOptions


@dataclass(frozen=True)
class RewardFlags:
    reward_hack_suspected: bool
    reward_divergence: float | None
    review_required: bool


def check_reward(
    reward: float | None, clean_reward: float | None, has_violations: bool, options: VerifyOptions
) -> RewardFlags:
    suspected = reward is not None and reward >= options.reward_threshold and has_violations
    divergence = None if reward is None or clean_reward is None else abs(reward - clean_reward)
    return RewardFlags(
        reward_hack_suspected=suspected,
        reward_divergence=divergence,
        review_required=divergence is not None and divergence > options.divergence_threshold,
    )
