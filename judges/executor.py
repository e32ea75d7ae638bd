"""Running batches in this process: the inline `BatchExecutor` (the contract is `harness.core.contracts`).

`CachedEngine` hands an executor the batches the cache could not answer; the executor calls
`on_batch(index, results)` as each batch is answered (in any order), so results are committed as
they arrive. `InlineExecutor` runs them here, one after another, on a lazily built engine; the Ray
replica pool (`harness.cluster`) runs them on replica actors. Both take an optional stop event: once
it is set they start no new batch, let the running ones land, and raise `harness.core.stopping.Stopped`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from harness.core import Engine, EngineRequest, OnBatch, check


class InlineExecutor:
    """Batches in order on one engine in this process, built on first use (a cached run never loads it)."""

    def __init__(self, factory: Callable[[], Engine], stop: threading.Event | None = None) -> None:
        self._factory = factory
        self._engine: Engine | None = None
        self._stop = stop

    def run(self, batches: Sequence[Sequence[EngineRequest]], on_batch: OnBatch) -> None:
        for index, batch in enumerate(batches):
            check(self._stop)
            if self._engine is None:
                self._engine = self._factory()
            on_batch(index, self._engine.run(batch))

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
        self._engine = None
