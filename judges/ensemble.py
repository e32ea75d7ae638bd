"""Ensemble aggregation: one score per candidate from its members' scores.

- `min`, `mean`, `median`: of the member scores.
- `majority`: the fraction of members voting yes (score >= threshold).
- `veto`: the mean, unless any member scores below the threshold, which zeroes it.
- `quorum:k`: the k-th highest member score, i.e. the highest score that at least k members give;
  at the threshold it is "at least k members vote yes", and it stays continuous for ranking.

Unscored members (parse failures) are left out; a candidate no member could score has no ensemble
score rather than a made-up one. With fewer scored members than k, quorum:k has no score.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

AGGREGATES: tuple[str, ...] = ("min", "mean", "median", "majority", "veto", "quorum:k")
_QUORUM = re.compile(r"quorum:([1-9][0-9]*)")


def check_aggregate(method: str) -> str | None:
    """None when `method` names an aggregate, else why not."""
    if method in AGGREGATES[:-1] or _QUORUM.fullmatch(method):
        return None
    return f"unknown aggregate {method!r}; expected one of {', '.join(AGGREGATES)} (k a positive integer)"


def aggregate(scores: Sequence[float | None], method: str, threshold: float = 0.5) -> float | None:
    present = [score for score in scores if score is not None]
    problem = check_aggregate(method)
    if problem is not None:
        raise ValueError(problem)
    if not present:
        return None
    if method == "min":
        return min(present)
    if method == "mean":
        return statistics.fmean(present)
    if method == "median":
        return statistics.median(present)
    if method == "majority":
        return sum(score >= threshold for score in present) / len(present)
    if method == "veto":
        return 0.0 if min(present) < threshold else statistics.fmean(present)
    quorum = int(method.split(":")[1])
    return sorted(present, reverse=True)[quorum - 1] if len(present) >= quorum else None
