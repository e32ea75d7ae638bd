"""Inference backends. Each turns a `ModelConfig` into a model identity and a lazy engine factory.

Heavy runtimes are imported inside the backend that needs them, so selecting one backend never
imports another's dependencies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.config import ModelConfig
from harness.errors import HarnessError
from judges.engine import Engine
from judges.models import file_sha256, resolve_model_file

BACKENDS = ("cpu",)


@dataclass(frozen=True)
class EngineSpec:
    """How to build an engine, and the facts that identify its outputs for caching and provenance."""

    identity: str
    factory: Callable[[], Engine]
    settings: dict[str, Any]
    provenance: dict[str, str]


def engine_spec(config: ModelConfig) -> EngineSpec:
    if config.backend != "cpu":
        raise HarnessError(f"judge backend {config.backend!r} (model {config.name}) is not one of: {', '.join(BACKENDS)}")
    if config.prompt_style not in ("chat", "completion"):
        raise HarnessError(f"prompt_style={config.prompt_style!r} (model {config.name}) is not one of: chat, completion")
    path = resolve_model_file(config.model)
    digest = file_sha256(path)

    def factory() -> Engine:
        from judges.backends.llama_cpp import LlamaCppEngine

        return LlamaCppEngine(config, path)

    settings = {
        "backend": "cpu",
        "prompt_style": config.prompt_style,
        "completion_suffix": config.completion_suffix if config.prompt_style == "completion" else None,
        "n_ctx": config.n_ctx,
    }
    return EngineSpec(
        identity=f"gguf-sha256:{digest}",
        factory=factory,
        settings=settings,
        provenance={"file": path.name, "sha256": digest, "family": config.family},
    )
