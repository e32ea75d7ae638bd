"""Builders for hand-made `ProblemResult`s: a candidate is (correct, {member: score}, ensemble score)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from harness.core.values import Candidate, Verdict
from harness.selection import CandidateRecord, ProblemResult
from tasks.types import AnchorOutcome


def _verdict(judge: str, score: float | None) -> Verdict:
    status = "ok" if score is not None else "unscored"
    return Verdict(judge, "plausibility", "h", score, status, None if score is not None else "no marker", "", 0, 0, False)


def build_problem(
    problem_id: str,
    candidates: Sequence[Mapping[str, Any]],
    *,
    selected: int | None = None,
    majority_correct: bool = False,
) -> ProblemResult:
    """Each candidate mapping may give `correct`, `scores` ({member: score or None}), `ensemble`,
    `answer`, `source` and `id` (default `c<index>`)."""
    records = tuple(
        CandidateRecord(
            Candidate(problem_id, spec.get("id", f"c{index}"), "text", source=spec.get("source")),
            AnchorOutcome(spec.get("correct", False), spec.get("answer")),
            {name: _verdict(name, score) for name, score in spec.get("scores", {}).items()},
            spec.get("ensemble"),
        )
        for index, spec in enumerate(candidates)
    )
    return ProblemResult(problem_id, records, selected, majority_correct)


@pytest.fixture
def problem() -> Callable[..., ProblemResult]:
    return build_problem
