"""Run a task's shield on one candidate at a time in a worker process with a wall-time budget.

A shield reads hostile text. Whatever it does with it (raise, recurse too deep, loop, or spend
minutes in a C-level regex that holds the GIL and so cannot be interrupted by a thread), the run
must go on: the failure becomes that candidate's own outcome. A forked worker gives that by
construction: the parent waits at most `budget_s` for each answer, and on an overrun kills the
worker's whole process group (a sandbox's children too) and forks a fresh one for the next
candidate. Forking (not spawning) means the worker inherits the shield as it is, closures and
already imported modules included; the round trip costs a few milliseconds per candidate on a
loaded two-core machine (bench/results/shield_worker.json), which is why it is not per problem
threads or a pool: one worker, replaced only after a failure.

Outcomes that are not a report become a `ShieldReport` with one intake violation:
- `shield_error`: the shield raised (the message names the exception) or its worker died;
- `shield_timeout`: no answer within `budget_s` seconds.
Both are fail-closed (compliance 0, verdict `violation`, `review_required`): what could not be
checked is never clean.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.context import ForkProcess

    from harness.shield import ShieldReport

# A job the worker can run: called with no arguments in the worker (it reads what the parent held
# at fork time), returning a report.
Job = Callable[[], "ShieldReport"]
SHIELD_FAILURE_KINDS = ("shield_error", "shield_timeout")


@dataclass(frozen=True)
class Failure:
    """Why a candidate has no report from its shield: `kind` in SHIELD_FAILURE_KINDS, `reason` for people."""

    kind: str
    reason: str
    elapsed_ms: float


def _serve(connection: Connection, jobs: Callable[[Any], Job]) -> None:
    os.setpgid(0, 0)  # its own process group, so an overrun kills the sandbox processes it started too
    while True:
        try:
            key = connection.recv()
        except EOFError:
            return
        try:
            connection.send(("ok", jobs(key)()))
        except BaseException as error:  # noqa: BLE001 - any failure of hostile-text checking is this candidate's outcome
            connection.send(("error", f"{type(error).__name__}: {str(error)[:300]}"))


class ShieldWorker:
    """Runs `jobs(key)()` in a forked worker, one key at a time, each within `budget_s` seconds.

    `jobs` maps a key the parent sends (small and picklable, e.g. two indices) to the job; it is
    inherited by the worker at fork time, so it may close over anything. Use as a context manager:
    the worker is killed on exit.
    """

    def __init__(self, jobs: Callable[[Any], Job], budget_s: float) -> None:
        if not budget_s > 0:
            raise ValueError(f"the per-candidate shield budget must be positive, got {budget_s}")
        self.jobs, self.budget_s = jobs, budget_s
        self._process: ForkProcess | None = None
        self._connection: Connection | None = None

    def __enter__(self) -> ShieldWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()

    def _start(self) -> Connection:
        if self._connection is None:
            parent, child = multiprocessing.get_context("fork").Pipe()
            self._process = multiprocessing.get_context("fork").Process(target=_serve, args=(child, self.jobs), daemon=True)
            self._process.start()
            child.close()
            self._connection = parent
        return self._connection

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.is_alive():
                try:
                    os.killpg(self._process.pid, signal.SIGKILL)  # type: ignore[arg-type]
                except ProcessLookupError:  # it had not made its group yet, or has just exited
                    self._process.kill()
            self._process.join()
        if self._connection is not None:
            self._connection.close()
        self._process, self._connection = None, None

    def run(self, key: Any) -> ShieldReport | Failure:
        """The job's report, or the Failure that ended it (the worker is replaced after any failure but a raise)."""
        connection = self._start()
        start = time.perf_counter()
        connection.send(key)
        ready = connection.poll(self.budget_s)
        elapsed_ms = (time.perf_counter() - start) * 1e3
        if not ready:
            self._stop()
            return Failure("shield_timeout", f"the shield gave no answer within its {self.budget_s:g} s budget", elapsed_ms)
        try:
            status, value = connection.recv()
        except (EOFError, OSError):
            process = self._process
            self._stop()
            code = process.exitcode if process is not None else None
            return Failure("shield_error", f"the shield's worker process died (exit code {code})", elapsed_ms)
        if status == "error":
            return Failure("shield_error", f"the shield raised {value}", elapsed_ms)
        report: ShieldReport = value
        return report
