"""The CPU engine: GGUF models through llama.cpp (`llama-cpp-python`).

Chosen after measuring on a 2-core CPU: SmolLM2-135M loads in
0.2 s and scores a ~300-token verdict prompt in well under a second, while transformers + torch took
~54 s just to convert the GGUF tokenizer. A verdict is one forward pass: we evaluate the prompt and
read the last position's logits ourselves (`logits_all=False` keeps it cheap), then sum the
probability of every single-token variant of each option (`Yes`, ` Yes`, `yes`, ...).

Consecutive prompts of a batch share a long prefix (rubric + problem: a problem's candidates share a
batch), so before each evaluation we keep the KV cache for the longest common token prefix with the
previous prompt of the batch and evaluate only the rest.

On CPUs whose VM hides AVX-512/AMX, llama.cpp must be built without them; `.ci/run` shows the flags.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.core import EngineRequest, EngineResult, HarnessError
from judges.backends.options import variants
from judges.backends.runtime import require
from judges.config import ModelConfig


class LlamaCppEngine:
    """One GGUF model in one llama.cpp context; answers verdict requests from next-token logits."""

    def __init__(self, config: ModelConfig, model_path: Path) -> None:
        llama_cpp = require("llama_cpp", "cpu", "llama-cpp-python", "pip install llama-cpp-python; see docs/getting-started.md for CPU build flags")
        self._llama_cpp = llama_cpp
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(model_path),
                n_ctx=config.n_ctx,
                n_threads=config.n_threads or os.cpu_count() or 1,
                n_threads_batch=config.n_threads or os.cpu_count() or 1,  # prompt evaluation: all a verdict does
                logits_all=False,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as error:
            raise HarnessError(f"cannot load model file {model_path}: it is unreadable or corrupt ({error})") from error
        self._config = config
        self._n_ctx = config.n_ctx
        self._formatter = self._chat_formatter() if config.prompt_style == "chat" else None
        self._option_tokens: dict[tuple[str, ...], dict[str, list[int]]] = {}

    def _chat_formatter(self) -> Any:
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise HarnessError(f"model {self._config.name} has no chat template; set prompt_style=completion for it")
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        vocab = self._llm._model
        eos = self._llm.detokenize([vocab.token_eos()], special=True).decode("utf-8", "replace")
        bos = self._llm.detokenize([vocab.token_bos()], special=True).decode("utf-8", "replace")
        return Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos, add_generation_prompt=True)

    def _prompt_tokens(self, prompt: str) -> list[int]:
        if self._formatter is not None:
            text = self._formatter(messages=[{"role": "user", "content": prompt}]).prompt
        else:
            text = prompt + self._config.completion_suffix
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        bos = self._llm.token_bos()
        if len(tokens) > 1 and tokens[0] == bos and tokens[1] == bos:  # template already wrote a BOS
            tokens = tokens[1:]
        return tokens

    def _tokens_for(self, options: tuple[str, ...]) -> dict[str, list[int]]:
        if options not in self._option_tokens:
            table: dict[str, list[int]] = {}
            for option in options:
                ids = set()
                for variant in variants(option):
                    encoded = self._llm.tokenize(variant.encode("utf-8"), add_bos=False, special=False)
                    if len(encoded) == 1:
                        ids.add(encoded[0])
                if not ids:
                    raise HarnessError(f"verdict option {option!r} is not a single token for model {self._config.name}")
                table[option] = sorted(ids)
            self._option_tokens[options] = table
        return self._option_tokens[options]

    def _evaluate(self, tokens: list[int]) -> np.ndarray:
        """Log-softmax of the next-token logits after `tokens`, reusing the cached common prefix."""
        previous = self._llm._input_ids
        prefix = 0
        for cached, new in zip(previous, tokens):
            if cached != new:
                break
            prefix += 1
        prefix = min(prefix, len(tokens) - 1)  # always evaluate at least one token to refresh logits
        self._llm.n_tokens = prefix
        self._llm.eval(tokens[prefix:])
        pointer = self._llama_cpp.llama_get_logits_ith(self._llm.ctx, -1)
        logits = np.ctypeslib.as_array(pointer, shape=(self._llm.n_vocab(),)).astype(np.float64)
        top = logits.max()
        return logits - top - math.log(np.exp(logits - top).sum())

    def _option_logprobs(self, tokens: list[int], options: tuple[str, ...]) -> tuple[dict[str, float], str]:
        logprobs = self._evaluate(tokens)
        option_logprobs = {option: float(np.logaddexp.reduce(logprobs[ids])) for option, ids in self._tokens_for(options).items()}
        greedy = self._llm.detokenize([int(np.argmax(logprobs))]).decode("utf-8", "replace")
        return option_logprobs, greedy

    def _generate(self, tokens: list[int], request: EngineRequest) -> tuple[str, int]:
        completion = self._llm.create_completion(
            tokens, max_tokens=request.max_tokens, temperature=request.temperature, top_p=request.top_p, seed=request.seed
        )
        return completion["choices"][0]["text"], int(completion["usage"]["completion_tokens"])

    def _answer(self, request: EngineRequest) -> EngineResult:
        tokens = self._prompt_tokens(request.prompt)
        budget = len(tokens) + request.max_tokens + (len(self._llm.tokenize(request.verdict_suffix.encode(), add_bos=False)) if request.options else 0)
        if budget >= self._n_ctx:
            return EngineResult(
                text="",
                option_logprobs=None,
                prompt_tokens=len(tokens),
                completion_tokens=0,
                error=f"prompt of {len(tokens)} tokens plus {request.max_tokens} to generate does not fit n_ctx={self._n_ctx}",
            )
        if request.max_tokens == 0:
            option_logprobs, greedy = self._option_logprobs(tokens, request.options)
            return EngineResult(text=greedy, option_logprobs=option_logprobs, prompt_tokens=len(tokens), completion_tokens=1)
        generated, produced = self._generate(tokens, request)
        if not request.options:
            return EngineResult(text=generated, option_logprobs=None, prompt_tokens=len(tokens), completion_tokens=produced)
        continuation = self._llm.tokenize((generated + request.verdict_suffix).encode("utf-8"), add_bos=False, special=False)
        option_logprobs, _ = self._option_logprobs(tokens + continuation, request.options)
        return EngineResult(text=generated, option_logprobs=option_logprobs, prompt_tokens=len(tokens), completion_tokens=produced)

    def close(self) -> None:
        self._llm.close()

    def run(self, requests: Sequence[EngineRequest]) -> list[EngineResult]:
        """Answers in order. The KV cache is reused within a batch only: evaluating a suffix after a
        cached prefix moves logprobs in the last digits, so a batch's answers must not depend on what
        an engine (a replica) happened to run before it."""
        self._llm.reset()
        return [self._answer(request) for request in requests]
