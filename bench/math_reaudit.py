"""Re-audit the 500 MATH-500 reference solutions with the issue-18 anchor: which verdicts changed, and why.

The previous anchor read the last `\\boxed{}` and took Math-Verify's verdict alone; it is recomputed
here (`previous`: the same worker pool, the same last box, Math-Verify only). The current anchor is
`tasks.math.check_answer` with each problem's statement (asked units and rounding). Every reference
whose verdict differs is listed with its outcome and the rule, hedge or unit that decided it, and
the changes are counted by reason; docs/tasks.md ("MATH-500: re-audit") shows the table.
Also counted: checker disagreements by deciding rule over all 500.

Writes `bench/results/math_reaudit.json`. Run: `python bench/math_reaudit.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from typing import Any

from provenance import stamp

from tasks.math import CheckPool, check_answer
from tasks.math.checker import DEFAULT_TIMEOUT_S, MathAnchor
from tasks.math.extract import last_boxed
from tasks.math.loader import bundled

HEADLINE = {
    "values": (
        ("references", "n"),
        ("correct before / after", "{correct_before} / {correct_after}"),
        ("verdicts changed", "changed"),
        ("checker disagreements (after)", "disagreements"),
    ),
    "tables": ({"over": "changes_by_reason", "key": "reason", "columns": (("references", "count"),)},),
}


def _reason(outcome: Any) -> str:
    details = outcome.details
    return str(details.get("hedge") or details.get("unit") or details.get("rule") or outcome.outcome)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "math_reaudit.json"))
    args = parser.parse_args()
    rows = bundled().rows
    changed: list[dict[str, Any]] = []
    reasons: Counter[str] = Counter()
    disagreements: Counter[str] = Counter()
    before = after = 0
    start = time.perf_counter()
    with CheckPool(workers=2, timeout_s=DEFAULT_TIMEOUT_S) as pool:
        for index, row in enumerate(rows):
            box = last_boxed(row["solution"])
            previous = box is not None and pool.call("math_verify", row["answer"], box).value is True
            outcome = check_answer(MathAnchor(row["answer"], row["problem"]), row["solution"], pool)
            before += previous
            after += outcome.correct
            if "checker_disagreement" in outcome.details:
                disagreements[outcome.details["rule"]] += 1
            if outcome.correct != previous:
                reason = f"{'correct' if previous else 'wrong'} -> {outcome.outcome} ({_reason(outcome)})"
                reasons[reason] += 1
                changed.append({"problem_id": f"math500-{index}", "gold": row["answer"], "read": outcome.extracted_answer,
                                "before": previous, "after": outcome.outcome, "reason": _reason(outcome)})
    results = {
        **stamp(),
        "n": len(rows),
        "correct_before": before,
        "correct_after": after,
        "changed": len(changed),
        "changes_by_reason": {reason: {"count": count} for reason, count in reasons.most_common()},
        "disagreements": sum(disagreements.values()),
        "disagreements_by_rule": dict(disagreements.most_common()),
        "changes": changed,
        "seconds": round(time.perf_counter() - start, 1),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    print(f"{after}/{len(rows)} correct (before {before}); {len(changed)} changed: {dict(reasons)}; disagreements {dict(disagreements)}")


if __name__ == "__main__":
    main()
