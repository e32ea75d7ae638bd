"""`verify --graph G --follow PATH|-`: the `Monitor` on a trace that is still being written.

Input is JSONL, from a file another process appends to, or from stdin (`-`): an optional first line
with the trace's own fields (`task_id`, `reward`, `trace_id`, `meta`, ...; any line without
`event_type`, and never `events`), then one trace event per line. The trace ends at end of input: at
end of file, or, with `--idle-timeout S`, once nothing new arrived for S seconds (a writer that is
still appending keeps the file open; a pipe ends when its writer closes it). Each violation is
printed as soon as it is decided, one line each, flushed; `--stop-on-first` exits 1 at the first, so
a caller can stop its agent. Otherwise the final report follows (the batch report of the whole
trace) and the exit code is verify's: 0 pass, 1 violation, 2 bad input (one line naming the line).

Bad input besides a bad line (exit 2): a directory or any error reading the input; a line past
`MAX_BYTES`, checked before it is buffered (the input is split in time linear in its size); a
followed regular file that shrinks below what was read, is replaced or removed at its path, or whose
first `PREFIX_BYTES` change (checked at each end of file); an `--idle-timeout` that is not a number
of seconds in (0, `MAX_IDLE_TIMEOUT_S`].

Facts: `--facts F.json` are known from the start (invariants decided at each event); `--facts-db
D.sqlite` is read when input ends, and `--replay FORMAT` replays the trace's calls then (checks that
read a fact are decided at the end; those that read none, at each event).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import select
import stat
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from harness.core import HarnessError
from harness.shield.facts import load_facts_json, sqlite_facts
from harness.shield.graph import StateGraph
from harness.shield.json_input import MAX_BYTES, decode, loads
from harness.shield.monitor import Monitor
from harness.shield.report import ShieldReport, VerifyOptions, Violation
from harness.shield.trace import Trace, TraceEvent, parse_trace
from harness.shield.watchdog import step, waiting

# format -> (module, function(trace) -> facts): the facts of replaying a finished trace's calls.
REPLAY_FACTS: dict[str, tuple[str, str]] = {"tau-bench": ("tasks.tau_airline.policy", "facts_for_trace")}
POLL_S = 0.05
MAX_IDLE_TIMEOUT_S = 86_400.0  # a day: any longer wait is a monitor that never ends
PREFIX_BYTES = 1 << 16  # the start of a followed file, compared at each poll to notice a rewrite


class _Followed:
    """A regular file being appended to: refuses (bad input) a file that shrinks below what was
    read, is replaced (another inode at the path), or whose first bytes change (rewritten)."""

    def __init__(self, path: str, fd: int, named: bool) -> None:
        self.path, self.fd, self.named = path, fd, named  # named: a path to watch (stdin has none)
        status = os.fstat(fd)
        self.identity = (status.st_dev, status.st_ino)
        self.offset = 0
        self.prefix = b""

    def read(self) -> bytes:
        data = os.read(self.fd, 1 << 16)
        if len(self.prefix) < PREFIX_BYTES:
            self.prefix += data[: PREFIX_BYTES - len(self.prefix)]
        self.offset += len(data)
        return data

    def unchanged(self) -> None:
        """At end of file: raise when the file is no longer the one whose bytes were read."""
        if os.fstat(self.fd).st_size < self.offset:
            raise HarnessError(f"{self.path}: the followed file shrank below the {self.offset:,} bytes already read (truncated or rewritten)")
        if self.named:
            try:
                status = os.stat(self.path)
            except OSError:
                raise HarnessError(f"{self.path}: the followed file was removed or renamed while it was read") from None
            if (status.st_dev, status.st_ino) != self.identity:
                raise HarnessError(f"{self.path}: the followed file was replaced by another file while it was read")
        if os.pread(self.fd, len(self.prefix), 0) != self.prefix:
            raise HarnessError(f"{self.path}: the followed file was rewritten (its first bytes changed) while it was read")


def _chunks(fd: int, followed: _Followed | None, idle_timeout: float | None) -> Iterator[bytes]:
    last = time.monotonic()
    while True:
        with waiting():  # input is awaited, not computed: the step deadline does not run
            if followed is None and idle_timeout is not None:
                ready, _, _ = select.select([fd], [], [], max(0.0, idle_timeout - (time.monotonic() - last)))
                if not ready:
                    return
            data = followed.read() if followed is not None else os.read(fd, 1 << 16)
        if data:
            last = time.monotonic()
            yield data
            continue
        if followed is not None:
            followed.unchanged()
        if followed is None or idle_timeout is None or time.monotonic() - last >= idle_timeout:
            return
        with waiting():
            time.sleep(POLL_S)


def _split(chunks: Iterator[bytes], path: str) -> Iterator[tuple[int, bytes]]:
    """Lines of the chunks, each line's length checked before it is buffered (work linear in the
    input: a chunk is searched for newlines once, never the buffer again)."""
    pending: list[bytes] = []
    held, number = 0, 0
    for data in chunks:
        start = 0
        while True:
            newline = data.find(b"\n", start)
            piece = data[start:] if newline < 0 else data[start:newline]
            if held + len(piece) > MAX_BYTES:
                raise HarnessError(f"{path}:{number + 1}: line longer than {MAX_BYTES} bytes")
            if newline < 0:
                pending.append(piece)
                held += len(piece)
                break
            raw = b"".join((*pending, piece))
            pending, held, start = [], 0, newline + 1
            number += 1
            if raw.strip():
                yield number, raw
    raw = b"".join(pending)
    if raw.strip():
        yield number + 1, raw


def lines(path: str, idle_timeout: float | None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) from `path` or stdin as they are written; blank lines are skipped. Any
    error reading the input (a directory, a device error) is bad input."""
    if path == "-":
        fd, close = sys.stdin.fileno(), False
    else:
        try:
            fd, close = os.open(path, os.O_RDONLY | os.O_NONBLOCK), True
        except OSError as error:
            raise HarnessError(f"{path}: cannot follow: {error.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise HarnessError(f"{path}: cannot follow a directory (give the trace's JSONL file, or - for stdin)")
        where = "stdin" if path == "-" else path
        followed = _Followed(where, fd, named=close) if stat.S_ISREG(mode) else None
        if followed is None and close:
            os.set_blocking(fd, True)
        yield from _split(_chunks(fd, followed, idle_timeout), where)
    except OSError as error:
        raise HarnessError(f"{'stdin' if path == '-' else path}: cannot read: {error.strerror or error}") from None
    finally:
        if close:
            os.close(fd)


def _event(data: Any, where: str, index: int, task_id: str) -> TraceEvent:
    try:
        return parse_trace({"task_id": task_id, "events": [data]}, where).events[0]
    except HarnessError as error:
        raise HarnessError(str(error).replace("invalid trace: event 0: ", f"invalid event {index}: ").replace("events[0].", "")) from None


def _header(data: Any, where: str) -> Trace:
    if "events" in data:
        raise HarnessError(f"{where}: the header line carries the trace's own fields; events come one a line after it")
    return parse_trace({**data, "events": []}, where)


def _violation_line(violation: Violation, decided_at: int | None, as_json: bool) -> str:
    at = "end" if decided_at is None else f"event {decided_at}"
    if as_json:
        return json.dumps({"decided_at": decided_at, "violation": violation.model_dump(mode="json")}, allow_nan=False)
    return f"{at}: {violation.stage}/{violation.kind}: {violation.message}"


def run(args: argparse.Namespace, graph: StateGraph, options: VerifyOptions, report_text: Callable[[str, ShieldReport], str]) -> int:
    """Follow `args.follow` and print as described in the module docstring; returns the exit code."""
    if args.idle_timeout is not None and not 0 < args.idle_timeout <= MAX_IDLE_TIMEOUT_S:  # NaN fails this too
        raise HarnessError(f"--idle-timeout must be a number of seconds above 0 and at most {MAX_IDLE_TIMEOUT_S:,.0f}")
    if args.llm_parser or args.labelled_steps:
        raise HarnessError("--follow does not take --llm-parser: label a finished trace instead")
    as_json = args.format == "json"
    source = "stdin" if args.follow == "-" else args.follow
    facts = load_facts_json(args.facts) if args.facts else None
    at_end = bool(args.facts_db or args.replay)
    monitor: Monitor | None = None
    for number, raw in lines(args.follow, args.idle_timeout):
        where = f"{source}:{number}"
        data = loads(decode(raw, where, "trace"), where, "trace")
        if not isinstance(data, dict):
            raise HarnessError(f"{where}: expected a JSON object (the header or an event)")
        if monitor is None:
            header = _header(data, where) if "event_type" not in data else None
            monitor = Monitor(graph, header, facts, options, facts_at_end=at_end)
            if header is not None:
                continue
        event = _event(data, where, len(monitor.events), monitor.header.task_id)
        step(f"{where}: event {len(monitor.events)}")
        try:
            found = monitor.push(event)
        except HarnessError as error:
            raise HarnessError(f"{where}: {error}") from None
        for violation in found:
            print(_violation_line(violation, len(monitor.events) - 1, as_json), flush=True)
            if args.stop_on_first:
                print(f"{source}: stopped at event {len(monitor.events) - 1}", file=sys.stderr)
                return 1
    if monitor is None:
        monitor = Monitor(graph, None, facts, options, facts_at_end=at_end)
    step(f"{source}: the end of the trace (its facts)")
    end_facts = None
    if args.facts_db:
        end_facts = sqlite_facts(args.facts_db, graph)
    elif args.replay:
        module, function = REPLAY_FACTS[args.replay]
        end_facts = getattr(importlib.import_module(module), function)(monitor.trace())
    seen = len(monitor.online)
    step(f"{source}: the end of the trace (its batch report)")
    result = monitor.finish(end_facts)
    for violation in result.online[seen:]:
        print(_violation_line(violation, None, as_json), flush=True)
        if args.stop_on_first:
            print(f"{source}: stopped at the end", file=sys.stderr)
            return 1
    name = monitor.header.trace_id or source
    print(json.dumps({"trace": name, "report": result.report.model_dump(mode="json")}, allow_nan=False) if as_json else report_text(name, result.report))
    return 1 if result.report.verdict == "violation" else 0
