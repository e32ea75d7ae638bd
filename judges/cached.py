"""One engine behind the content-addressed cache: the only way any stage calls a model.

Backends only implement `Engine.run`; around it this wrapper owns, once, what every caller needs:
the cache lookup (before the engine is even loaded, so a fully cached run never loads a model),
de-duplication, batching by problem (a problem's candidates share one batch, so engines reuse the
shared prompt prefix), committing results batch by batch, and counting calls. Where the batches
run (here, or on Ray replicas) is the executor's business.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from harness.core import BatchExecutor, CallCache, EngineRequest, EngineResult, cache_key


@dataclass
class EngineStats:
    """`calls` are requests the engine actually answered; `cache_hits` the rest: answered by the
    cache, or repeats of a prompt asked in the same call (answered by its one engine call). So
    `calls + cache_hits` is the number of requests, and `calls` the number of distinct prompts missed."""

    calls: int = 0
    cache_hits: int = 0


class CachedEngine:
    """An engine's answers, cached under its model identity, computed by an executor on a miss."""

    def __init__(
        self,
        *,
        identity: str,
        executor: BatchExecutor,
        settings: Mapping[str, Any],
        cache: CallCache,
        batch_size: int,
    ) -> None:
        self.identity = identity
        self.stats = EngineStats()
        self._executor = executor
        self._settings = dict(settings)
        self._cache = cache
        self._batch_size = max(1, batch_size)

    def complete(
        self,
        requests: Sequence[EngineRequest],
        template_hash: str,
        progress: Callable[[int], object] | None,
        groups: Sequence[str] | None = None,
    ) -> list[tuple[EngineResult, bool]]:
        """Engine results for `requests` in order, from the cache where possible; (result, cached) pairs.

        Each distinct missing prompt is asked once. `groups` (a problem id per request) keeps a
        group's requests in one batch, so an engine's prefix cache sees a problem's candidates
        together; batches are then filled with whole groups up to `batch_size` requests. Results are
        committed to the cache batch by batch as the executor returns them, so an interrupted run
        keeps everything already answered.
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
        first: dict[str, int] = {}
        for index, key in enumerate(keys):
            if key not in results and key not in first:
                first[key] = index
        missing = list(first.values())
        batches = pack_batches([groups[index] if groups is not None else str(index) for index in missing], self._batch_size)
        occurrences = Counter(keys)

        def commit(batch_index: int, answers: list[EngineResult]) -> None:
            batch = [missing[position] for position in batches[batch_index]]
            fresh = {keys[index]: answer for index, answer in zip(batch, answers)}
            self._cache.put_many({key: asdict(answer) for key, answer in fresh.items()})
            results.update({key: (answer, False) for key, answer in fresh.items()})
            self.stats.calls += len(batch)
            self.stats.cache_hits += sum(occurrences[key] - 1 for key in fresh)  # the repeats its calls answered
            if progress is not None:
                progress(sum(occurrences[key] for key in fresh))

        if batches:
            self._executor.run([[requests[missing[position]] for position in batch] for batch in batches], commit)
        asked = set(first.values())
        return [results[key] if index in asked else (results[key][0], True) for index, key in enumerate(keys)]


def pack_batches(groups: Sequence[str], batch_size: int) -> list[list[int]]:
    """Positions 0..len(groups)-1 cut into batches that never split a run of equal group keys.

    Whole runs are packed up to `batch_size` positions; a run longer than that is a batch alone.
    """
    runs: list[list[int]] = []
    for position, group in enumerate(groups):
        if runs and groups[runs[-1][0]] == group:
            runs[-1].append(position)
        else:
            runs.append([position])
    batches: list[list[int]] = []
    for run in runs:
        if batches and len(batches[-1]) + len(run) <= batch_size:
            batches[-1].extend(run)
        else:
            batches.append(list(run))
    return batches
