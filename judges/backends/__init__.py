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

BACKENDS = ("cpu", "openai")


@dataclass(frozen=True)
class EngineSpec:
    """How to build an engine, and the facts that identify its outputs for caching and provenance."""

    identity: str
    factory: Callable[[], Engine]
    settings: dict[str, Any]
    provenance: dict[str, str]


def engine_spec(config: ModelConfig) -> EngineSpec:
    if config.backend not in BACKENDS:
        raise HarnessError(f"judge backend {config.backend!r} (model {config.name}) is not one of: {', '.join(BACKENDS)}")
    if config.backend == "openai":
        return _openai_spec(config)
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


def _openai_spec(config: ModelConfig) -> EngineSpec:
    """A judge behind an OpenAI-compatible endpoint.

    There is no weights file to hash, so the identity is what names the outputs: endpoint and served
    model, plus `model` when it carries a revision (anything but "remote"), so that redeploying a new
    revision under the same name does not reuse cached verdicts of the old one.
    """
    if not config.base_url:
        raise HarnessError(f"judge {config.name}: backend=openai needs base_url (e.g. http://127.0.0.1:8000/v1)")
    served_model = config.served_model or config.name
    identity = f"openai:{config.base_url}:{served_model}"
    if config.model and config.model != "remote":
        identity += f":{config.model}"

    def factory() -> Engine:
        from judges.backends.openai_http import OpenAIChatEngine, api_key_from_env

        return OpenAIChatEngine(
            base_url=config.base_url or "",
            model=served_model,
            api_key=api_key_from_env(config.api_key_env),
            max_concurrency=config.max_concurrency,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
        )

    settings = {
        "backend": "openai",
        "base_url": config.base_url,
        "served_model": served_model,
    }
    return EngineSpec(
        identity=identity,
        factory=factory,
        settings=settings,
        provenance={
            "base_url": config.base_url,
            "served_model": served_model,
            "model": config.model,
            "family": config.family,
        },
    )
