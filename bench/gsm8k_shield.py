"""Measure the GSM8K shield on the real pool: false violations and recall.

- false-violation rate on the 1,319 gold solutions (target <= 1%): a gold solution flagged is a false
  alarm, since the shield checks arithmetic and grounding, not the answer;
- false-violation rate on model solutions labelled correct (`is_correct`);
- recall on model solutions labelled incorrect: the share the shield flags. Most wrong model
  solutions are arithmetically consistent but reason wrongly, which this shield cannot see, so
  recall is expected to be modest; the number says how much it catches;
- linear time on hostile text: milliseconds to read the claims of a step of n characters (a
  `1 000 + 1 000 + ...` sum with no `=`, the same sum ending in `= 5000`, unclosed and nested
  parentheses), for n doubling from
  12,500 to 100,000 (past the shield's 20,000-character cap, to show the reader itself is linear).

Writes `bench/results/gsm8k_shield.json` and prints a table. Run: `python bench/gsm8k_shield.py`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from collections import Counter
from typing import Any

from provenance import stamp

from harness.core.values import Candidate, PublicProblem
from tasks.gsm8k.claims import claims
from tasks.gsm8k.shield import shield_candidate

DATA = os.path.join(os.path.dirname(__file__), "..", "tasks", "gsm8k", "data")
POOL_KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _rows(name: str) -> list[dict[str, Any]]:
    with gzip.open(os.path.join(DATA, name), "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _rate(flags: list[bool]) -> dict[str, Any]:
    return {"n": len(flags), "flagged": sum(flags), "rate": round(sum(flags) / len(flags), 4) if flags else None}


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("gold solutions flagged (false alarms)", "{gold_false_violation.flagged} of {gold_false_violation.n} ({gold_false_violation.rate})"),
        ("model solutions labelled correct, flagged", "{model_correct_false_violation.flagged} of {model_correct_false_violation.n} ({model_correct_false_violation.rate})"),
        ("model solutions labelled incorrect, flagged (recall)", "{model_incorrect_recall.flagged} of {model_incorrect_recall.n} ({model_incorrect_recall.rate})"),
        ("candidates/s", "candidates_per_second"),
        ("ms to read a 100,000-character sum with no `=` (12,500: ms)", "{hostile_ms.sum_without_equals.100000} ({hostile_ms.sum_without_equals.12500})"),
        ("ms to read a 100,000-character sum then `= 5000` (12,500: ms)", "{hostile_ms.sum_then_equals.100000} ({hostile_ms.sum_then_equals.12500})"),
        ("ms to read 100,000 characters of unclosed parentheses (12,500: ms)", "{hostile_ms.unclosed_parentheses.100000} ({hostile_ms.unclosed_parentheses.12500})"),
    ),
}
HOSTILE = {
    "sum_without_equals": lambda n: ("1 000 + " * n)[:n],
    "sum_then_equals": lambda n: ("1 000 + " * n)[: n - 12] + "1 000 = 5000",
    "unclosed_parentheses": lambda n: "(" * (n - 12) + "9 * 60 = 540",
    "nested_parentheses": lambda n: "(" * (n // 2 - 6) + "9*60" + ")" * (n // 2 - 6) + " = 540",
}


def _hostile_ms() -> dict[str, dict[str, float]]:
    timings: dict[str, dict[str, float]] = {}
    for name, build in HOSTILE.items():
        timings[name] = {}
        for size in (12_500, 25_000, 50_000, 100_000):
            text = build(size)
            start = time.perf_counter()
            claims(text)
            timings[name][str(size)] = round((time.perf_counter() - start) * 1e3, 1)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gsm8k_shield.json"))
    args = parser.parse_args()
    gold_rows, model_rows = _rows("test.jsonl.gz"), _rows("example_model_solutions.jsonl.gz")
    start = time.perf_counter()
    gold_flags, gold_kinds = [], Counter()
    for index, row in enumerate(gold_rows):
        report = shield_candidate(PublicProblem(str(index), row["question"]), Candidate(str(index), f"gold-{index}", row["answer"]))
        gold_flags.append(report.verdict == "violation")
        gold_kinds.update(violation.expression or violation.kind for violation in report.violations)
    correct_flags, incorrect_flags, model_kinds = [], [], Counter()
    per_source: dict[str, dict[str, list[bool]]] = {key: {"correct": [], "incorrect": []} for key in POOL_KEYS}
    for index, row in enumerate(model_rows):
        problem = PublicProblem(str(index), row["question"])
        for key in POOL_KEYS:
            solution = row[key]
            report = shield_candidate(problem, Candidate(str(index), f"{key}-{index}", solution["solution"], source=key))
            flagged = report.verdict == "violation"
            label = "correct" if solution["is_correct"] else "incorrect"
            (correct_flags if solution["is_correct"] else incorrect_flags).append(flagged)
            per_source[key][label].append(flagged)
            if not solution["is_correct"]:
                model_kinds.update(violation.expression or violation.kind for violation in report.violations)
    seconds = time.perf_counter() - start
    total = len(gold_rows) + len(model_rows) * len(POOL_KEYS)
    results = {
        **stamp(),
        "gold_false_violation": _rate(gold_flags),
        "model_correct_false_violation": _rate(correct_flags),
        "model_incorrect_recall": _rate(incorrect_flags),
        "per_source": {key: {label: _rate(flags) for label, flags in labels.items()} for key, labels in per_source.items()},
        "gold_violation_checks": dict(gold_kinds.most_common()),
        "incorrect_violation_checks": dict(model_kinds.most_common()),
        "candidates": total,
        "seconds": round(seconds, 2),
        "candidates_per_second": round(total / seconds, 1),
        "hostile_ms": _hostile_ms(),
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    print(f"{'set':<34}{'n':>7}{'flagged':>9}{'rate':>8}")
    for name in ("gold_false_violation", "model_correct_false_violation", "model_incorrect_recall"):
        row = results[name]
        print(f"{name:<34}{row['n']:>7}{row['flagged']:>9}{row['rate']:>8.2%}")
    print(f"{total} candidates in {seconds:.1f} s ({results['candidates_per_second']}/s)")
    for name, timings in results["hostile_ms"].items():
        print(f"{name:<34}" + "  ".join(f"{size}: {ms} ms" for size, ms in timings.items()))


if __name__ == "__main__":
    main()
