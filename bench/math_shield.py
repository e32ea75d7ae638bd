"""Measure the MATH shield on the 500 MATH-500 reference solutions: false violations.

A reference solution flagged is a false alarm from the point of view of selection, since the shield
checks the solution's own equations, answer marker and grader address, not the answer. The JSON
lists every flagged reference with the equations found false, so each can be read by a person
(some references do contain a false equation, e.g. a sign slip or a deliberate contradiction),
and counts how many equation links were checkable at all, so a low rate cannot hide a checker that
checks nothing.

Writes `bench/results/math_shield.json` and prints a summary. Run: `python bench/math_shield.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from collections import Counter
from typing import Any

from provenance import stamp

from tasks.config import TaskConfig
from tasks.math import load
from tasks.math.shield import equation_links, link_holds, math_segments, shield_candidate, split_steps

# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("references flagged (false alarms)", "{reference_false_violation.flagged} of {reference_false_violation.n} ({reference_false_violation.rate})"),
        ("target rate (at most)", "reference_false_violation.target"),
        ("equation links", "{equation_links.holds} hold, {equation_links.false} false, {equation_links.not_checkable} not checkable"),
        ("candidates/s", "candidates_per_second"),
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "math_shield.json"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # SymPy deprecation chatter on odd inputs; verdicts are unaffected
    task = load(TaskConfig(name="math"))
    problems = {problem.problem_id: problem for problem in task.problems}
    pool = task.default_pool()
    start = time.perf_counter()
    flagged: list[dict[str, Any]] = []
    checks: Counter[str] = Counter()
    for candidate in pool:
        report = shield_candidate(problems[candidate.problem_id], candidate)
        if report.verdict == "violation":
            kinds = [violation.expression or violation.kind for violation in report.violations]
            checks.update(kinds)
            steps = report.violations[0].values.get("steps") or []
            false = [equation for step in steps for equation in step.get("false_equations", [])]
            flagged.append({"problem_id": candidate.problem_id, "checks": kinds, "false_equations": false})
    seconds = time.perf_counter() - start
    links: Counter[str] = Counter()
    for candidate in pool:
        for step in split_steps(candidate.text):
            for segment in math_segments(step):
                for link in equation_links(segment):
                    links[{True: "holds", False: "false", None: "not_checkable"}[link_holds(link)]] += 1
    results = {
        **stamp(),
        "reference_false_violation": {
            "n": len(pool), "flagged": len(flagged), "rate": round(len(flagged) / len(pool), 4), "target": 0.02,
        },
        "violation_checks": dict(checks.most_common()),
        "flagged": flagged,
        "equation_links": dict(links),
        "candidates_per_second": round(len(pool) / seconds, 1),
        "seconds": round(seconds, 2),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    rate = results["reference_false_violation"]
    print(f"references flagged: {rate['flagged']}/{rate['n']} = {rate['rate']:.2%} (target <= 2%)")
    print(f"equation links: {dict(links)}; {len(pool)} candidates in {seconds:.1f} s")


if __name__ == "__main__":
    main()
