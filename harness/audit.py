"""The auditor: the only stage that opens the anchor store.

It checks every candidate against the hidden ground truth after judging. Nothing it returns flows
back into prompts; its outcomes feed selection metrics and the run's outputs only.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core import Candidate, PublicProblem
from tasks.types import AnchorOutcome, AnchorStore


def audit(groups: Sequence[tuple[PublicProblem, Sequence[Candidate]]], anchors: AnchorStore) -> list[list[AnchorOutcome]]:
    """Anchor outcomes per problem, per candidate, in the order given."""
    return [[anchors.check(problem.problem_id, candidate.text) for candidate in candidates] for problem, candidates in groups]
