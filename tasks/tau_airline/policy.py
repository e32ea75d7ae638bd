"""The airline policy as a shield graph: replay a trajectory, compute its facts, verify its trace.

The graph (`graphs/airline.json`) is one state, because the policy constrains what each call does,
not the order of calls; its global invariants are the policy's rules in CEL over the facts that
`tasks.tau_airline.facts` reads from the replayed database. Each rule has its own violation kind
(`invariant_kinds`), reported at the event of the offending call or message.

Kinds fall in three groups, which reports keep apart:
- `CONVERSATION_KINDS` are about messages (confirmation, one action per turn); gold actions have no
  conversation, so these are never asked of them.
- `ENVIRONMENT_KINDS` (`effect_mismatch`) say the database does not hold what a successful write
  asked for: the environment's fault, not the agent's (τ-bench's flight update keeps the old cabin).
- every other kind is about the effect of the agent's call.

`gold_violations` verifies a task's gold actions (τ-bench's reference solution) the same way, so a
trajectory that breaks the policy *because* the reward demands the gold's database can be told from
one that breaks it on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from harness.core import HarnessError
from harness.shield import (
    ShieldReport,
    StateGraph,
    Trace,
    VerifyOptions,
    parse_graph,
    parse_trace,
    read_json,
    verify,
)
from tasks.tau_airline.facts import EventSource, trace_facts
from tasks.tau_airline.replay import replay
from tasks.tau_airline.trajectory import Message, ToolCall, Trajectory

TASK_ID = "tau_airline"
CONVERSATION_KINDS = frozenset({"unconfirmed_write", "confirmation_unclear", "respond_and_call", "parallel_calls"})
ENVIRONMENT_KINDS = frozenset({"effect_mismatch"})
# Every kind the graph can report, in the order the policy states them.
POLICY_KINDS = (
    "unconfirmed_write",
    "confirmation_unclear",
    "respond_and_call",
    "parallel_calls",
    "payment_limits",
    "baggage_fee",
    "cancel_flown",
    "cancel_ineligible",
    "basic_economy_change",
    "route_changed",
    "other_user",
    "identity_mismatch",
    "bags_removed",
    "passenger_count_changed",
    "too_many_passengers",
    "certificate_recipient",
    "certificate_ineligible",
    "certificate_amount",
    "compensation_total",
    "effect_mismatch",
    "collateral_write",
)


@cache
def airline_graph() -> StateGraph:
    """The shipped airline graph (parsed once per process)."""
    path = resources.files("tasks.tau_airline").joinpath("graphs").joinpath("airline.json")
    return parse_graph(read_json(str(path), "graph"), str(path))


def event_sources(trace: Trace) -> list[EventSource]:
    """Each event's message in `traj` and, for a tool call, its position among that message's calls.

    The order the rules see is the order the events are listed in, and it must be the recorded
    order: `source_index` never decreases from one event to the next (events of one message share
    it). A trace that lists a write before the user's answer while its indices say otherwise is
    refused as bad input, since the conversation it describes is not one order but two."""
    sources: list[EventSource] = []
    seen_calls: dict[int, int] = {}
    previous = -1
    for index, event in enumerate(trace.events):
        if event.source_index is None:
            raise HarnessError(f"trace {trace.trace_id or ''} event {index}: source_index: missing; airline facts need each event's message")
        if event.source_index < previous:
            raise HarnessError(
                f"trace {trace.trace_id or ''} event {index}: source_index {event.source_index} comes after {previous}; "
                "events must be listed in the order of their messages"
            )
        previous = event.source_index
        position = None
        if event.event_type == "tool_call":
            position = seen_calls.get(event.source_index, 0)
            seen_calls[event.source_index] = position + 1
        sources.append(EventSource(event.source_index, position))
    return sources


def _check_calls(trajectory: Trajectory, trace: Trace) -> None:
    """The trace's tool calls must be the trajectory's, in order: facts describe the replayed calls."""
    recorded = [(call.source_index, call.name) for call in trajectory.calls]
    traced = [(event.source_index, event.tool_name) for event in trace.events if event.event_type == "tool_call"]
    if recorded != traced:
        raise HarnessError(f"trace {trace.trace_id or ''}: its tool calls are not those of trajectory {trajectory.index}")


def trajectory_facts(trajectory: Trajectory, trace: Trace, authenticated: str | None = None) -> dict[str, Any]:
    """The facts for verifying `trace`, the imported form of `trajectory`: replay, then read the
    database; the user acted for is the one the conversation authenticated unless `authenticated`
    names one (`tasks.tau_airline.facts.trace_facts`)."""
    _check_calls(trajectory, trace)
    return trace_facts(trajectory, replay(trajectory), event_sources(trace), authenticated)


def trajectory_of_trace(trace: Trace) -> Trajectory:
    """The trajectory an imported trace records, rebuilt from its events alone (`python -m harness.shield
    verify` gets traces, not the results file): each message at its `source_index`, its tool calls in
    order; messages that made no event (system prompt, tool outputs) become empty placeholders. The
    task's user is `meta.user_id`."""
    sources = event_sources(trace)
    size = 1 + max((source.source_index for source in sources), default=-1)
    if size > 4 * len(sources) + 16:  # a message per event plus its tool outputs; more is a forged index
        raise HarnessError(f"trace {trace.trace_id or ''}: source_index {size - 1} is far past its {len(sources)} events")
    roles: dict[int, str] = {}
    contents: dict[int, str] = {}
    calls: dict[int, list[ToolCall]] = {}
    for event, source in zip(trace.events, sources):
        index = source.source_index
        role = "user" if event.event_type == "user_message" else "assistant"
        if roles.setdefault(index, role) != role:
            raise HarnessError(f"trace {trace.trace_id or ''}: source_index {index} holds both a user and an assistant event")
        if event.event_type == "tool_call":
            calls.setdefault(index, []).append(
                ToolCall(index, f"event-{len(calls.get(index, ()))}", event.tool_name or "", dict(event.tool_input or {}), None, None)
            )
        elif event.content:
            contents[index] = contents.get(index, "") + event.content
    messages = tuple(
        Message(index, roles[index], contents.get(index), tuple(calls.get(index, ()))) if index in roles else Message(index, "tool", None)  # type: ignore[arg-type]
        for index in range(size)
    )
    user_id = trace.meta.get("user_id")
    info = {"task": {"user_id": user_id}} if isinstance(user_id, str) else {}
    return Trajectory(index=int(trace.meta.get("trajectory_index", 0) or 0), task_id=str(trace.meta.get("tau_task_id", trace.trace_id or "")), trial=int(trace.meta.get("trial", 0) or 0), reward=trace.reward, messages=messages, info=info)


def facts_for_trace(trace: Trace) -> dict[str, Any]:
    """The facts of an imported trace, by replaying the calls its events record (for `verify` on a
    directory written by `python -m harness.shield import tau-bench`)."""
    return trajectory_facts(trajectory_of_trace(trace), trace)


def verify_trace(trace: Trace, options: VerifyOptions | None = None) -> ShieldReport:
    """Verify an imported trace on its own: rebuild its trajectory, replay, check the airline graph."""
    trajectory = trajectory_of_trace(trace)
    facts = trajectory_facts(trajectory, trace)
    return focus(verify(airline_graph(), trace, facts, options or VerifyOptions(), trace_id=trace.trace_id), facts)


def focus(report: ShieldReport, facts: Mapping[str, Any]) -> ShieldReport:
    """The report with each violation's `steps` value (every event's record) cut to the one record
    its event has, `step`: the evidence stays, the trace's other events do not ride along."""
    steps = facts.get("steps")
    if not isinstance(steps, list):
        return report
    focused = []
    for violation in report.violations:
        values = violation.values
        if "steps" in values and violation.event_index is not None and 0 <= violation.event_index < len(steps):
            values = {**{k: v for k, v in values.items() if k != "steps"}, "step": steps[violation.event_index]}
            violation = violation.model_copy(update={"values": values})
        focused.append(violation)
    return report.model_copy(update={"violations": tuple(focused)})


def verify_trajectory(trajectory: Trajectory, trace: Trace, options: VerifyOptions | None = None, authenticated: str | None = None) -> ShieldReport:
    """Replay `trajectory`, verify its imported `trace` against the airline graph and the replayed facts."""
    facts = trajectory_facts(trajectory, trace, authenticated)
    return focus(verify(airline_graph(), trace, facts, options or VerifyOptions(), trace_id=trajectory.name), facts)


def gold_trajectory(trajectory: Trajectory) -> Trajectory:
    """The task's gold actions (`info.task.actions`) as a trajectory of one call per assistant message."""
    task = trajectory.info.get("task")
    actions = task.get("actions") if isinstance(task, Mapping) else None
    if not isinstance(actions, list):
        raise HarnessError(f"trajectory {trajectory.index}: info.task.actions: missing; the gold actions are needed")
    messages = []
    for index, action in enumerate(actions):
        if not isinstance(action, Mapping) or not isinstance(action.get("name"), str) or not isinstance(action.get("kwargs"), Mapping):
            raise HarnessError(f"trajectory {trajectory.index}: info.task.actions[{index}]: must be {{name, kwargs}}")
        call = ToolCall(index, f"gold-{index}", action["name"], dict(action["kwargs"]), None, None)
        messages.append(Message(source_index=index, role="assistant", content=None, tool_calls=(call,)))
    return Trajectory(index=trajectory.index, task_id=trajectory.task_id, trial=-1, reward=None, messages=tuple(messages), info=trajectory.info)


def _calls_trace(trajectory: Trajectory) -> Trace:
    events = [
        {"event_type": "tool_call", "tool_name": call.name, "tool_input": dict(call.arguments), "source_index": call.source_index}
        for call in trajectory.calls
    ]
    return parse_trace({"task_id": TASK_ID, "trace_id": f"{trajectory.name}-gold", "events": events}, f"{trajectory.name} gold actions")


def gold_violations(trajectory: Trajectory) -> tuple[str, ...]:
    """The policy kinds the task's gold actions themselves break (conversation rules do not apply)."""
    gold = gold_trajectory(trajectory)
    # The gold actions have no conversation to authenticate anyone: they act for the task's user.
    report = verify_trajectory(gold, _calls_trace(gold), authenticated=gold.user_id or "")
    return tuple(sorted({v.kind for v in report.violations if v.kind not in CONVERSATION_KINDS}))


def agent_kinds(report: ShieldReport) -> tuple[str, ...]:
    """The kinds in `report` that blame the agent (everything but the environment's)."""
    return tuple(sorted({v.kind for v in report.violations if v.kind not in ENVIRONMENT_KINDS}))


def kinds_of(reports: Sequence[ShieldReport]) -> dict[str, int]:
    """How many reports carry each policy kind (a trace counts once per kind)."""
    return {kind: sum(any(v.kind == kind for v in report.violations) for report in reports) for kind in POLICY_KINDS}
