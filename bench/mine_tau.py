"""A graph mined from τ-bench airline's successes, against the hand-written airline rules.

Mine (`harness.shield.mine`) from the reward-1 trajectories of tasks 0-24 (the shipped GPT-4o
results), then verify every trajectory of tasks 25-49 with the mined draft, plain and with
`--dynamic`, and compare with the hand-written airline graph (`tasks/tau_airline/graphs/airline.json`,
replayed facts) on the same trajectories. A trajectory is positive when the hand-written rules find a
violation that blames the agent (`effect_mismatch`, the environment's fault, excluded). Reported:
precision and recall of the mined graph's verdicts, its violations on the reward-1 trajectories of
tasks 25-49 (all "false" in the sense that τ-bench counts them as successes; how many of those the
hand rules also flag is listed), the kinds it reports, and the `unexpected_transition` findings a
person would review under `--dynamic` (trajectories and distinct moves).
Writes `bench/results/mine_tau.json`. Run: `python bench/mine_tau.py`.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from provenance import stamp

from harness.shield import VerifyOptions, parse_graph, verify
from harness.shield.accept import accept_filter
from harness.shield.dynamic import verify_dynamic
from harness.shield.mine import mine

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz"
ACCEPT = "reward >= 1 && meta.tau_task_id < 25"


def _rates(flags: list[tuple[bool, bool]]) -> dict[str, Any]:
    """(mined flags it, hand rules flag it) pairs -> confusion counts, precision, recall."""
    tp = sum(m and h for m, h in flags)
    fp = sum(m and not h for m, h in flags)
    fn = sum(h and not m for m, h in flags)
    return {
        "flagged": tp + fp,
        "true_positive": tp,
        "false_positive": fp,
        "false_negative": fn,
        "precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "recall": round(tp / (tp + fn), 3) if tp + fn else None,
    }


def measure() -> dict[str, Any]:
    from tasks.tau_airline.importer import to_trace, verify_imported
    from tasks.tau_airline.policy import agent_kinds, airline_graph
    from tasks.tau_airline.trajectory import load_results

    traces = [(t.name, to_trace(t)) for t in load_results(str(RESULTS))]
    report = mine(traces, accept_filter(ACCEPT))
    mined = parse_graph(report.draft.graph, "mined")
    airline = airline_graph()
    rows = []
    for name, trace in traces:
        if trace.meta["tau_task_id"] < 25:
            continue
        hand = agent_kinds(verify_imported(trace, VerifyOptions(), graph=airline))
        plain = verify(mined, trace, trace_id=name)
        dynamic = verify_dynamic(mined, trace, lambda g, trace=trace, name=name: verify(g, trace, trace_id=name))
        rows.append({
            "trace": name,
            "reward": trace.reward,
            "hand_kinds": list(hand),
            "mined_kinds": sorted({v.kind for v in plain.violations}),
            "dynamic_verdict": dynamic.report.verdict,
            "unexpected_transitions": [[f.source, f.target] for f in dynamic.findings],
        })
    plain_flags = [(bool(row["mined_kinds"]), bool(row["hand_kinds"])) for row in rows]
    dynamic_flags = [(row["dynamic_verdict"] == "violation", bool(row["hand_kinds"])) for row in rows]
    successes = [row for row in rows if row["reward"] is not None and row["reward"] >= 1]
    findings = [tuple(edge) for row in rows for edge in row["unexpected_transitions"]]
    kinds = Counter(kind for row in rows for kind in row["mined_kinds"])
    return {
        "accept": ACCEPT,
        "mined_from": len(report.accepted),
        "coverage_on_accepted": report.coverage,
        "draft": {
            "nodes": len(report.draft.graph["nodes"]),
            "transitions": sum(len(node["next_allowed"]) for node in report.draft.graph["nodes"]),
            "required_states": report.draft.graph["required_states"],
            "goal_states": report.draft.graph["goal_states"],
            "preconditions": {node["node_id"]: node["precondition"] for node in report.draft.graph["nodes"] if node.get("precondition")},
            "check_findings": [finding.kind for finding in report.findings],
        },
        "test_trajectories": len(rows),
        "hand_flagged": sum(bool(row["hand_kinds"]) for row in rows),
        "base_rate": round(sum(bool(row["hand_kinds"]) for row in rows) / len(rows), 3),
        "plain": _rates(plain_flags),
        "dynamic": _rates(dynamic_flags),
        "reward1": {
            "trajectories": len(successes),
            "plain_flagged": sum(bool(row["mined_kinds"]) for row in successes),
            "plain_flagged_hand_clean": sum(bool(row["mined_kinds"]) and not row["hand_kinds"] for row in successes),
            "dynamic_flagged": sum(row["dynamic_verdict"] == "violation" for row in successes),
            "dynamic_flagged_hand_clean": sum(row["dynamic_verdict"] == "violation" and not row["hand_kinds"] for row in successes),
        },
        "unexpected_transition": {
            "trajectories": sum(bool(row["unexpected_transitions"]) for row in rows),
            "findings": len(findings),
            "distinct_moves": len(set(findings)),
        },
        "mined_kinds": [{"kind": kind, "trajectories": count} for kind, count in sorted(kinds.items())],
        "rows": rows,
    }


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("mined from (reward-1 trajectories, tasks 0-24)", "mined_from"),
        ("test trajectories (tasks 25-49)", "test_trajectories"),
        ("flagged by the hand-written rules (base rate)", "{hand_flagged} ({base_rate})"),
        ("plain: precision / recall", "{plain.precision} / {plain.recall}"),
        ("--dynamic: precision / recall", "{dynamic.precision} / {dynamic.recall}"),
        ("reward-1 trajectories flagged, plain", "{reward1.plain_flagged} of {reward1.trajectories}"),
        ("reward-1 trajectories flagged, --dynamic", "{reward1.dynamic_flagged} of {reward1.trajectories}"),
        ("unexpected_transition findings (trajectories / distinct moves)", "{unexpected_transition.findings} ({unexpected_transition.trajectories} / {unexpected_transition.distinct_moves})"),
    ),
    "tables": ({"over": "mined_kinds", "columns": (("mined graph's violation kind", "kind"), ("test trajectories", "trajectories"))},),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "mine_tau.json"))
    args = parser.parse_args()
    result = {**stamp(), **measure()}
    summary = {key: value for key, value in result.items() if key != "rows"}
    print(json.dumps(summary, indent=1))
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


if __name__ == "__main__":
    main()
