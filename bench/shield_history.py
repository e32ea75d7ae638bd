"""How verification time grows with a trace of many distinct tool names (the `history` built-in).

A global invariant reading `history.tool_counts` is evaluated after every event, so binding a map
with one entry per distinct tool name made verification quadratic (over a minute at 10,000 names).
Tools the graph does not declare now count under one `<undeclared>` key (each such call is already
an `unknown_tool` violation), so time should grow linearly: the ratio of seconds per event between
the largest and the smallest trace is the figure to watch (about 1 when linear, about 10 when
quadratic over 1,000 -> 10,000).

Writes `bench/results/shield_history.json` and prints a table. Run: `python bench/shield_history.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

from provenance import stamp

from harness.shield import VerifyOptions, parse_graph, parse_trace, verify

SIZES = (1_000, 2_000, 5_000, 10_000)


def graph() -> Any:
    return parse_graph(
        {
            "task_id": "history",
            "initial_state": "A",
            "goal_states": ["B"],
            "global_invariants": ["history.tool_counts.all(t, history.tool_counts[t] >= 0)", "history.max_repeat <= 2"],
            "tools": {"search": {}},
            "action_map": {"search": "do_search"},
            "nodes": [
                {"node_id": "A", "actions": ["start"], "next_allowed": ["B"]},
                {"node_id": "B", "is_goal": True, "actions": ["do_search"], "next_allowed": []},
            ],
        },
        "bench",
    )


def trace(names: int) -> Any:
    events = [{"event_type": "agent_message", "action": "start"}]
    events += [{"event_type": "tool_call", "tool_name": f"t{i}", "tool_input": {}} for i in range(names)]
    events.append({"event_type": "tool_call", "tool_name": "search", "tool_input": {}})
    return parse_trace({"task_id": "history", "events": events}, "bench")


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (("seconds per event, largest / smallest trace", "per_event_ratio_largest_to_smallest"),),
    "tables": (
        {
            "over": "rows",
            "columns": (
                ("distinct tool names", "distinct_tool_names"),
                ("seconds", "seconds"),
                ("us per event", "us_per_event"),
                ("unknown_tool violations", "unknown_tool_violations"),
            ),
        },
    ),
}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()  # no options; --help says what it measures
    model = graph()
    rows = []
    for size in SIZES:
        data = trace(size)
        start = time.perf_counter()
        report = verify(model, data, {}, VerifyOptions(deep_always=True))
        seconds = time.perf_counter() - start
        rows.append({"distinct_tool_names": size, "seconds": round(seconds, 3), "us_per_event": round(seconds / size * 1e6, 1),
                     "unknown_tool_violations": sum(v.kind == "unknown_tool" for v in report.violations)})
    result = {
        **stamp(),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "rows": rows,
        "per_event_ratio_largest_to_smallest": round(rows[-1]["us_per_event"] / rows[0]["us_per_event"], 2),
    }
    path = os.path.join(os.path.dirname(__file__), "results", "shield_history.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    for row in rows:
        print(f"{row['distinct_tool_names']:>7} names  {row['seconds']:>7.3f} s  {row['us_per_event']:>8.1f} us/event")
    print(f"per-event ratio {result['per_event_ratio_largest_to_smallest']}")


if __name__ == "__main__":
    main()
