"""τ-bench airline: a tiny CPU judge over compact transcripts, beside the shield, on a few tasks.

Runs `python -m harness task=tau_airline task.path=SUBSET judge=llama_tiny shield=on` (protocol
`transcript`: the policy in brief and the compact transcript) on every trial of `--tasks` and records
the judge's plain best-of-N pick next to the pick on judge score x compliance, AUROC of each against
τ-bench's reward, the wall time per candidate, and every candidate's score and violations. The
default tasks (13, 17, 31) are ones with both successful and failed trials, where a pick can matter;
they were chosen after the shield's verdicts were known, so the shielded numbers here are not an
unbiased estimate (the whole-data shield-only pick is in README "Verifying τ-bench runs").

Judge calls are cached by content (`--cache`): a rerun with the same cache costs nothing.
Writes `bench/results/tau_transcript_judge.json`. Run: `python bench/tau_transcript_judge.py`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from importlib import resources

from provenance import stamp

KEYS = (
    "selection_accuracy",
    "shielded.selection_accuracy",
    "random_accuracy",
    "oracle_accuracy",
    "auroc",
    "shielded.auroc",
    "hack_rate",
    "shielded.hack_rate",
    "parse_failure_rate",
)


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("tasks, candidates", "{tasks}; {candidates}"),
        ("selection accuracy: judge, judge x compliance", "{metrics.selection_accuracy}, {metrics.shielded.selection_accuracy}"),
        ("random, oracle accuracy", "{metrics.random_accuracy}, {metrics.oracle_accuracy}"),
        ("AUROC: judge, judge x compliance", "{metrics.auroc}, {metrics.shielded.auroc}"),
        ("hack rate: judge, judge x compliance", "{metrics.hack_rate}, {metrics.shielded.hack_rate}"),
        ("judge calls, cache hits, wall s", "{judge_calls}, {cache_hits}, {wall_s}"),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="13,17,31", help="τ-bench task ids, comma-separated")
    parser.add_argument("--cache", default=".harness/cache.sqlite")
    parser.add_argument("--out", default="bench/results/tau_transcript_judge.json")
    args = parser.parse_args()
    wanted = {int(task) for task in args.tasks.split(",")}
    shipped = resources.files("tasks.tau_airline").joinpath("data").joinpath("trajectories-gpt-4o.json.gz")
    subset = [entry for entry in json.loads(gzip.decompress(shipped.read_bytes())) if entry["task_id"] in wanted]
    with tempfile.TemporaryDirectory() as folder:
        results = os.path.join(folder, "results.json")
        with open(results, "w", encoding="utf-8") as handle:
            json.dump(subset, handle)
        output = os.path.join(folder, "run")
        command = [
            sys.executable, "-m", "harness", "task=tau_airline", f"task.path={results}", "judge=llama_tiny", "shield=on",
            f"output_dir={output}", f"cache.path={args.cache}", "tracking.enabled=false",
        ]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(command, check=True)
        wall = time.perf_counter() - start
        with open(os.path.join(output, "summary.json"), encoding="utf-8") as handle:
            summary = json.load(handle)
        with open(os.path.join(output, "candidates.jsonl"), encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
    record = {
        **stamp(),
        "command": "python -m harness task=tau_airline task.path=<subset> judge=llama_tiny shield=on (protocol=transcript)",
        "tasks": sorted(wanted),
        "candidates": len(rows),
        "judge_calls": summary["judge_calls"],
        "cache_hits": summary["cache_hits"],
        "wall_s": round(wall, 1),
        "metrics": {key: summary.get(key) for key in KEYS},
        "per_candidate": [
            {
                "candidate": row["candidate_id"],
                "reward": int(row["anchor_correct"]),
                "judge_score": row["ensemble_score"],
                "compliance": row["shield"]["compliance"],
                "judge_pick": row["selected"],
                "shielded_pick": row["shielded_selected"],
                "violations": sorted({violation["kind"] for violation in row["shield"]["violations"]}),
            }
            for row in rows
        ],
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1)
        handle.write("\n")
    print(json.dumps(record["metrics"], indent=1))


if __name__ == "__main__":
    main()
