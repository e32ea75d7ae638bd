"""One engine behind the content-addressed cache: the only way any stage calls a model.

Backends only implement `Engine.run`; around it this wrapper owns, once, what every caller needs:
the cache lookup (before the engine is even loaded, so a fully cached run never loads a model),
de-duplication, batching in request order (a problem's candidates stay adjacent, so engines reuse
the shared prompt prefix), committing results batch by batch, and counting calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from harness.cache import CallCache, cache_key
from judges.engine import Engine
from judges.types import EngineRequest, EngineResult


@dataclass
class EngineStats:
    """`calls` are requests the engine actually answered; `cache_hits` the ones the cache did."""

    calls: int = 0
    cache_hits: int = 0


class CachedEngine:
    """A lazily built engine whose answers are cached under its model identity."""

    def __init__(
        self,
        *,
        identity: str,
        factory: Callable[[], Engine],
        settings: Mapping[str, Any],
        cache: CallCache,
        batch_size: int,
    ) -> None:
        self.identity = identity
        self.stats = EngineStats()
        self._factory = factory
        self._engine: Engine | None = None
        self._settings = dict(settings)
        self._cache = cache
        self._batch_size = max(1, batch_size)

    def complete(
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
                    self._engine = self._factory()
                answers = self._engine.run([requests[index] for index in batch])
                self.stats.calls += len(batch)
                fresh = {keys[index]: answer for index, answer in zip(batch, answers)}
                self._cache.put_many({key: asdict(answer) for key, answer in fresh.items()})
                results.update({key: (answer, False) for key, answer in fresh.items()})
            if progress is not None:
                progress(len(chunk))
        return [results[key] for key in keys]
