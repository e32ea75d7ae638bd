"""Traces: what an agent (or a candidate's text) did, one event per step.

A trace is `{"task_id", "events": [...], "reward"?, "clean_reward"?, "final_output"?}`; events follow
the BenchShield method (`event_type`, `tool_name`, `tool_input`, `tool_output`, `state_before`, `state_after`,
`context`, ...). `action` (extension) names a graph action directly for non-tool events; `context` is
what the agent *reports* and is trusted only for variables no fact source provides.

`iter_traces` reads one JSON file, a JSONL file (one trace per line) or a directory of both, so the
CLI and the batch verifier share one loader with one error format (file, line, event index, field).

One input file holds at most `MAX_EVENTS` events (a trace, or a JSONL file's traces together).
Verifying costs about 1-2 ms per event on the airline graph (each of its 25 invariants at every
event), so the 64 MiB byte cap alone would let one file of one-line events cost minutes; the event
cap keeps any one input within the 30 s that `bench/shield_input_size.py` measures at both caps. A
longer run is a directory of files, each read and bounded on its own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.core import HarnessError
from harness.shield.json_input import decode, loads, read_bytes, read_json
from harness.shield.json_schema import validate

MAX_EVENTS = 2_000  # per input file; see the module docstring

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


def _over_cap(what: str) -> HarnessError:
    """The one refusal of an input over `MAX_EVENTS`, for a trace and for a JSONL file alike."""
    return HarnessError(f"{what}, more than the {MAX_EVENTS:,} one input file may hold (split it: a directory of files is read one file at a time)")


def event_count(data: Any) -> int:
    """The events a parsed trace holds (0 when it has no list of them: the schema says why)."""
    events = data.get("events") if isinstance(data, dict) else None
    return len(events) if isinstance(events, list) else 0


def parse_trace(data: Any, source: str) -> Trace:
    """Validate against the shipped schema, then build the model; errors name `source` and the event.
    A trace over `MAX_EVENTS` is refused first, before the schema walks its events."""
    count = event_count(data)
    if count > MAX_EVENTS:
        raise _over_cap(f"{source}: the trace has {count:,} events")
    validate("trace", data, source)
    return Trace.model_validate(data)


def load_trace(path: str) -> Trace:
    """Read and validate one trace JSON file."""
    return parse_trace(read_json(str(path), "trace"), str(path))


def _jsonl(path: str) -> Iterator[tuple[str, Trace]]:
    """Every line parsed and the file's events counted before the first trace is yielded, so a file
    over `MAX_EVENTS` in all is refused at the line that crosses it, before any of it is verified."""
    parsed: list[tuple[str, Any]] = []
    total = 0
    # Split on "\n" only: str.splitlines() also splits inside a JSON string holding U+2028.
    for number, raw in enumerate(read_bytes(path, "traces").split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        data = loads(decode(raw, where, "trace"), where, "trace")
        total += event_count(data)
        if total > MAX_EVENTS:
            raise _over_cap(f"{where}: the file's traces have {total:,} events by this line")
        parsed.append((where, data))
    for where, data in parsed:
        trace = parse_trace(data, where)
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
