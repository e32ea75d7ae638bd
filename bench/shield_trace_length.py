"""Shield verify time against τ-bench trace length: task 31's opening (the policy and the user's
first message) followed by N assistant messages of one `think` call each, verified with the facts of
its own replay (`verify --replay tau-bench`), for N = 375, 750 and 1,500.

Every one of the airline graph's 22 global invariants reads `steps[event.index]`, with `steps` one
record per event. Before `harness.shield.expressions.Scope` served per-event variables through the
CEL context's resolver, rebinding `event` made the library copy the whole `steps` list at each
event, so the time grew as N^2 (the red team's 1,500-call file took 56-69 s); it must now grow as N.
With `--before FILE` the result also holds the figures this script wrote (with `--out FILE`) for
another checkout's `harness` (run it with that checkout on PYTHONPATH).
Writes `bench/results/shield_trace_length.json`.
Run: `python bench/shield_trace_length.py [--before before.json]`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from provenance import ROOT, stamp

from harness.shield import VerifyOptions
from tasks.tau_airline.importer import to_trace, verify_imported
from tasks.tau_airline.policy import airline_graph
from tasks.tau_airline.trajectory import load_results

LENGTHS = (375, 750, 1500)
HEADLINE = {
    "values": (
        ("verify, 1,500 calls (this code)", "{after.1500.verify_s} s ({after.1500.verify_cpu_s} s CPU)"),
        ("verify, 1,500 calls (before)", "{before.1500.verify_s} s ({before.1500.verify_cpu_s} s CPU)"),
        ("CPU ratio 1,500 / 750 calls (this code; linear is 2)", "after_ratio_1500_to_750"),
        ("CPU ratio 1,500 / 750 calls (before)", "before_ratio_1500_to_750"),
    ),
    "tables": (
        {
            "over": "after",
            "key": "calls",
            "columns": (("events", "events"), ("verify s", "verify_s"), ("verify CPU s", "verify_cpu_s"), ("verdict", "verdict")),
        },
    ),
}


def results_file(calls: int) -> list[dict[str, Any]]:
    """Task 31 trial 0's first two messages, then `calls` one-call assistant messages."""
    with gzip.open(ROOT / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz", "rt") as handle:
        shipped = next(item for item in json.load(handle) if item["task_id"] == 31 and item["trial"] == 0)
    messages = list(shipped["traj"][:2])
    for index in range(calls):
        call = {"id": f"c{index}", "type": "function", "function": {"name": "think", "arguments": '{"thought": "x"}'}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": f"c{index}", "name": "think", "content": ""}]
    return [{**shipped, "traj": messages}]


def measure(calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.json"
        path.write_text(json.dumps(results_file(calls)))
        trace = to_trace(next(iter(load_results(str(path)))))
    graph, options = airline_graph(), VerifyOptions(deep_always=True)
    start, cpu = time.perf_counter(), time.process_time()
    report = verify_imported(trace, options, graph=graph)
    return {
        "events": len(trace.events),
        "verify_s": round(time.perf_counter() - start, 2),
        "verify_cpu_s": round(time.process_time() - cpu, 2),
        "verdict": report.verdict,
    }


def _ratio(figures: dict[str, Any]) -> float:
    """CPU seconds at 1,500 calls over those at 750 (CPU, not wall: the VM is shared)."""
    return round(figures["1500"]["verify_cpu_s"] / figures["750"]["verify_cpu_s"], 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="a result this script wrote with --out for the code before")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "shield_trace_length.json"))
    args = parser.parse_args()
    figures = {str(calls): measure(calls) for calls in LENGTHS}
    result: dict[str, Any] = {**stamp(), "lengths": list(LENGTHS), "after": figures}
    result["after_ratio_1500_to_750"] = _ratio(figures)
    if args.before:
        before = json.loads(Path(args.before).read_text())["after"]
        result["before"] = before
        result["before_ratio_1500_to_750"] = _ratio(before)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    for calls, figure in figures.items():
        print(f"{calls:>5} calls: {figure['events']} events, verify {figure['verify_s']} s ({figure['verify_cpu_s']} s CPU), {figure['verdict']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
