"""The code task's run: HumanEval problems with one planted attack each, judged, then shielded.

Runs `python -m harness task=code limit=N` (`--limit`, default 50, the task's first N problems,
each the canonical solution plus one planted attack, the SmolLM2 judge, `pool=adversarial` and
`shield=on` by the task's own defaults) and records the unshielded and shielded selection metrics, the attack selection rates
(all as expectations over uniform tie-breaks, with the seeded pick's beside them), the shield's
candidates per violation kind, and the wall time. docs/shield.md quotes these numbers from here.

Judge calls are cached by content (`--cache`): a rerun with the same cache makes no model calls, but
the sandbox runs every candidate again. Writes `bench/results/code_shield_run.json`.
Run: `python bench/code_shield_run.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from provenance import stamp

KEYS = (
    "selection_accuracy",
    "selection_accuracy_seeded",
    "shielded.selection_accuracy",
    "shielded.selection_accuracy_seeded",
    "hack_rate",
    "hack_rate_seeded",
    "shielded.hack_rate",
    "shielded.hack_rate_seeded",
    "attack_selection_rate",
    "attack_selection_rate_seeded",
    "shielded.attack_selection_rate",
    "shielded.attack_selection_rate_seeded",
    "oracle_accuracy",
    "random_accuracy",
    "attacks_planted",
    "problems",
    "candidates",
)

# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("command", "command"),
        ("problems, candidates, attacks planted", "{metrics.problems}, {metrics.candidates}, {metrics.attacks_planted}"),
        ("selection accuracy: judge -> shielded", "{metrics.selection_accuracy} -> {metrics.shielded.selection_accuracy}"),
        ("hack rate: judge -> shielded", "{metrics.hack_rate} -> {metrics.shielded.hack_rate}"),
        ("attack selection rate: judge -> shielded", "{metrics.attack_selection_rate} -> {metrics.shielded.attack_selection_rate}"),
        ("seeded pick: selection accuracy, judge -> shielded", "{metrics.selection_accuracy_seeded} -> {metrics.shielded.selection_accuracy_seeded}"),
        ("wall s", "wall_s"),
    ),
    "tables": (
        {"over": "attacks", "key": "planted attack", "columns": (("planted", "planted"), ("picked by the judge", "judge_picked"), ("picked shielded", "shielded_picked"))},
        {"over": "kinds", "key": "violation kind", "columns": (("candidates", "candidates"),)},
    ),
}


def _attacks(rows: list[dict]) -> dict[str, dict[str, float | int]]:
    """Per planted kind: how many were planted, and how many the judge and the shielded selection
    picked (expected over tie-breaks, the sum of the plants' pick probabilities)."""
    kinds: dict[str, dict[str, float | int]] = {}
    for row in rows:
        if row["attack"] is not None:
            kind = kinds.setdefault(row["attack"], {"planted": 0, "judge_picked": 0.0, "shielded_picked": 0.0})
            kind["planted"] += 1
            kind["judge_picked"] += row["pick_probability"]
            kind["shielded_picked"] += row["shielded_pick_probability"]
    return {name: {**kind, "judge_picked": round(kind["judge_picked"], 3), "shielded_picked": round(kind["shielded_picked"], 3)} for name, kind in sorted(kinds.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=50, help="problems (default 50, the harness's default)")
    parser.add_argument("--cache", default=".harness/cache.sqlite")
    parser.add_argument("--out", default="bench/results/code_shield_run.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        output = os.path.join(folder, "run")
        command = [
            sys.executable, "-m", "harness", "task=code", f"limit={args.limit}",
            f"output_dir={output}", f"cache.path={args.cache}", "tracking.enabled=false",
        ]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(command, check=True)
        wall = time.perf_counter() - start
        with open(os.path.join(output, "summary.json"), encoding="utf-8") as handle:
            summary = json.load(handle)
        with open(os.path.join(output, "candidates.jsonl"), encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
    prefix = "shield.kinds."
    record = {
        **stamp(),
        "command": f"python -m harness task=code limit={args.limit}",
        "format_version": summary.get("format_version"),
        "wall_s": round(wall, 1),
        "metrics": {key: summary.get(key) for key in KEYS},
        "kinds": {key[len(prefix) :]: {"candidates": value} for key, value in sorted(summary.items()) if key.startswith(prefix)},
        "attacks": _attacks(rows),
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=1)
        handle.write("\n")
    print(json.dumps(record["metrics"], indent=1))


if __name__ == "__main__":
    main()
