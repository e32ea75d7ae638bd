"""The auditor: the only stage that opens the anchor store.

It checks every candidate against the hidden ground truth after judging. Nothing it returns flows
back into prompts; its outcomes feed selection metrics and the run's outputs only.

Checking is total: a checker that raises on one candidate's text (a recursion limit, a worker that
cannot start, an arithmetic error) gives that candidate the outcome `check_error` with the error's
one-line text, and every other candidate is still checked. The run never ends on a candidate.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core import Candidate, PublicProblem
from tasks.types import AnchorOutcome, AnchorStore

# What a checker may raise on hostile text; a KeyError (a problem the store lacks) stays a bug.
_CHECK_ERRORS = (ArithmeticError, ValueError, TypeError, AttributeError, IndexError, RecursionError, MemoryError, RuntimeError, OSError)


def check_one(anchors: AnchorStore, problem_id: str, text: str) -> AnchorOutcome:
    """`anchors.check`, with any checker error recorded as the candidate's `check_error` outcome."""
    try:
        return anchors.check(problem_id, text)
    except _CHECK_ERRORS as error:
        return AnchorOutcome(False, None, "check_error", {"error": f"{type(error).__name__}: {str(error)[:300]}"})


def audit(groups: Sequence[tuple[PublicProblem, Sequence[Candidate]]], anchors: AnchorStore) -> list[list[AnchorOutcome]]:
    """Anchor outcomes per problem, per candidate, in the order given."""
    return [[check_one(anchors, problem.problem_id, candidate.text) for candidate in candidates] for problem, candidates in groups]
