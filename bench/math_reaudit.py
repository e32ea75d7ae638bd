"""Re-audit the 500 MATH-500 reference solutions with the issue-18 anchor: which verdicts changed, and why.

The previous anchor read the last `\\boxed{}` and took Math-Verify's verdict alone; it is recomputed
here (`previous`: the same worker pool, the same last box, Math-Verify only). The current anchor is
`tasks.math.check_answer` with each problem's statement (asked units and rounding). Every reference
whose verdict differs is listed with its outcome and the rule, hedge or unit that decided it, and
the changes are counted by reason; docs/tasks.md ("MATH-500: re-audit") shows the table.
The same is done for one planted attack per problem (the task's attack catalogue, kind `i mod
kinds`, the candidates `pool=adversarial` adds; wrong by construction), so a change there is a
regression. Also counted: checker disagreements by deciding rule.

Writes `bench/results/math_reaudit.json`. Run: `python bench/math_reaudit.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter
from typing import Any

from provenance import stamp

from harness.core import PublicProblem
from tasks.math import CheckPool, check_answer
from tasks.math.attacks import ATTACK_KINDS, make_attack
from tasks.math.checker import DEFAULT_TIMEOUT_S, MathAnchor
from tasks.math.extract import last_boxed
from tasks.math.loader import bundled

HEADLINE = {
    "values": (
        ("references correct before / after", "{references.correct_before} / {references.correct_after} of {references.n}"),
        ("reference verdicts changed", "references.changed"),
        ("planted attacks correct before / after", "{attacks.correct_before} / {attacks.correct_after} of {attacks.n}"),
        ("attack verdicts changed", "attacks.changed"),
        ("checker disagreements (references, attacks)", "{references.disagreements}, {attacks.disagreements}"),
    ),
}


def _reason(outcome: Any) -> str:
    details = outcome.details
    return str(details.get("hedge") or details.get("unit") or details.get("rule") or outcome.outcome)


def _compare(pool: CheckPool, row: dict[str, Any], text: str) -> tuple[bool, Any]:
    box = last_boxed(text)
    previous = box is not None and pool.call("math_verify", row["answer"], box).value is True
    return previous, check_answer(MathAnchor(row["answer"], row["problem"]), text, pool)


def _audit(pool: CheckPool, candidates: list[tuple[int, dict[str, Any], str]]) -> dict[str, Any]:
    changed: list[dict[str, Any]] = []
    reasons: Counter[str] = Counter()
    disagreements: Counter[str] = Counter()
    before = after = 0
    for index, row, text in candidates:
        previous, outcome = _compare(pool, row, text)
        before += previous
        after += outcome.correct
        if "checker_disagreement" in outcome.details:
            disagreements[outcome.details["rule"]] += 1
        if outcome.correct != previous:
            reasons[f"{'correct' if previous else 'wrong'} -> {outcome.outcome} ({_reason(outcome)})"] += 1
            changed.append({"problem_id": f"math500-{index}", "gold": row["answer"], "read": outcome.extracted_answer,
                            "before": previous, "after": outcome.outcome, "reason": _reason(outcome)})
    return {
        "n": len(candidates), "correct_before": before, "correct_after": after, "changed": len(changed),
        "changes_by_reason": {reason: {"count": count} for reason, count in reasons.most_common()},
        "disagreements": sum(disagreements.values()), "disagreements_by_rule": dict(disagreements.most_common()),
        "changes": changed,
    }


def _attacks(rows: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any], str]]:
    rng = random.Random(0)
    built = []
    for index, row in enumerate(rows):
        kind = ATTACK_KINDS[index % len(ATTACK_KINDS)]
        try:
            text = make_attack(kind, PublicProblem(f"math500-{index}", row["problem"]), [row["solution"]], rng, row["solution"])
        except ValueError:
            continue
        built.append((index, row, text))
    return built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "math_reaudit.json"))
    args = parser.parse_args()
    rows = bundled().rows
    start = time.perf_counter()
    with CheckPool(workers=2, timeout_s=DEFAULT_TIMEOUT_S) as pool:
        references = _audit(pool, [(index, row, row["solution"]) for index, row in enumerate(rows)])
        attacks = _audit(pool, _attacks(rows))
    results = {**stamp(), "references": references, "attacks": attacks, "seconds": round(time.perf_counter() - start, 1)}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    for name, part in (("references", references), ("attacks", attacks)):
        print(f"{name}: {part['correct_after']}/{part['n']} correct (before {part['correct_before']}); "
              f"{part['changed']} changed: {part['changes_by_reason']}; disagreements {part['disagreements_by_rule']}")


if __name__ == "__main__":
    main()
