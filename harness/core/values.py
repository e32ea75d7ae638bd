"""The values every layer passes along: what a judge may see, what an engine is asked, what a judge says.

They live on the floor because tasks produce them, judges consume them, the shield and the pipeline read
them, and none of those layers may import another to name them. Every value here is public by design:
nothing in `PublicProblem`, `Candidate` or `CandidateView` can reach an anchor (ground truth stays in the
task layer's `AnchorStore`), so a judge cannot be shown the answer by accident.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

VerdictStatus = Literal["ok", "unscored"]


@dataclass(frozen=True)
class PublicProblem:
    """What a judge may see of a problem: its id and statement, never its answer."""

    problem_id: str
    question: str


@dataclass(frozen=True)
class Candidate:
    """One candidate solution from a pool. `meta` is free-form provenance from the pool file."""

    problem_id: str
    candidate_id: str
    text: str
    source: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CandidateView:
    """What a judge may see of a candidate under the protocol: its id and the shown text."""

    candidate_id: str
    text: str


@dataclass(frozen=True)
class EngineRequest:
    """A rendered prompt (the user turn) and what to do with it.

    With `max_tokens=0` the engine reads the next-token mass of each verdict option directly after the
    prompt. With `max_tokens>0` it first generates (at `temperature`, seeded by `seed`); then, when
    `options` are given, it appends `verdict_suffix` to the generated text and reads the options' mass
    there. `options=()` asks for the generation alone.
    """

    prompt: str
    options: tuple[str, ...]
    max_tokens: int = 0
    temperature: float = 0.0
    seed: int = 0
    verdict_suffix: str = ""
    top_p: float = 1.0


@dataclass(frozen=True)
class EngineResult:
    """An engine's answer. `option_logprobs` is None when the engine cannot report probabilities;
    the verdict is then parsed from `text`, unless `error` says the request could not be answered."""

    text: str
    option_logprobs: dict[str, float] | None
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None  # why the engine could not answer (the verdict is then unscored)


@dataclass(frozen=True)
class Verdict:
    """One judge's verdict on one candidate, stamped with what produced it.

    `score` is P(first option) in [0, 1], or None when the output could not be scored
    (`status="unscored"`, with `reason`); unscored verdicts are excluded from aggregation.
    """

    judge: str
    protocol: str
    template_hash: str
    score: float | None
    status: VerdictStatus
    reason: str | None
    raw_text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool

