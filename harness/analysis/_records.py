"""Reading per-judge scores out of `ProblemResult`s, shared by the analyses.

A "judge" here is either an ensemble member (the key of `CandidateRecord.verdicts`) or the ensemble
itself, under the reserved name `ensemble` (its score is `CandidateRecord.ensemble_score`).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.selection import CandidateRecord, ProblemResult

ENSEMBLE = "ensemble"


def member_names(results: Sequence[ProblemResult]) -> list[str]:
    """The ensemble members that gave at least one verdict, sorted so output keys are stable."""
    return sorted({name for result in results for record in result.candidates for name in record.verdicts})


def score_of(record: CandidateRecord, judge: str) -> float | None:
    """The judge's score for one candidate; None when the judge is absent or left it unscored."""
    if judge == ENSEMBLE:
        return record.ensemble_score
    verdict = record.verdicts.get(judge)
    return verdict.score if verdict is not None and verdict.status == "ok" else None
