"""The judge facade: one model under one protocol, with caching, batching and a prompt log.

Backends only implement `Engine.run`; everything around a model call lives here, once: rendering
prompts from public views, the content-addressed cache (looked up before the engine is even loaded,
so a fully cached run never loads a model), batching in request order (candidates of one problem
stay adjacent, which lets engines reuse the shared prompt prefix), turning option log-probabilities
into scores, and recording every prompt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import IO, Any

from harness.cache import CallCache, cache_key
from judges.engine import Engine
from judges.protocol import Protocol, parse_verdict
from judges.types import EngineRequest, EngineResult, JudgeRequest, Verdict


@dataclass
class JudgeStats:
    """What a judge did: `calls` are requests the engine actually answered, `cache_hits` the rest."""

    calls: int = 0
    cache_hits: int = 0


def option_score(option_logprobs: Mapping[str, float], positive: str, negative: str) -> float | None:
    """P(positive) normalised over the two options; None when neither option has any mass."""
    positive_lp, negative_lp = option_logprobs.get(positive, -math.inf), option_logprobs.get(negative, -math.inf)
    top = max(positive_lp, negative_lp)
    if top == -math.inf:
        return None
    positive_p, negative_p = math.exp(positive_lp - top), math.exp(negative_lp - top)
    return positive_p / (positive_p + negative_p)


class Judge:
    """Scores batches of requests with one model under one protocol."""

    def __init__(
        self,
        *,
        name: str,
        identity: str,
        engine_factory: Callable[[], Engine],
        engine_settings: Mapping[str, Any],
        protocol: Protocol,
        cache: CallCache,
        batch_size: int,
        seed: int = 0,
        prompt_log: IO[str] | None = None,
    ) -> None:
        self.name = name
        self.identity = identity
        self.protocol = protocol
        self.stats = JudgeStats()
        self._engine_factory = engine_factory
        self._engine: Engine | None = None
        self._settings = dict(engine_settings)
        self._cache = cache
        self._batch_size = max(1, batch_size)
        self._seed = seed
        self._prompt_log = prompt_log

    def _complete(
        self, requests: Sequence[EngineRequest], template_hash: str, progress: Callable[[int], None] | None
    ) -> list[tuple[EngineResult, bool]]:
        """Engine results for `requests` in order, from the cache where possible; (result, cached) pairs.

        Misses go to the engine in batches in request order and are committed to the cache batch by
        batch, so an interrupted run keeps everything already answered.
        """
        keys = [
            cache_key({"model": self.identity, "template": template_hash, "request": asdict(request), "settings": self._settings})
            for request in requests
        ]
        known = self._cache.get_many(keys)
        results: dict[str, tuple[EngineResult, bool]] = {key: (EngineResult(**value), True) for key, value in known.items()}
        hits = sum(key in known for key in keys)
        self.stats.cache_hits += hits
        if progress is not None and hits:
            progress(hits)
        missing = [index for index, key in enumerate(keys) if key not in results]
        for start in range(0, len(missing), self._batch_size):
            chunk = missing[start : start + self._batch_size]
            batch: list[int] = []
            for index in chunk:  # each distinct prompt once, in order
                if keys[index] not in results and all(keys[index] != keys[other] for other in batch):
                    batch.append(index)
            if batch:
                if self._engine is None:
                    self._engine = self._engine_factory()
                answers = self._engine.run([requests[index] for index in batch])
                self.stats.calls += len(batch)
                fresh = {keys[index]: answer for index, answer in zip(batch, answers)}
                self._cache.put_many({key: asdict(answer) for key, answer in fresh.items()})
                results.update({key: (answer, False) for key, answer in fresh.items()})
            if progress is not None:
                progress(len(chunk))
        return [results[key] for key in keys]

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
        answers = self._complete(solve_requests, protocol.solve.template_hash, None)
        return {problem.problem_id: result.text.strip() for problem, (result, _) in zip(problems, answers)}

    def _verdict(self, result: EngineResult, cached: bool) -> Verdict:
        positive, negative = self.protocol.options
        reason: str | None = None
        if result.error is not None:
            score, reason = None, result.error
        elif result.option_logprobs is not None:
            score = option_score(result.option_logprobs, positive, negative)
            if score is None:
                reason = "no probability mass on either verdict option"
        else:
            option, reason = parse_verdict(result.text, self.protocol.options)
            score = None if option is None else float(option == positive)
        return Verdict(
            judge=self.name,
            protocol=self.protocol.name,
            template_hash=self.protocol.template_hash,
            score=score,
            status="ok" if score is not None else "unscored",
            reason=reason,
            raw_text=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cached=cached,
        )

    def judge(self, requests: Sequence[JudgeRequest], progress: Callable[[int], None] | None = None) -> list[Verdict]:
        """One verdict per request, in order."""
        protocol = self.protocol
        own = self._own_solutions(requests)
        prompts = [protocol.render(r.problem, r.candidate, own_solution=own.get(r.problem.problem_id)) for r in requests]
        engine_requests = [
            EngineRequest(prompt, protocol.options, protocol.max_tokens, protocol.temperature, self._seed, protocol.verdict_suffix)
            for prompt in prompts
        ]
        answers = self._complete(engine_requests, protocol.template_hash, progress)
        verdicts = [self._verdict(result, cached) for result, cached in answers]
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
