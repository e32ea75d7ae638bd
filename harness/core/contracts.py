"""The two seams every backend and every scheduler implements: an `Engine` and a `BatchExecutor`.

They sit on the floor so that the judge layer (which implements engines), the cluster (which runs
engines on Ray replicas) and the pipeline (which wires them) agree on one contract without importing
each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from harness.core.values import EngineRequest, EngineResult

OnBatch = Callable[[int, list[EngineResult]], None]


class Engine(Protocol):
    """An inference engine holding one model.

    `run` answers a batch of requests in order. For each request it reports the log-probability mass
    of each verdict option as the next token (summed over the tokenizer's variants of the option), or
    None when it cannot, in which case the judge parses the generated text.
    """

    def run(self, requests: Sequence[EngineRequest]) -> list[EngineResult]: ...

    def close(self) -> None:
        """Release the model now (its memory, and any process it started). An engine that leaves this
        to the garbage collector can keep a run from exiting: vLLM's engine-core process is joined
        at interpreter exit, so one still alive then waits forever."""
        ...


class BatchExecutor(Protocol):
    """Where batches run. `run` calls `on_batch(index, results)` as each batch is answered, in any
    order, so results are committed as they arrive; `close` releases whatever ran them."""

    def run(self, batches: Sequence[Sequence[EngineRequest]], on_batch: OnBatch) -> None: ...

    def close(self) -> None: ...
