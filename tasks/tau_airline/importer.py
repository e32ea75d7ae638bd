"""A τ-bench trajectory as a shield trace, one event per message or tool call.

- a user message becomes a `user_message` event, an assistant message with text an `agent_message`
  (an assistant message with neither text nor calls too, with empty content, so nothing it did is lost);
- each tool call becomes a `tool_call` event with its arguments and its *recorded* output, after the
  text of the message that made it;
- system prompts (the policy) and tool messages (folded into their call's event) make no event.

Every event keeps `source_index`, the index in `traj` of the message it came from; events of one
assistant message share it, which is how "one call per message" and "no text beside a call" are
checked. The recorded output is what the agent saw, kept for reading the transcript; verification
re-executes the call (`replay`) and never trusts it.

    python -m harness.shield import tau-bench RESULTS.json --out DIR
    python -m harness.shield verify --graph tasks/tau_airline/graphs/airline.json --trace DIR --replay tau-bench
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from harness.core import HarnessError
from harness.shield import ShieldReport, StateGraph, Trace, VerifyOptions, parse_trace, verify
from tasks.tau_airline.policy import facts_for_trace, focus
from tasks.tau_airline.trajectory import Trajectory, load_results

TASK_ID = "tau_airline"  # the task id of every imported trace (and of the airline graph)


def trace_events(trajectory: Trajectory) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for message in trajectory.messages:
        where = {"source_index": message.source_index}
        if message.role == "user":
            events.append({"event_type": "user_message", "content": message.content or "", **where})
        elif message.role == "assistant":
            if message.content or not message.tool_calls:
                events.append({"event_type": "agent_message", "content": message.content or "", **where})
            for call in message.tool_calls:
                event = {"event_type": "tool_call", "tool_name": call.name, "tool_input": dict(call.arguments), **where}
                if call.recorded_output is not None:
                    event["tool_output"] = call.recorded_output
                events.append(event)
    return events


def trace_data(trajectory: Trajectory) -> dict[str, Any]:
    """The trace as JSON data. `meta` names the τ-bench task, trial and user, never the hidden instruction."""
    meta: dict[str, Any] = {
        "source": "tau-bench",
        "tau_task_id": trajectory.task_id,
        "trial": trajectory.trial,
        "trajectory_index": trajectory.index,
    }
    if trajectory.user_id is not None:
        meta["user_id"] = trajectory.user_id
    data: dict[str, Any] = {
        "format_version": 1,
        "trace_id": trajectory.name,
        "task_id": TASK_ID,
        "meta": meta,
        "events": trace_events(trajectory),
    }
    if trajectory.reward is not None:
        data["reward"] = trajectory.reward
    return data


def to_trace(trajectory: Trajectory) -> Trace:
    """The validated shield trace of one trajectory."""
    return parse_trace(trace_data(trajectory), trajectory.name)


def write_traces(trajectories: Iterable[Trajectory], out_dir: str, source: str | None = None) -> list[str]:
    """Write `<out_dir>/<task-trial>.json` per trajectory; every trace is validated before any is
    written, and an error names the results file (`source`) and the trajectory."""
    traces = []
    for trajectory in trajectories:
        data = trace_data(trajectory)
        parse_trace(data, f"{source}: trajectory {trajectory.index} ({trajectory.name})" if source else trajectory.name)
        traces.append((trajectory.name, data))
    try:
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for name, data in traces:
            path = os.path.join(out_dir, f"{name}.json")
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, ensure_ascii=False)
                handle.write("\n")
            paths.append(path)
    except OSError as error:
        raise HarnessError(f"{out_dir}: cannot write traces: {error.strerror or error}") from None
    return paths


def import_results(path: str, out_dir: str) -> list[str]:
    """`python -m harness.shield import tau-bench PATH --out DIR`: a results file to trace files."""
    return write_traces(load_results(path), out_dir, source=path)


def verify_imported(trace: Trace, options: VerifyOptions, graph: StateGraph) -> ShieldReport:
    """`verify --replay tau-bench`: check an imported trace against `graph` and the facts of
    replaying the trace's own tool calls on a fresh database (its recorded outputs are not read)."""
    facts = facts_for_trace(trace)
    return focus(verify(graph, trace, facts, options, trace_id=trace.trace_id), facts)
