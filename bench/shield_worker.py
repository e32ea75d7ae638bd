"""Measure what checking each candidate in a forked worker with a deadline costs the shield stage.

`harness.shielded_selection.shield_results` sends every candidate to a `ShieldWorker` (one forked
process, a wall-time budget per candidate) so that a shield that raises, dies or stalls on hostile
text costs that candidate, never the run. This times the stage on the main job's pool (the GSM8K
authors' 200 solutions to the first 50 test problems, no judge) against calling the same shield
directly in this process, and one candidate that stalls in a C regex against the budget it is
given (one of the problem's four candidates stalls). Writes `bench/results/shield_worker.json`. Run: `python bench/shield_worker.py`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import time
from typing import Any

from provenance import stamp

from harness.config import ShieldConfig
from harness.selection import CandidateRecord, ProblemResult
from harness.shield import ShieldReport, VerifyOptions
from harness.shielded_selection import shield_results, verify_options
from tasks.config import TaskConfig
from tasks.gsm8k import load
from tasks.types import AnchorOutcome

# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("ms per candidate, shield called in process", "in_process_ms_per_candidate"),
        ("ms per candidate, through the worker", "worker_ms_per_candidate"),
        ("worker overhead per candidate (ms)", "overhead_ms_per_candidate"),
        ("one of four candidates stalls: budget (s), wall time of the four checks (s)", "{stall.budget_s}, {stall.wall_s}"),
    ),
}


def _results(limit: int) -> tuple[list[ProblemResult], list[Any], Any]:
    task = load(TaskConfig(name="gsm8k"))
    pool = task.default_pool()
    problems = list(task.problems[:limit])
    results = [
        ProblemResult(p.problem_id, tuple(CandidateRecord(c, AnchorOutcome(False, None), {}, None) for c in pool if c.problem_id == p.problem_id), None, False)
        for p in problems
    ]
    return results, problems, task


def _stalling(shield: Any) -> Any:
    """`shield`, except that on candidate `6b_finetuning` it backtracks for minutes in a C regex holding the GIL."""

    def stall(problem: Any, candidate: Any, reward: float | None, options: VerifyOptions | None) -> ShieldReport:
        if candidate.candidate_id == "6b_finetuning":
            re.match(r"(a|aa)+$", "a" * 60 + "b")
        report: ShieldReport = shield(problem, candidate, reward, options)
        return report

    return stall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "shield_worker.json"))
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    results, problems, task = _results(args.limit)
    candidates = sum(len(result.candidates) for result in results)
    config = ShieldConfig(enabled=True)
    options = verify_options(config, 0)
    assert task.shield is not None
    task.shield.load()  # type: ignore[attr-defined]
    start = time.perf_counter()
    for result, problem in zip(results, problems):
        for record in result.candidates:
            task.shield(problem, record.candidate, None, options)
    direct = time.perf_counter() - start
    start = time.perf_counter()
    shield_results(results, problems, task, config, seed=0)
    worker = time.perf_counter() - start
    budget = 2.0
    stalling = dataclasses.replace(task, shield=_stalling(task.shield))
    start = time.perf_counter()
    [stalled] = shield_results(results[:1], problems[:1], stalling, ShieldConfig(enabled=True, candidate_budget_s=budget), seed=0)
    stall_wall = time.perf_counter() - start
    kinds = [[v.kind for v in record.shield.violations] for record in stalled.candidates if record.shield]
    out = {
        **stamp(),
        "candidates": candidates,
        "in_process_ms_per_candidate": round(direct / candidates * 1e3, 3),
        "worker_ms_per_candidate": round(worker / candidates * 1e3, 3),
        "overhead_ms_per_candidate": round((worker - direct) / candidates * 1e3, 3),
        "stall": {"candidates": len(stalled.candidates), "budget_s": budget, "wall_s": round(stall_wall, 2), "kinds": kinds},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=2)
        handle.write("\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
