"""The command line in a worker process, killed when one step of its work runs past a deadline.

The invariants walk keeps its own time between evaluations (`invariants.WALK_BUDGET_S`), but one
evaluation has no bound of its own: CEL comprehensions multiply (eight nested `.all()` over ten
numbers is about 40 s), and the library evaluates in native code that holds the interpreter, so no
timer in the same process can stop it. So `python -m harness.shield` runs each command in a forked
worker and watches it. The work marks its steps (`step("trace 3")`: a trace verified, a followed
event, a proposal tried), and marks where it waits on the world rather than computing
(`with waiting():` a followed file's next line, a model's answer), which is never timed. A step
that runs past `STEP_DEADLINE_S` ends the worker, and the command exits 2 with one line naming
the step. Outside the command line (a run's shield, a test) nobody watches: `step` and `waiting`
cost a check of one variable.

    sys.exit(watched(lambda: command(args)))
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Iterator

# A step is one trace, one followed event or one proposal: the walk's 8 s budget, reading and
# replaying a file at the caps (a few seconds), and margin for a loaded machine.
STEP_DEADLINE_S = 25.0

_channel: int | None = None  # the pipe to the watching parent, in a watched worker only


def _tell(message: str) -> None:
    if _channel is not None:
        os.write(_channel, (message.replace("\n", " ")[:200] + "\n").encode())


def step(label: str) -> None:
    """A step of work begins (the previous one has ended); the watcher times it."""
    _tell(f"s{label}")


@contextlib.contextmanager
def waiting() -> Iterator[None]:
    """Waiting on input or a model, not computing: the watcher's clock stops until it is over."""
    _tell("w")
    try:
        yield
    finally:
        _tell("b")


def watched(command: Callable[[], int], deadline_s: float | None = None, label: str = "the command") -> int:
    """`command()`'s exit status, run in a forked worker as the module docstring says. Where the
    platform cannot fork, it runs here, unwatched."""
    global _channel
    deadline_s = STEP_DEADLINE_S if deadline_s is None else deadline_s
    if not hasattr(os, "fork"):
        return command()
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        os.close(read)
        _channel = write
        code = 2
        try:
            code = command()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    os.close(write)
    return _watch(pid, read, deadline_s, label)


def _watch(pid: int, read: int, deadline_s: float, label: str) -> int:
    busy_since: float | None = time.monotonic()
    pending = b""
    try:
        while True:
            timeout = None if busy_since is None else max(0.0, busy_since + deadline_s - time.monotonic())
            if not select.select([read], [], [], timeout)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                print(f"error: {label}: ran past {deadline_s:g} s of verification (an invariant's evaluation did not return)", file=sys.stderr)
                return 2
            data = os.read(read, 65536)
            if not data:
                break
            *lines, pending = (pending + data).split(b"\n")
            for line in lines:
                kind, text = line[:1], line[1:].decode(errors="replace")
                if kind == b"s":
                    label, busy_since = text, time.monotonic()
                elif kind == b"w":
                    busy_since = None
                elif kind == b"b":
                    busy_since = time.monotonic()
    finally:
        os.close(read)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):  # the native library crashed: still one line, never a silent death
        print(f"error: {label}: the verifying process died of {signal.Signals(os.WTERMSIG(status)).name}", file=sys.stderr)
        return 2
    return os.waitstatus_to_exitcode(status)
