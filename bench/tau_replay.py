"""τ-bench airline: replay fidelity per tool and throughput on one core, over the 200 shipped trajectories.

1. Fidelity: every recorded tool call is re-executed against a fresh copy of the shipped database
   (`tasks.tau_airline.replay`); the share whose replayed output equals the recorded one, per tool,
   byte-identical and as JSON values, with every mismatch listed and its cause. Target >= 99%, or
   every mismatch explained.
2. Throughput, pinned to one CPU core, trajectories per second (median of `--rounds`):
   - replay only (all tool calls, before/after views);
   - import (trajectory -> validated shield trace);
   - full verify: import, replay, facts, and the airline policy's invariants
     (`tasks.tau_airline.policy.verify_trajectory`). Target >= 50 trajectories/s.
   The one-off database and trajectory load is reported separately.
3. Confirmation: the accuracy of `tasks.tau_airline.confirmation.confirms` on the hand-labelled
   real user turns (`tasks/tau_airline/data/confirmations.json`, the set it was written against)
   and on the held-out set (`confirmations_heldout.json`): counts, precision, recall, how many
   turns it flags `unclear`, and each turn it gets wrong.

Writes `bench/results/tau_replay.json` and prints a summary. Run: `python bench/tau_replay.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from provenance import stamp

from tasks.tau_airline import fidelity
from tasks.tau_airline.confirmation import LabelledTurn, confirmation, heldout_turns, labelled_turns, measure
from tasks.tau_airline.db import base_db
from tasks.tau_airline.importer import to_trace
from tasks.tau_airline.policy import verify_trajectory
from tasks.tau_airline.replay import replay
from tasks.tau_airline.trajectory import Trajectory, shipped_trajectories

TARGET_FIDELITY = 0.99
TARGET_TRAJECTORIES_PER_S = 50
CAUSES = {
    fidelity.ADDRESS_RENAME: "the shipped users.json (tau-bench commit 59a200c) names a user's state "
    "`address.state`; every recorded answer names it `address.province`, so the recording ran against a "
    "revision of the data with the other field name. Every other field of these answers is equal.",
}


def pin_one_core() -> int | None:
    """Run on one CPU (the first this process may use), so the figure is per core."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return core


def rate(work: Callable[[], Any], count: int, rounds: int) -> dict[str, float]:
    """Items per second over `rounds` runs of `work`: wall clock (median, best) and this process's CPU
    time (median), which a shared machine's other load does not inflate."""
    wall, cpu = [], []
    for _ in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {
        "median_per_s": round(count / statistics.median(wall), 1),
        "best_per_s": round(count / min(wall), 1),
        "cpu_time_per_s": round(count / statistics.median(cpu), 1),
    }


def fidelity_section(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    measured = fidelity.measure(trajectories)
    per_tool = {
        tool: {
            "calls": measured.calls[tool],
            "equal": measured.equal[tool],
            "byte_identical": measured.byte_equal[tool],
            "share": round(measured.share(tool), 4),
            "mismatches_explained": measured.explained(tool),
        }
        for tool in sorted(measured.calls)
    }
    by_cause: dict[str, list[str]] = {}
    for mismatch in measured.mismatches:
        by_cause.setdefault(mismatch.cause, []).append(f"{mismatch.trajectory}@{mismatch.source_index}")
    total = sum(measured.calls.values())
    explained = measured.explained()
    return {
        "calls": total,
        "equal": sum(measured.equal.values()),
        "byte_identical": sum(measured.byte_equal.values()),
        "share": round(measured.share(), 4),
        "share_explained_or_equal": round((sum(measured.equal.values()) + explained) / total, 4),
        "unexplained_mismatches": len(measured.mismatches) - explained,
        "per_tool": per_tool,
        "mismatch_causes": {cause: {"count": len(where), "explanation": CAUSES.get(cause, "unexplained"), "calls": where} for cause, where in by_cause.items()},
        "target": TARGET_FIDELITY,
        "target_met": measured.share() >= TARGET_FIDELITY,
        "all_mismatches_explained": explained == len(measured.mismatches),
    }


def confirmation_accuracy(turns: Sequence[LabelledTurn]) -> dict[str, Any]:
    accuracy = measure([(turn.agent_text, turn.user_text, turn.confirms) for turn in turns])
    return {
        "labelled_turns": len(turns),
        "confirmations": sum(turn.confirms for turn in turns),
        "true_positive": accuracy.true_positive,
        "false_positive": accuracy.false_positive,
        "false_negative": accuracy.false_negative,
        "true_negative": accuracy.true_negative,
        "precision": round(accuracy.precision, 4),
        "recall": round(accuracy.recall, 4),
        "accuracy": round(accuracy.accuracy, 4),
        "flagged_unclear": sum(confirmation(turn.agent_text, turn.user_text) == "unclear" for turn in turns),
        "wrong": [
            {"task_id": turns[i].task_id, "trial": turns[i].trial, "user_index": turns[i].user_index, "label": turns[i].confirms, "user": turns[i].user_text}
            for i in accuracy.wrong
        ],
    }


def confirmation_section() -> dict[str, Any]:
    """On the set the parser was written against, with the held-out set beside it."""
    return {**confirmation_accuracy(labelled_turns()), "held_out": confirmation_accuracy(heldout_turns())}


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("tool calls replayed", "{fidelity.calls} over {trajectories} trajectories"),
        ("replayed output equal to the recorded one", "{fidelity.equal} ({fidelity.share}; target {fidelity.target})"),
        ("equal or explained", "fidelity.share_explained_or_equal"),
        ("unexplained mismatches", "fidelity.unexplained_mismatches"),
        ("full verify: trajectories/s (median)", "{throughput_trajectories_per_s.full_verify.median_per_s} (target {target_trajectories_per_s})"),
        ("replay only: trajectories/s (median)", "throughput_trajectories_per_s.replay.median_per_s"),
        ("import: trajectories/s (median)", "throughput_trajectories_per_s.import.median_per_s"),
        ("verdicts", "{verdicts.pass} pass, {verdicts.violation} violation"),
        ("confirmation parser: precision / recall", "{confirmation.precision} / {confirmation.recall} on {confirmation.labelled_turns} labelled turns"),
        ("confirmation parser, held out: accuracy", "{confirmation.held_out.accuracy} on {confirmation.held_out.labelled_turns} turns"),
    ),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "tau_replay.json"))
    args = parser.parse_args(argv)
    core = pin_one_core()

    start = time.perf_counter()
    base_db()
    trajectories = shipped_trajectories()
    load_s = time.perf_counter() - start
    count = len(trajectories)
    calls = sum(len(trajectory.calls) for trajectory in trajectories)

    traces = [to_trace(trajectory) for trajectory in trajectories]
    reports = [verify_trajectory(trajectory, trace) for trajectory, trace in zip(trajectories, traces)]
    verdicts = Counter(report.verdict for report in reports)

    result = {
        **stamp(),
        "trajectories": count,
        "tool_calls": calls,
        "load_s": round(load_s, 3),
        "fidelity": fidelity_section(trajectories),
        "throughput_trajectories_per_s": {
            "replay": rate(lambda: [replay(t) for t in trajectories], count, args.rounds),
            "import": rate(lambda: [to_trace(t) for t in trajectories], count, args.rounds),
            "full_verify": rate(
                lambda: [verify_trajectory(t, to_trace(t)) for t in trajectories], count, args.rounds
            ),
        },
        "verdicts": dict(sorted(verdicts.items())),
        "confirmation": confirmation_section(),
        "target_trajectories_per_s": TARGET_TRAJECTORIES_PER_S,
        "rounds": args.rounds,
        "pinned_core": core,
        "python": platform.python_version(),
        "cpu": platform.machine(),
    }
    speed = result["throughput_trajectories_per_s"]["full_verify"]["median_per_s"]
    result["target_met"] = speed >= TARGET_TRAJECTORIES_PER_S
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1, ensure_ascii=False)
        handle.write("\n")
    fid = result["fidelity"]
    print(f"fidelity: {fid['equal']}/{fid['calls']} equal ({fid['share']:.2%}), {fid['unexplained_mismatches']} unexplained mismatches")
    for tool, row in fid["per_tool"].items():
        print(f"  {tool:32s} {row['equal']:4d}/{row['calls']:<4d} explained {row['mismatches_explained']}")
    for stage, figures in result["throughput_trajectories_per_s"].items():
        print(f"{stage:12s} {figures['median_per_s']:9.1f} trajectories/s (best {figures['best_per_s']}, CPU time {figures['cpu_time_per_s']})")
    conf = result["confirmation"]
    print(f"confirmation: precision {conf['precision']}, recall {conf['recall']} on {conf['labelled_turns']} labelled turns")
    held = conf["held_out"]
    print(f"held out: accuracy {held['accuracy']} on {held['labelled_turns']} turns ({held['flagged_unclear']} flagged unclear)")
    print(f"load {load_s:.2f} s; verdicts {result['verdicts']}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
