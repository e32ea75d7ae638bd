"""Stage 1, intake: every event that names a tool names a declared one, with input in its domain.

Schema validation of the trace itself happens when it is loaded (`trace.parse_trace`); this stage
checks parameter domains (BenchShield §6.2: a forged id such as `demo_user_001` fails the tool's pattern).
It reads every event, not only `tool_call`s: a forged parameter recorded on a message is still a
forged parameter. Environments that replay a trace (`tasks.agent`) run intake first and replay
only the calls it admits, so an input no tool could take is a violation, never a crash.
"""

from __future__ import annotations

from harness.shield.compiled import CompiledGraph, compile_graph
from harness.shield.graph import StateGraph
from harness.shield.json_schema import SchemaValueError, field_path
from harness.shield.report import Violation
from harness.shield.trace import Trace, TraceEvent


def check_event(graph: CompiledGraph, index: int, event: TraceEvent) -> list[Violation]:
    """Intake of one event: a declared tool, with its input in the tool's domain."""
    validators = graph.tool_validators
    if event.tool_name is None:
        return []
    if event.tool_name not in validators:
        if not validators:
            return []
        return [
            Violation(
                stage="intake",
                kind="unknown_tool",
                message=f"tool {event.tool_name!r} is not declared in the graph",
                event_index=index,
                values={"tool_name": event.tool_name},
            )
        ]
    validate = validators[event.tool_name]
    if validate is None:
        return []
    try:
        validate(event.tool_input or {})
    except SchemaValueError as error:
        field = field_path(error.instance_path) or "input"
        return [
            Violation(
                stage="intake",
                kind="parameter_domain",
                message=f"{event.tool_name}: {field}: {error.message[:300]}",
                event_index=index,
                values={"tool_input": event.tool_input},
            )
        ]
    return []


def check_intake(graph: CompiledGraph, trace: Trace) -> list[Violation]:
    return [violation for index, event in enumerate(trace.events) for violation in check_event(graph, index, event)]


def inadmissible_events(graph: StateGraph, trace: Trace) -> frozenset[int]:
    """Indices of the events intake rejects, for a replay that must skip them."""
    return frozenset(v.event_index for v in check_intake(compile_graph(graph), trace) if v.event_index is not None)
