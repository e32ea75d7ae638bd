"""Re-audit the published GSM8K pool with the current anchor: which verdicts changed against the anchor of `--before`, and why.

The pool is the GSM8K authors' four model solutions per test problem (5,276 candidates) plus the
1,319 gold solutions, each checked against its gold answer by the anchor of `--before` (its
`tasks/gsm8k/answers.py`, read from git) and by the current `tasks.gsm8k.check`. Every changed
verdict is listed with both readings and a reason; each anchor's agreement with the authors' own
`is_correct` label is reported too. Writes `bench/results/gsm8k_reaudit.json`.
Run: `python bench/gsm8k_reaudit.py --before ccea53c`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import types
from collections import Counter
from typing import Any

from provenance import ROOT, stamp

from tasks.gsm8k import POOL_KEYS, check, gold_answer

DATA = os.path.join(os.path.dirname(__file__), "..", "tasks", "gsm8k", "data")

# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("candidates re-audited", "candidates"),
        ("verdicts changed", "changed"),
        ("answers read differently", "answers_read_differently"),
        ("gold answers changed", "gold_changed"),
        ("agreement with the authors' labels, before", "label_agreement_before"),
        ("agreement with the authors' labels, after", "label_agreement_after"),
    ),
}


def _rows(name: str) -> list[dict[str, Any]]:
    with gzip.open(os.path.join(DATA, name), "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _anchor_at(revision: str) -> types.ModuleType:
    """The GSM8K answers module as it was at `revision` (it imports only the standard library)."""
    source = subprocess.run(["git", "show", f"{revision}:tasks/gsm8k/answers.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("gsm8k_answers_before")
    exec(compile(source, f"{revision}:tasks/gsm8k/answers.py", "exec"), module.__dict__)  # noqa: S102 - our own file at a commit
    return module


def _reason(before: str | None, outcome: Any) -> str:
    if outcome.outcome == "hedged":
        return "hedged: the answer offers two values"
    if before is None:
        return "read now, no answer before"
    if outcome.extracted_answer is None:
        return "no answer now"
    return "another number read"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="ccea53c", help="the git revision whose anchor is compared (default: the base of this change)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gsm8k_reaudit.json"))
    args = parser.parse_args()
    old = _anchor_at(args.before)
    gold_rows, model_rows = _rows("test.jsonl.gz"), _rows("example_model_solutions.jsonl.gz")
    golds = [gold_answer(row["answer"]) for row in gold_rows]
    gold_changed = [index for index, row in enumerate(gold_rows) if old.extract_answer(row["answer"]) != golds[index]]
    by_question = {row["question"]: index for index, row in enumerate(gold_rows)}
    changed: list[dict[str, Any]] = []
    reread: list[dict[str, Any]] = []  # the answer read differs, whether or not the verdict does
    agree_before = agree_after = total = 0
    reasons: Counter[str] = Counter()
    for row in model_rows:
        index = by_question[row["question"]]
        for key in POOL_KEYS:
            solution = row[key]
            text, label = solution["solution"], bool(solution["is_correct"])
            before_answer = old.extract_answer(text)
            before = old.answers_equal(before_answer, golds[index])
            outcome = check(golds[index], text)
            total += 1
            agree_before += before == label
            agree_after += outcome.correct == label
            if before_answer != outcome.extracted_answer:
                reread.append({"problem_id": f"gsm8k-test-{index}", "candidate_id": key, "before": before_answer, "after": outcome.extracted_answer,
                               "outcome": outcome.outcome, "answer_line": text.strip().splitlines()[-1][:200]})
            if before != outcome.correct:
                reason = _reason(before_answer, outcome)
                reasons[reason] += 1
                changed.append({
                    "problem_id": f"gsm8k-test-{index}", "candidate_id": key, "gold": golds[index], "authors_label": label,
                    "before": {"answer": before_answer, "correct": before},
                    "after": {"answer": outcome.extracted_answer, "correct": outcome.correct, "outcome": outcome.outcome, **dict(outcome.details)},
                    "reason": reason, "answer_line": text.strip().splitlines()[-1][:200],
                })
    results = {
        **stamp(),
        "before": args.before,
        "candidates": total,
        "changed": len(changed),
        "changed_by_reason": dict(reasons.most_common()),
        "correct_to_wrong": sum(not entry["after"]["correct"] for entry in changed),
        "wrong_to_correct": sum(entry["after"]["correct"] for entry in changed),
        "answers_read_differently": len(reread),
        "gold_changed": len(gold_changed),
        "label_agreement_before": f"{agree_before} of {total}",
        "label_agreement_after": f"{agree_after} of {total}",
        "changes": changed,
        "rereadings": reread,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    print(f"{total} candidates, {len(changed)} verdicts changed ({results['correct_to_wrong']} correct -> wrong, {results['wrong_to_correct']} wrong -> correct)")
    for reason, count in reasons.most_common():
        print(f"  {count:>4}  {reason}")
    print(f"answers read differently: {len(reread)}")
    print(f"gold answers changed: {len(gold_changed)}; agreement with the authors' labels {agree_before} -> {agree_after} of {total}")


if __name__ == "__main__":
    main()
