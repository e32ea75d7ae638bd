"""The online shield monitor (`harness.shield.Monitor`): events per second against trace length, and
how much of each violating τ-bench trajectory a stop at its first violation would have saved.

Throughput: synthetic traces of 10 to 2,000 events (the most one trace may hold) on a graph with a tool schema, a node invariant
reading `event` and a global invariant reading `history` (every event a tool call with a new input),
pushed one at a time on one core; the rate should not fall as traces grow. The same on τ-bench's
airline graph (18 global invariants reading the replayed `steps` fact), over the 200 shipped
trajectories, with the replay done beforehand (its cost is the environment's, not the monitor's).

Early intervention: for every τ-bench trajectory the airline rules flag, the event at which the
monitor decided its first violation (facts per step: event i's record depends on the trajectory
through event i's message), and what stopping the agent there saves: events, assistant messages and
characters of assistant text (τ-bench records no token counts), per task and in total; the bundled
agent scenarios' hacks likewise, with their database read at the end.
Writes `bench/results/monitor.json`. Run: `python bench/monitor.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from provenance import stamp

from harness.shield import Trace, TraceEvent, inadmissible_events, parse_graph, parse_trace, sqlite_facts
from harness.shield.monitor import Monitor

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (10, 100, 1_000, 2_000)  # 2,000: the most events a trace may hold (harness.shield.MAX_EVENTS)
AGENT_EVENTS = ("agent_message", "tool_call", "final_answer", "reasoning_step")


def synthetic_graph() -> Any:
    schema = {"type": "object", "required": ["q"], "properties": {"q": {"type": "integer", "minimum": 0}}, "additionalProperties": False}
    return parse_graph(
        {
            "task_id": "bench",
            "initial_state": "START",
            "goal_states": ["READ"],
            "global_invariants": ["history.max_repeat <= 2"],
            "tools": {"search": {"input_schema": schema}, "read": {"input_schema": schema}},
            "action_map": {"search": "call_search", "read": "call_read"},
            "nodes": [
                {"node_id": "START", "next_allowed": ["SEARCH"]},
                {"node_id": "SEARCH", "actions": ["call_search"], "invariant": "event.index >= 0", "next_allowed": ["READ"]},
                {"node_id": "READ", "actions": ["call_read"], "next_allowed": ["SEARCH"]},
            ],
        },
        "bench",
    )


def synthetic_trace(length: int) -> Trace:
    events = [{"event_type": "tool_call", "tool_name": ("search", "read")[i % 2], "tool_input": {"q": i}} for i in range(length)]
    return parse_trace({"task_id": "bench", "events": events}, "bench")


def _rate(graph: Any, trace: Trace, facts: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        monitor = Monitor(graph, trace, facts)
        start = time.perf_counter()
        for event in trace.events:
            monitor.push(event)
        best = min(best, time.perf_counter() - start)
    return len(trace.events) / best


def _assistant(events: tuple[TraceEvent, ...], start: int = 0, skip_message: int | None = None) -> tuple[int, int]:
    """Assistant messages (events of one message share `source_index`) and characters of assistant
    text in `events[start:]`, leaving out the message `skip_message` (the one a stop interrupts)."""
    messages, chars = set(), 0
    for index, event in enumerate(events[start:], start=start):
        if event.event_type not in AGENT_EVENTS or (skip_message is not None and event.source_index == skip_message):
            continue
        messages.add(event.source_index if event.source_index is not None else ("event", index))
        chars += len(event.content or "")
    return len(messages), chars


def _saved(events: tuple[TraceEvent, ...], first: int | None) -> dict[str, Any]:
    """What a stop right after event `first` (at the end, when None) would not have run."""
    cut = len(events) if first is None else first + 1
    messages, chars = _assistant(events, cut, events[first].source_index if first is not None else None)
    return {
        "events": len(events),
        "first_violation_event": first,
        "events_saved": len(events) - cut,
        "assistant_messages_saved": messages,
        "assistant_chars_saved": chars,
    }


def tau_rows(repeat: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from tasks.tau_airline.importer import to_trace
    from tasks.tau_airline.policy import airline_graph, facts_for_trace
    from tasks.tau_airline.trajectory import load_results

    graph = airline_graph()
    rows, pushed, seconds = [], 0, 0.0
    for trajectory in load_results(str(ROOT / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz")):
        trace = to_trace(trajectory)
        facts = facts_for_trace(trace)
        rate = _rate(graph, trace, facts, repeat)
        pushed += len(trace.events)
        seconds += len(trace.events) / rate
        monitor = Monitor(graph, trace, facts)
        for event in trace.events:
            monitor.push(event)
        result = monitor.finish()
        if result.verdict == "violation":
            rows.append({"trace": trajectory.name, "tau_task": trajectory.task_id, "reward": trajectory.reward,
                         "first_kind": result.online[0].kind, **_saved(trace.events, result.first_event)})
    return rows, {"trajectories": 200, "events": pushed, "events_per_s": round(pushed / seconds)}


def agent_rows() -> list[dict[str, Any]]:
    from tasks.agent import SCENARIOS, replay

    rows = []
    for name, scenario in sorted(SCENARIOS.items()):
        graph = scenario.graph()
        for path in sorted((ROOT / "tasks" / "agent" / "traces" / name).glob("*.json")):
            trace = scenario.recorded(path.stem)
            monitor = Monitor(graph, trace, facts_at_end=True)
            for event in trace.events:
                monitor.push(event)
            with tempfile.TemporaryDirectory() as folder:
                db = replay(name, scenario.tools, trace, os.path.join(folder, "env.sqlite"), inadmissible_events(graph, trace))
                result = monitor.finish(sqlite_facts(db, graph).facts())
            if result.verdict == "violation":
                rows.append({"trace": f"{name}/{path.stem}", "first_kind": result.online[0].kind, **_saved(trace.events, result.first_event)})
    return rows


def per_task(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[row["tau_task"]].append(row)
    table = []
    for task, items in sorted(grouped.items()):
        events = sum(item["events"] for item in items)
        table.append({
            "tau_task": task,
            "violating_trials": len(items),
            "first_violation_events": [item["first_violation_event"] for item in items],
            "events_saved": sum(item["events_saved"] for item in items),
            "share_of_events_saved": round(sum(item["events_saved"] for item in items) / events, 3),
            "assistant_messages_saved": sum(item["assistant_messages_saved"] for item in items),
        })
    return table


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("τ-bench airline: events/s (200 trajectories, replay excluded)", "tau.events_per_s"),
        ("τ-bench violating trajectories", "early.violating"),
        ("events a stop at the first violation saves", "{early.events_saved} of {early.events}"),
        ("assistant messages saved", "{early.assistant_messages_saved} of {early.assistant_messages}"),
        ("assistant characters saved", "{early.assistant_chars_saved} of {early.assistant_chars}"),
    ),
    "tables": (
        {"over": "throughput", "columns": (("events in trace", "events"), ("events/s (best)", "events_per_s"))},
        {"over": "tau_tasks", "columns": (("τ task", "tau_task"), ("violating trials", "violating_trials"),
                                          ("first violation (event)", "first_violation_events"), ("events saved", "events_saved"),
                                          ("share saved", "share_of_events_saved"), ("assistant messages saved", "assistant_messages_saved"))},
        {"over": "agent", "columns": (("bundled hack", "trace"), ("first violation", "first_kind"), ("at event", "first_violation_event"),
                                      ("events", "events"), ("events saved", "events_saved"))},
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "monitor.json"))
    args = parser.parse_args()
    graph = synthetic_graph()
    throughput = []
    for length in LENGTHS:
        rate = _rate(graph, synthetic_trace(length), None, args.repeat)
        throughput.append({"events": length, "events_per_s": round(rate)})
        print(f"{length:6d} events: {rate:10.0f} events/s")
    rows, tau = tau_rows(args.repeat)
    print(f"τ-bench: {tau}")
    from tasks.tau_airline.importer import to_trace
    from tasks.tau_airline.trajectory import load_results

    totals = {"events": 0, "assistant_messages": 0, "assistant_chars": 0}
    flagged = {row["trace"] for row in rows}
    for trajectory in load_results(str(ROOT / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz")):
        if trajectory.name in flagged:
            events = to_trace(trajectory).events
            messages, chars = _assistant(events)
            totals["events"] += len(events)
            totals["assistant_messages"] += messages
            totals["assistant_chars"] += chars
    early = {
        "violating": len(rows),
        **totals,
        "events_saved": sum(row["events_saved"] for row in rows),
        "assistant_messages_saved": sum(row["assistant_messages_saved"] for row in rows),
        "assistant_chars_saved": sum(row["assistant_chars_saved"] for row in rows),
    }
    print(f"early intervention: {early}")
    result = {
        **stamp(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "note": "best of `repeat` runs of Monitor.push over every event, one core of a shared 2-core VM; τ-bench records no tokens",
        "throughput": throughput,
        "tau": tau,
        "early": early,
        "tau_tasks": per_task(rows),
        "tau_trajectories": rows,
        "agent": agent_rows(),
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


if __name__ == "__main__":
    main()
