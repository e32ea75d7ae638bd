"""A small pool of worker processes with a hard per-call time cap, safe to use from any thread.

Why not Math-Verify's own timeout or `concurrent.futures`? Math-Verify uses `signal.alarm`, which
only works in the main thread (so it breaks in Ray actors and worker threads), and a
`ProcessPoolExecutor` cannot cancel a running call. Here each worker is a plain subprocess
(`python -c ...serve()`) speaking JSON lines over stdin/stdout; the calling thread waits on the pipe
with a timeout and, on expiry, kills that worker and starts a fresh one. No signals are used in the
caller, and unlike `multiprocessing` spawn the caller's `__main__` is never re-imported, so scripts
need no `if __name__ == "__main__"` guard.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Literal

CallStatus = Literal["ok", "timeout", "error"]
_STARTUP_TIMEOUT_S = 120.0
_READY = {"status": "ready"}


@dataclass(frozen=True)
class CallResult:
    """What one capped call produced: `value` when ok, `error` text when it raised or died."""

    status: CallStatus
    value: Any = None
    error: str | None = None


def serve() -> None:
    """Worker loop on stdin/stdout: {"check", "args"} in, {"status", "value"|"error"} out."""
    from tasks.math.equivalence import CHECKS, warm_up

    out = sys.stdout
    sys.stdout = sys.stderr  # library prints must not corrupt the protocol
    warm_up()
    out.write(json.dumps(_READY) + "\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = {"status": "ok", "value": CHECKS[request["check"]](*request["args"])}
        except (ArithmeticError, ValueError, TypeError, AttributeError, RecursionError, MemoryError, KeyError) as error:
            reply = {"status": "error", "error": f"{type(error).__name__}: {error}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


class _Worker:
    """One worker subprocess; discarded (killed) when a call overruns or the process dies."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
        self._process = subprocess.Popen(
            [sys.executable, "-c", "from tasks.math.workers import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        # Imports take a second or more; they must not count against the first call's cap.
        self.healthy = self._read(_STARTUP_TIMEOUT_S) == _READY
        if not self.healthy:
            self.close()
            raise RuntimeError(f"math check worker did not start within {_STARTUP_TIMEOUT_S:g}s")

    def _read(self, timeout_s: float) -> dict[str, Any] | None:
        assert self._process.stdout is not None
        if not wait([self._process.stdout.fileno()], timeout_s):
            return None
        line = self._process.stdout.readline()
        return json.loads(line) if line else None

    def call(self, name: str, args: tuple[Any, ...], timeout_s: float) -> CallResult:
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(json.dumps({"check": name, "args": list(args)}) + "\n")
            self._process.stdin.flush()
        except OSError as error:
            self.healthy = False
            return CallResult("error", error=f"worker died: {error!r}")
        reply = self._read(timeout_s)
        if reply is None:
            self.healthy = False
            died = self._process.poll() is not None
            return CallResult("error", error="worker died") if died else CallResult("timeout", error=f"check exceeded {timeout_s:g}s")
        if reply["status"] == "ok":
            return CallResult("ok", value=reply["value"])
        return CallResult("error", error=reply["error"])

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait(timeout=5)
        for stream in (self._process.stdin, self._process.stdout):
            if stream is not None:
                stream.close()


class CheckPool:
    """`workers` processes running named checks from `equivalence.CHECKS`, each call capped.

    `timeout_s` (default 5 s) bounds one call including SymPy simplification; a worker that overruns
    or dies is killed and replaced, and the call reports `timeout`/`error`. Worker startup (imports
    of SymPy and Math-Verify, about a second) is paid once per worker, lazily, outside the cap.
    """

    def __init__(self, workers: int = 2, timeout_s: float = 5.0) -> None:
        self.timeout_s = timeout_s
        self._size = workers
        self._idle: queue.SimpleQueue[_Worker | None] = queue.SimpleQueue()
        for _ in range(workers):
            self._idle.put(None)  # started on first use
        self._closed = False
        self._lock = threading.Lock()

    def call(self, name: str, *args: Any, timeout_s: float | None = None) -> CallResult:
        """Run one check on a free worker, capped at `timeout_s` (default: the pool's cap); blocks
        while all workers are busy."""
        if self._closed:
            raise RuntimeError("CheckPool is closed")
        worker = self._idle.get()
        try:
            worker = worker or _Worker()
            result = worker.call(name, args, self.timeout_s if timeout_s is None else timeout_s)
            if not worker.healthy:
                worker.close()
                worker = None
            return result
        finally:
            self._idle.put(worker)

    def close(self) -> None:
        """Kill all worker processes; later calls raise."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for _ in range(self._size):
                worker = self._idle.get()
                if worker is not None:
                    worker.close()

    def __enter__(self) -> CheckPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
