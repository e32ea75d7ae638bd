"""Verification in a worker process that the command line kills at a deadline per trace.

The invariants walk keeps its own time between evaluations (`invariants.WALK_BUDGET_S`), but one
evaluation has no bound of its own: CEL comprehensions multiply (seven nested `.all()` over a
ten-element list cost 11 s), and the library evaluates in native code that holds the interpreter,
so no Python timer in the same process can stop it. The command line therefore verifies in a
forked worker that sends each finished (name, report) back as soon as it has it; the parent waits
at most `TRACE_DEADLINE_S` for each, and a worker that sends nothing in that time is killed and the
command ends as bad input, one line naming the trace it was on. A worker's `HarnessError` is
re-raised as the parent's, so every other refusal reads as before.

    results = in_worker(lambda: verify_path(graph, path, facts, options), f"{path}")
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from harness.core import HarnessError

T = TypeVar("T")

# Per trace: the walk's 8 s budget, reading and replaying a file at the caps (a few seconds), and
# margin for a loaded machine; only a trace whose one evaluation does not return reaches it.
TRACE_DEADLINE_S = 25.0
_HEADER = struct.Struct("!cQ")  # kind (b"i" item, b"e" end, b"x" HarnessError), payload length


def _send(fd: int, kind: bytes, payload: Any) -> None:
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(kind, len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _worker(fd: int, produce: Callable[[], Iterable[Any]]) -> None:
    """The child: every item as it comes, then the end (or the error that ended it)."""
    try:
        for item in produce():
            _send(fd, b"i", item)
        _send(fd, b"e", None)
    except HarnessError as error:
        _send(fd, b"x", str(error))
    except BaseException as error:  # noqa: BLE001 - the parent turns it into one line
        _send(fd, b"x", f"verification failed: {type(error).__name__}: {error}")


def _read_exactly(fd: int, size: int, deadline: float) -> bytes | None:
    """`size` bytes, or None when the deadline passes first; b"" when the worker is gone."""
    chunks, got = [], 0
    while got < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, min(size - got, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def in_worker(produce: Callable[[], Iterable[T]], source: str, deadline_s: float | None = None) -> list[T]:
    """Everything `produce()` yields, computed in a forked worker; see the module docstring.
    Where the platform cannot fork, `produce()` runs here (without the deadline)."""
    deadline_s = TRACE_DEADLINE_S if deadline_s is None else deadline_s
    if not hasattr(os, "fork"):
        return list(produce())
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(read)
        try:
            _worker(write, produce)
        finally:
            os._exit(0)
    os.close(write)
    items: list[T] = []
    try:
        while True:
            deadline = time.monotonic() + deadline_s
            header = _read_exactly(read, _HEADER.size, deadline)
            if header is None:
                raise HarnessError(f"{source}: trace {len(items) + 1} ran past {deadline_s:g} s of verification (an invariant's evaluation did not return)")
            if header == b"":
                raise HarnessError(f"{source}: the verifying process ended before trace {len(items) + 1} was verified")
            kind, size = _HEADER.unpack(header)
            payload = _read_exactly(read, size, deadline)
            if payload is None:
                raise HarnessError(f"{source}: trace {len(items) + 1} ran past {deadline_s:g} s of verification (an invariant's evaluation did not return)")
            if len(payload) < size:
                raise HarnessError(f"{source}: the verifying process ended before trace {len(items) + 1} was verified")
            value = pickle.loads(payload)  # noqa: S301 - our own child's output
            if kind == b"i":
                items.append(value)
            elif kind == b"x":
                raise HarnessError(value)
            else:
                return items
    finally:
        os.close(read)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
