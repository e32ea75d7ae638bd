"""Best-of-N selection and the baselines it is compared with, on plain per-problem records.

The pick is the highest score. Ties are broken by a draw from a generator seeded with the run seed
and the problem id, so a run is reproducible and the tie-break does not depend on the order problems
were processed in. That draw is one of the equally good picks, so the metrics do not rest on it:
`pick_probabilities` gives each candidate's probability of being the pick under a uniform tie-break, and
every selection metric is the exact expectation over those (the seeded pick is kept for the records).
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.core import Candidate, Verdict
from tasks.types import AnchorOutcome

if TYPE_CHECKING:  # the shield (CEL, JSON Schema) is imported only by runs that verify
    from harness.shield import ShieldReport


@dataclass(frozen=True)
class CandidateRecord:
    """A candidate with its anchor outcome, its judges' verdicts and, with the shield on, its report."""

    candidate: Candidate
    outcome: AnchorOutcome
    verdicts: Mapping[str, Verdict]
    ensemble_score: float | None
    shield: ShieldReport | None = None  # when the shield ran
    shielded_score: float | None = None


@dataclass(frozen=True)
class ProblemResult:
    """One problem's candidates and the picks made among them.

    `selected` is the index of the judge's pick (None without a judge), `shielded_selected` the pick
    on shielded scores; `majority_correct` says whether the most common extracted answer is right.
    """

    problem_id: str
    candidates: tuple[CandidateRecord, ...]
    selected: int | None
    majority_correct: bool
    shielded_selected: int | None = None

    @property
    def correct(self) -> list[bool]:
        return [record.outcome.correct for record in self.candidates]


def problem_rng(seed: int, problem_id: str) -> random.Random:
    return random.Random(f"{seed}:{problem_id}")


def pick_best(scores: Sequence[float | None], rng: random.Random) -> int | None:
    """Index of the highest score; ties drawn with `rng`; None when nothing was scored."""
    scored = [(score, index) for index, score in enumerate(scores) if score is not None]
    if not scored:
        return None
    best = max(score for score, _ in scored)
    return rng.choice([index for score, index in scored if score == best])


def pick_probabilities(scores: Sequence[float | None]) -> list[float]:
    """Each candidate's probability of being the pick when ties at the top are drawn uniformly:
    1/k for each of the k candidates tied at the highest score, 0 for the rest and for unscored
    ones; all 0 when nothing was scored (no pick, as `pick_best` returns None)."""
    scored = [score for score in scores if score is not None]
    if not scored:
        return [0.0] * len(scores)
    best = max(scored)
    tied = scored.count(best)
    return [1 / tied if score is not None and score == best else 0.0 for score in scores]


def expected_correct(scores: Sequence[float | None], correct: Sequence[bool]) -> float:
    """The probability that the pick is correct over uniform tie-breaks: the correct share of the
    candidates tied at the top (0 when nothing was scored)."""
    scored = [score for score in scores if score is not None]
    if not scored:
        return 0.0
    best = max(scored)
    tied = [right for score, right in zip(scores, correct) if score is not None and score == best]
    return sum(tied) / len(tied)


def majority_answer(answers: Sequence[str | None], rng: random.Random) -> str | None:
    """The most common extracted answer (missing answers do not vote); ties drawn with `rng`."""
    counts = Counter(answer for answer in answers if answer is not None)
    if not counts:
        return None
    top = max(counts.values())
    return rng.choice(sorted(answer for answer, count in counts.items() if count == top))


def reselect(
    results: Sequence[ProblemResult], score_of: Callable[[CandidateRecord], float | None], seed: int
) -> list[ProblemResult]:
    """The same problems scored by `score_of` (a member's score, the shielded score) and picked again
    with the run's seeded tie-break, so their metrics compare directly with the ensemble's."""
    rescored = []
    for result in results:
        records = tuple(dataclasses.replace(record, ensemble_score=score_of(record)) for record in result.candidates)
        pick = pick_best([record.ensemble_score for record in records], problem_rng(seed, result.problem_id))
        rescored.append(dataclasses.replace(result, candidates=records, selected=pick))
    return rescored
