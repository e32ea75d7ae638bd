"""A model as a `CachedEngine`: the one wiring every model call goes through.

Judges and the policy model that generates a pool are wired the same way: the backend's
`EngineSpec`, an executor from the caller's `place` (the app's cluster: the Ray replica pool, or this
process), and the call cache around both. The judge layer cannot know about clusters (they sit in
the app above it), so the app passes `place` in; without one, batches run in this process.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.core import BatchExecutor, CallCache
from judges.backends import EngineSpec, engine_spec
from judges.cached import CachedEngine
from judges.config import ModelConfig
from judges.executor import InlineExecutor

# place(key, model, spec) -> where the model's batches run; `key` names the pool in logs and errors.
Place = Callable[[str, ModelConfig, EngineSpec], BatchExecutor]


def cached_engine(key: str, model: ModelConfig, cache: CallCache, place: Place | None = None) -> tuple[CachedEngine, EngineSpec]:
    """`model`'s cached engine, its batches run where `place` says (default: inline, built on first use),
    and the spec, whose provenance names the model file and hash for tracking."""
    spec = engine_spec(model)
    executor = place(key, model, spec) if place is not None else InlineExecutor(spec.factory)
    engine = CachedEngine(identity=spec.identity, executor=executor, settings=spec.settings, cache=cache, batch_size=model.batch_size)
    return engine, spec
