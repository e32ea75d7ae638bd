"""Traces: what an agent (or a candidate's text) did, one event per step.

A trace is `{"task_id", "events": [...], "reward"?, "clean_reward"?, "final_output"?}`; events follow
the BenchShield method (`event_type`, `tool_name`, `tool_input`, `tool_output`, `state_before`, `state_after`,
`context`, ...). `action` (extension) names a graph action directly for non-tool events; `context` is
what the agent *reports* and is trusted only for variables no fact source provides.

`iter_traces` reads one JSON file, a JSONL file (one trace per line) or a directory of both, so the
CLI and the batch verifier share one loader with one error format (file, line, event index, field).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.core import HarnessError
from harness.shield.json_input import decode, loads, read_bytes, read_json
from harness.shield.json_schema import validate

EventType = Literal["tool_call", "agent_message", "user_message", "reasoning_step", "final_answer"]


class TraceEvent(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    event_type: EventType
    timestamp: str | None = None
    agent_step: int | None = None
    action: str | None = None
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_output: Any = None
    tool_output_summary: str | None = None
    content: str | None = None
    state_before: str | None = None
    state_after: str | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    # Where the event came from in an imported transcript (the message's index), carried into violations.
    source_index: int | None = None


class Trace(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format_version: Literal[1] = 1
    trace_id: str | None = None
    task_id: str
    reward: float | None = None
    clean_reward: float | None = None
    final_output: Any = None
    meta: dict[str, Any] = Field(default_factory=dict)
    events: tuple[TraceEvent, ...]


def parse_trace(data: Any, source: str) -> Trace:
    """Validate against the shipped schema, then build the model; errors name `source` and the event."""
    validate("trace", data, source)
    return Trace.model_validate(data)


def load_trace(path: str) -> Trace:
    """Read and validate one trace JSON file."""
    return parse_trace(read_json(str(path), "trace"), str(path))


def _jsonl(path: str) -> Iterator[tuple[str, Trace]]:
    # Split on "\n" only: str.splitlines() also splits inside a JSON string holding U+2028.
    for number, raw in enumerate(read_bytes(path, "traces").split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        trace = parse_trace(loads(decode(raw, where, "trace"), where, "trace"), where)
        yield (trace.trace_id or where), trace


def _file(path: str) -> Iterator[tuple[str, Trace]]:
    if path.endswith(".jsonl"):
        yield from _jsonl(path)
    else:
        trace = load_trace(path)
        yield (trace.trace_id or path), trace


def iter_traces(path: str) -> Iterator[tuple[str, Trace]]:
    """(name, trace) pairs from a `.json` file, a `.jsonl` file, or a directory of both (sorted).

    A directory is read one level deep: an entry that is not a regular file is bad input, so a
    symlink loop or a folder named `x.json` cannot recurse."""
    path = str(path)
    if os.path.isdir(path):
        try:
            entries = os.listdir(path)
        except OSError as error:
            raise HarnessError(f"{path}: cannot list traces: {error.strerror}") from None
        names = sorted(name for name in entries if name.endswith((".json", ".jsonl")))
        if not names:
            raise HarnessError(f"{path}: directory holds no .json or .jsonl traces")
        for name in names:
            yield from _file(os.path.join(path, name))
    else:
        yield from _file(path)
