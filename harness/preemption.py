"""Stopping a run cleanly when the scheduler asks, so a requeued job resumes from the call cache.

Slurm warns a job with a signal before its time limit or a preemption (`--signal=B:USR1@<s>`, or
`scancel --signal=USR1`; submitit's launcher asks for SIGUSR2), and preempts or cancels it with
SIGTERM. On any of them, the harness stops
taking new batches, lets the batches already running finish and land in the cache, records the
attempt, and exits with `PREEMPTED_EXIT` (75, `EX_TEMPFAIL` in sysexits.h: "try again later").
The same command run again then asks the models nothing they already answered.

Signals are a property of the process, so the handlers are installed by the entry point
(`stop_on_signals`) and the pipeline only sees a `threading.Event` it hands to the executors. A job
runner that had its own Python handler for the signal (submitit requeues its task on SIGUSR2) gets
the signal handed on after the clean stop (`StopRequest.forward`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM)


class StopRequest(threading.Event):
    """Set by a stop signal; `signal_name` says which one arrived first.

    `install` (re)claims the signals for this request: `ray.init` replaces the driver's SIGTERM
    handler with its own, so the cluster calls `install` again once Ray is up. `restore` puts back
    the handlers that were there before the first `install`.
    """

    def __init__(self, signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> None:
        super().__init__()
        self.signal_name: str | None = None
        self._signum: int | None = None
        self._signals = signals
        self._previous: dict[signal.Signals, Any] = {}
        self._handed_on: dict[signal.Signals, Any] = {}

    def request(self, signum: int) -> None:
        if not self.is_set():
            self._signum = signum
            self.signal_name = signal.Signals(signum).name
            self.set()
            log.warning("%s received: finishing the batches in flight, then stopping (rerun the same command to resume)", self.signal_name)

    def install(self) -> None:
        """Handle the stop signals from now on; outside the main thread Python cannot, and this does nothing."""
        if threading.current_thread() is not threading.main_thread():
            return
        for number in self._signals:
            previous = signal.signal(number, self._handle)
            self._previous.setdefault(number, previous)

    def restore(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._handed_on.update(self._previous)
        self._previous.clear()

    def forward(self) -> None:
        """Call the Python handler the stopping signal had before `install`, if it had one.

        A job runner's handler (submitit's checkpoint-and-requeue) then does its part after the run
        stopped cleanly; the default action (which would kill the process) is never replayed.
        """
        handler = self._handed_on.get(signal.Signals(self._signum)) if self._signum is not None else None
        if callable(handler):
            handler(self._signum, None)

    def _handle(self, signum: int, _frame: Any) -> None:
        self.request(signum)


@contextmanager
def stop_on_signals(signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> Iterator[StopRequest]:
    """A `StopRequest` set by any of `signals` while the block runs; the old handlers come back after.

    Outside the main thread (where Python cannot install handlers) the request is never set.
    """
    stop = StopRequest(signals)
    stop.install()
    try:
        yield stop
    finally:
        stop.restore()


def record_attempt(
    output_dir: Path,
    status: str,
    *,
    judge_calls: int,
    cache_hits: int,
    signal_name: str | None = None,
    generator_calls: int | None = None,
    generator_cache_hits: int | None = None,
) -> Path:
    """Append this attempt to `attempts.jsonl` in the output directory and return its path.

    A requeued Slurm job writes to the same directory, so the file is the job's history: summing
    `judge_calls` over its lines gives the model calls the job made in all, which equals an
    uninterrupted run's count exactly when no call was repeated. A `pool=generate` run's lines also
    count the policy model's calls (`generator_calls`), so the same holds for generation.
    """
    path = output_dir / "attempts.jsonl"
    row = {
        "status": status,
        "signal": signal_name,
        "judge_calls": judge_calls,
        "cache_hits": cache_hits,
        "time": time.time(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "slurm_restart_count": int(os.environ.get("SLURM_RESTART_COUNT", "0")),
    }
    if generator_calls is not None:
        row |= {"generator_calls": generator_calls, "generator_cache_hits": generator_cache_hits}
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    return path
