"""Stage 1, intake: every tool call names a declared tool and its input lies in the tool's domain.

Schema validation of the trace itself happens when it is loaded (`trace.parse_trace`); this stage
checks parameter domains (seed 6.2: a forged id such as `demo_user_001` fails the tool's pattern).
"""

from __future__ import annotations

import fastjsonschema

from harness.shield.compiled import CompiledGraph
from harness.shield.report import Violation
from harness.shield.trace import Trace


def check_intake(graph: CompiledGraph, trace: Trace) -> list[Violation]:
    violations: list[Violation] = []
    validators = graph.tool_validators
    for index, event in enumerate(trace.events):
        if event.event_type != "tool_call" or event.tool_name is None:
            continue
        if event.tool_name not in validators:
            if validators:
                violations.append(
                    Violation(
                        stage="intake",
                        kind="unknown_tool",
                        message=f"tool {event.tool_name!r} is not declared in the graph",
                        event_index=index,
                        values={"tool_name": event.tool_name},
                    )
                )
            continue
        validate = validators[event.tool_name]
        if validate is None:
            continue
        try:
            validate(event.tool_input or {})
        except fastjsonschema.JsonSchemaValueException as error:
            field = (error.name or "data").removeprefix("data").lstrip(".") or "input"
            violations.append(
                Violation(
                    stage="intake",
                    kind="parameter_domain",
                    message=f"{event.tool_name}: {field} {error.message.replace(error.name or '', '').strip()}",
                    event_index=index,
                    values={"tool_input": event.tool_input},
                )
            )
    return violations
