"""`pool=generate`: sample candidates from a policy model and keep them as a pool file.

The policy model runs through the same backends and the same content-addressed cache as the judges,
with a per-sample seed drawn from the run seed, the problem and the sample index, so regenerating is
free and reproducible. Its batches run where the run's cluster puts them (`place`): on Ray replicas
for `cluster=local` and `cluster=ray`, as the judges' do. The pool is written as JSONL (`pool.path`, default `pool.jsonl` in the run
directory) so that a later run can re-judge it with `pool=file` without a policy model at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from harness.config import GENERATOR, PoolConfig
from harness.core import CallCache, Candidate, EngineRequest, HarnessError, PublicProblem, Stopped, neutralise
from harness.pools import check_pool, write_pool_file
from judges import EngineStats, LoadedTemplate, Place, cached_engine


class GenerationStopped(Stopped):
    """Generation stopped on request, with the policy model's call counts so far (all in the cache)."""

    def __init__(self, message: str, stats: EngineStats) -> None:
        super().__init__(message)
        self.stats = stats


def sample_seed(seed: int, problem_id: str, sample: int) -> int:
    digest = hashlib.sha256(f"{seed}:{problem_id}:{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def generate_pool(
    problems: Sequence[PublicProblem],
    config: PoolConfig,
    template: str,
    cache: CallCache,
    seed: int,
    output: Path,
    place: Place | None = None,
) -> tuple[list[Candidate], EngineStats]:
    """`config.samples` candidates per problem, written to `output` as a pool file; `place` (a
    cluster's `executor`) decides where the policy model runs, by default in this process."""
    check_pool(config)
    assert config.generator is not None  # check_pool refuses pool=generate without one
    engine, _ = cached_engine(GENERATOR, config.generator, cache, place)
    prompt = LoadedTemplate.load(template)
    requests, keys = [], []
    for problem in problems:
        text = prompt.compiled.render(problem=neutralise(problem.question, 6000)).strip()
        for sample in range(config.samples):
            requests.append(
                EngineRequest(
                    text,
                    (),
                    max_tokens=config.max_tokens,
                    temperature=config.temperature,
                    top_p=config.top_p,
                    seed=sample_seed(seed, problem.problem_id, sample),
                )
            )
            keys.append((problem.problem_id, sample))
    with tqdm(total=len(requests), desc=f"generating [{config.generator.name}]", unit="sample", leave=False) as bar:
        try:
            answers = engine.complete(requests, prompt.hash, bar.update)
        except Stopped as stopped:
            raise GenerationStopped(str(stopped), engine.stats) from None
    candidates = []
    for (problem_id, sample), request, (result, _) in zip(keys, requests, answers):
        meta = {"temperature": request.temperature, "top_p": request.top_p, "seed": request.seed, "max_tokens": request.max_tokens}
        if result.error is not None:
            raise HarnessError(f"pool=generate: the policy model could not answer {problem_id}: {result.error}")
        candidates.append(Candidate(problem_id, f"{config.generator.name}-s{sample}", result.text, config.generator.name, meta))
    write_pool_file(output, candidates)
    return candidates, engine.stats
