"""Time the MATH shield and anchor on hostile candidates (issue 18): every one must end, fast.

Each case is a candidate built to make a recursive parser overflow or a regex go quadratic: 1,200
nested `\\frac`, 150,000 characters of unclosed `\\[` (71 s in the regex-era shield), unclosed `$`,
`\\(` and `\\boxed{`, a text at the length cap of `1 = 1` links. For each: the shield's verdict, its
wall time and `timings_ms["build_trace"]` (trace building, which the report now times), and the anchor's
outcome and wall time (`check_answer`, one 2-worker pool, the 5 s per-call cap and 12 s budget).

Writes `bench/results/math_hostile.json`. Run: `python bench/math_hostile.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from provenance import stamp

from harness.core import Candidate, PublicProblem
from tasks.math import CheckPool, check_answer
from tasks.math.checker import DEFAULT_TIMEOUT_S
from tasks.math.shield import shield_candidate

HEADLINE = {
    "tables": (
        {
            "over": "cases",
            "key": "case",
            "columns": (
                ("case", "case"),
                ("chars", "chars"),
                ("shield verdict", "shield_verdict"),
                ("shield s", "shield_seconds"),
                ("trace ms", "trace_ms"),
                ("anchor outcome", "anchor_outcome"),
                ("anchor s", "anchor_seconds"),
            ),
        },
    ),
}

PROBLEM = PublicProblem("p", "What is $\\frac{6}{3} \\cdot 6$?")
HONEST = "We have $\\frac{6}{3} = 2$, so the product is $2 \\cdot 6 = 12$.\n\nTherefore the answer is $\\boxed{12}$."
CASES = {
    "1200 nested \\frac in a step": "So $" + "\\frac{1}{" * 1200 + "2" + "}" * 1200 + " = 3$.\n\n" + HONEST,
    "1200 nested \\frac boxed": HONEST + "\n\n$\\boxed{" + "\\frac{1}{" * 1200 + "2" + "}" * 1200 + "}$",
    "150k unclosed \\[": "\\[" * 75_000 + "\n\n" + HONEST,
    "99k unclosed \\[ then honest": "\\[" * 49_500 + "\n\n" + HONEST,
    "99k unclosed $\\(": "$\\(" * 33_000 + "\n\n" + HONEST,
    "99k unclosed \\boxed{": "\\boxed{" * 14_000 + "\n\n" + HONEST,
    "99k of 1 = 1 links": "$" + " = ".join(["1"] * 24_000) + "$\n\n" + HONEST,
    "honest": HONEST,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "math_hostile.json"))
    args = parser.parse_args()
    rows = []
    with CheckPool(workers=2, timeout_s=DEFAULT_TIMEOUT_S) as pool:
        check_answer("12", HONEST, pool)  # start the workers outside the timings
        for name, text in CASES.items():
            start = time.perf_counter()
            report = shield_candidate(PROBLEM, Candidate("p", "c", text))
            shielded = time.perf_counter() - start
            start = time.perf_counter()
            outcome = check_answer("12", text, pool)
            checked = time.perf_counter() - start
            rows.append({
                "case": name, "chars": len(text), "shield_verdict": report.verdict, "shield_seconds": round(shielded, 3),
                "trace_ms": round(report.timings_ms["build_trace"], 1), "anchor_outcome": outcome.outcome, "anchor_seconds": round(checked, 3),
            })
            print(rows[-1])
    results = {**stamp(), "cases": rows}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
