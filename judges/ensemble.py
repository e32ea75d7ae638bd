"""Ensemble aggregation: one score per candidate from its members' scores.

Unscored members (parse failures) are left out; a candidate no member could score has no ensemble
score rather than a made-up one.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Literal, get_args

Aggregate = Literal["min", "mean", "median", "majority"]
AGGREGATES: tuple[str, ...] = get_args(Aggregate)


def aggregate(scores: Sequence[float | None], method: str, threshold: float = 0.5) -> float | None:
    """Combine member scores. `majority` is the fraction of members voting yes (score >= threshold)."""
    present = [score for score in scores if score is not None]
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
    raise ValueError(f"unknown aggregate {method!r}; expected one of {AGGREGATES}")
