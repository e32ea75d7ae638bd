"""Values passed to and returned by judges.

A judge receives `JudgeRequest`s built from public views only (`PublicProblem`, `CandidateView`)
and returns one `Verdict` per request. Engines see rendered prompts (`EngineRequest`) and return raw
`EngineResult`s; the judge facade turns those into verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tasks.types import PublicProblem

VerdictStatus = Literal["ok", "unscored"]


@dataclass(frozen=True)
class CandidateView:
    """What a judge may see of a candidate under the protocol: its id and the shown text."""

    candidate_id: str
    text: str


@dataclass(frozen=True)
class JudgeRequest:
    problem: PublicProblem
    candidate: CandidateView


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
