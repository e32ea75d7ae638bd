"""How a running stage learns it should stop: a `threading.Event` and the error that ends the stage.

Executors (in the judge layer and on the cluster) check the event before each batch; the entry point
owns the signals that set it (`harness.preemption`). The exit status lives here with the error, so a
stopped run exits 75 (`EX_TEMPFAIL` in sysexits.h: "try again later") whichever layer stopped it.
"""

from __future__ import annotations

import threading

from harness.core.errors import HarnessError

PREEMPTED_EXIT = 75


class Stopped(HarnessError):
    """Judging stopped on request: everything answered so far is in the cache; rerun to resume."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=PREEMPTED_EXIT)


def check(stop: threading.Event | None) -> None:
    """Raise `Stopped` when a stop was requested; executors call it before starting a batch."""
    if stop is not None and stop.is_set():
        name = getattr(stop, "signal_name", None) or "a stop request"
        raise Stopped(f"stopped by {name}")
