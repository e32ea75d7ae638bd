"""The judge facade: one model under one protocol, with a prompt log.

A judge renders prompts from public views, asks its `CachedEngine` (which owns the cache, batching
and the engine's lifetime), turns option log-probabilities into scores, and records every prompt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import IO

from harness.core import EngineRequest, EngineResult, Verdict
from judges.cached import CachedEngine, EngineStats
from judges.protocol import Protocol, parse_verdict
from judges.types import JudgeRequest


def option_score(option_logprobs: Mapping[str, float], positive: str, negative: str) -> float | None:
    """P(positive) normalised over the two options; None when neither option has any mass."""
    positive_lp, negative_lp = option_logprobs.get(positive, -math.inf), option_logprobs.get(negative, -math.inf)
    top = max(positive_lp, negative_lp)
    if top == -math.inf:
        return None
    positive_p, negative_p = math.exp(positive_lp - top), math.exp(negative_lp - top)
    return positive_p / (positive_p + negative_p)


def to_verdict(result: EngineResult, protocol: Protocol, judge: str, cached: bool = False) -> Verdict:
    """A verdict from an engine's answer: the option probabilities when the engine reported them,
    else the last verdict word in its text; an engine error or no verdict is `unscored`, never 0.5."""
    positive, negative = protocol.options
    reason: str | None = None
    if result.error is not None:
        score, reason = None, result.error
    elif result.option_logprobs is not None:
        score = option_score(result.option_logprobs, positive, negative)
        if score is None:
            reason = "no probability mass on either verdict option"
    else:
        option, reason = parse_verdict(result.text, protocol.options)
        score = None if option is None else float(option == positive)
    return Verdict(
        judge=judge,
        protocol=protocol.name,
        template_hash=protocol.template_hash,
        score=score,
        status="ok" if score is not None else "unscored",
        reason=reason,
        raw_text=result.text,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        cached=cached,
    )


class Judge:
    """Scores batches of requests with one model under one protocol."""

    def __init__(
        self, *, name: str, engine: CachedEngine, protocol: Protocol, seed: int = 0, prompt_log: IO[str] | None = None
    ) -> None:
        self.name = name
        self.engine = engine
        self.protocol = protocol
        self._seed = seed
        self._prompt_log = prompt_log

    @property
    def identity(self) -> str:
        return self.engine.identity

    @property
    def stats(self) -> EngineStats:
        return self.engine.stats

    def _own_solutions(self, requests: Sequence[JudgeRequest]) -> dict[str, str]:
        """Solve-first: the judge's own solution per problem, generated once and cached.

        The cache key names the solve template, not the verdict template, so every protocol that
        solves with the same template reuses the same solutions.
        """
        protocol = self.protocol
        if protocol.solve is None:
            return {}
        problems = list({request.problem.problem_id: request.problem for request in requests}.values())
        solve_requests = [
            EngineRequest(protocol.solve.render(problem), (), protocol.solve.max_tokens, protocol.temperature, self._seed)
            for problem in problems
        ]
        answers = self.engine.complete(solve_requests, protocol.solve.template_hash, None)
        return {problem.problem_id: result.text.strip() for problem, (result, _) in zip(problems, answers)}

    def judge(self, requests: Sequence[JudgeRequest], progress: Callable[[int], object] | None = None) -> list[Verdict]:
        """One verdict per request, in order."""
        protocol = self.protocol
        own = self._own_solutions(requests)
        prompts = [protocol.render(r.problem, r.candidate, own_solution=own.get(r.problem.problem_id)) for r in requests]
        engine_requests = [
            EngineRequest(prompt, protocol.options, protocol.max_tokens, protocol.temperature, self._seed, protocol.verdict_suffix)
            for prompt in prompts
        ]
        groups = [request.problem.problem_id for request in requests]  # one problem's candidates share a batch
        answers = self.engine.complete(engine_requests, protocol.template_hash, progress, groups)
        verdicts = [to_verdict(result, self.protocol, self.name, cached) for result, cached in answers]
        self._log(requests, prompts, verdicts)
        return verdicts

    def _log(self, requests: Sequence[JudgeRequest], prompts: Sequence[str], verdicts: Sequence[Verdict]) -> None:
        if self._prompt_log is None:
            return
        for request, prompt, verdict in zip(requests, prompts, verdicts):
            line = {
                "judge": self.name,
                "model": self.identity,
                "protocol": verdict.protocol,
                "template_hash": verdict.template_hash,
                "problem_id": request.problem.problem_id,
                "candidate_id": request.candidate.candidate_id,
                "prompt": prompt,
                "output": verdict.raw_text,
                "score": verdict.score,
                "status": verdict.status,
                "cached": verdict.cached,
            }
            self._prompt_log.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._prompt_log.flush()
