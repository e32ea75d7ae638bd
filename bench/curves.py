"""Best-of-n curve cost at GSM8K size: 1,319 problems with 16 scored candidates each.

The curve draws subsets per n and problem, so its cost grows with n x problems x draws; this measures
the default `draws` on a seeded synthetic pool of the size a 16-sample GSM8K run produces.

Writes `bench/results/curves.json`. Run: `python bench/curves.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time

from provenance import stamp

from harness.analysis import best_of_n_curve
from harness.core.values import Candidate
from harness.selection import CandidateRecord, ProblemResult
from tasks.types import AnchorOutcome

PROBLEMS = 1319


def synthetic_pool(width: int, seed: int = 0) -> list[ProblemResult]:
    """Scores with ties (0.1/0.5/0.9) and continuous values; 40% of candidates correct."""
    rng = random.Random(seed)
    results = []
    for index in range(PROBLEMS):
        problem_id = f"p{index}"
        records = tuple(
            CandidateRecord(
                Candidate(problem_id, f"c{slot}", "text"),
                AnchorOutcome(rng.random() < 0.4, str(rng.randint(0, 5))),
                {},
                rng.choice([0.1, 0.5, 0.9, rng.random()]),
            )
            for slot in range(width)
        )
        results.append(ProblemResult(problem_id, records, None, False))
    return results


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("pool", "{problems} problems x {candidates_per_problem} candidates"),
        ("best of the rounds (s)", "best_seconds"),
        ("target (s)", "target_seconds"),
        ("every round (s)", "seconds"),
        ("load average", "load_average"),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "curves.json"))
    args = parser.parse_args()
    results = synthetic_pool(args.width)
    seconds = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        rows = best_of_n_curve(results)
        seconds.append(time.perf_counter() - start)
    report = {
        **stamp(),
        "problems": PROBLEMS,
        "candidates_per_problem": args.width,
        "rows": len(rows),
        "seconds": [round(value, 3) for value in seconds],
        "best_seconds": round(min(seconds), 3),
        "target_seconds": 5.0,
        "python": platform.python_version(),
        "load_average": os.getloadavg()[0],
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")
    print(f"best_of_n_curve, {PROBLEMS} x {args.width}: best {report['best_seconds']} s of {args.repeats} (target < 5 s)")


if __name__ == "__main__":
    main()
