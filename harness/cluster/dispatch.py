"""Which replica runs which batch next: the scheduling policy, free of Ray and of wall clocks.

The Ray replica pool and the cluster simulator (`bench/cluster_sim.py`) both drive this one object,
so the policy that is benchmarked is the policy that runs. Three rules:

- **Pull, not shard.** Batches wait in one shared queue; a replica gets the next one whenever it has a
  free slot. Each replica holds at most `max_inflight` batches (one running, the rest queued on the
  actor), which hides the round trip without letting a slow replica hoard work (backpressure).
- **Steal at the tail.** Once the queue is empty, an idle replica takes a copy of a batch that waits
  behind another replica's running one, or of a running batch it is expected to finish sooner than
  its current replica (from each replica's measured time per request, or, before a replica has a
  measurement, once the batch has run twice as long as the thief would need: MapReduce's backup
  tasks with LATE's straggler rule).
  The first copy to finish wins; the other runs to the end and its result is dropped (cancelling a
  queued Ray actor task stalled that replica for ~30 s, measured). Copies are identical requests, so
  which one wins never changes a verdict.
- **Resubmit once.** A batch whose execution failed (its replica died) goes back to the front of the
  queue once; a second failure is an error for the run. A batch already answered is never rerun.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from harness.core import HarnessError

# Whatever names a replica (the Ray pool uses its actor index, the simulator its own labels).
Replica = TypeVar("Replica", bound=Hashable)


class BatchFailed(HarnessError):
    """A batch failed twice: the run cannot complete it."""


@dataclass
class _ReplicaState:
    inflight: list[int] = field(default_factory=list)  # batch ids in submission order; [0] is running
    running_since: float = 0.0
    busy_seconds: float = 0.0
    requests_done: int = 0
    paused: bool = False  # restarting: no new work until it answers again
    lost: bool = False  # dead for good

    @property
    def usable(self) -> bool:
        return not (self.paused or self.lost)

    def seconds_per_request(self) -> float | None:
        return self.busy_seconds / self.requests_done if self.requests_done else None


class Dispatcher(Generic[Replica]):
    """Assigns `len(sizes)` batches (batch i holds `sizes[i]` requests) to `replicas`.

    Drive it with the clock of your choice: call `assignments(now)` whenever something changed and
    submit what it returns; report each outcome with `finished` or `failed`. `done` is true when
    every batch has a result.
    """

    def __init__(self, sizes: Sequence[int], replicas: Sequence[Replica], max_inflight: int = 2, steal: bool = True) -> None:
        if not replicas:
            raise HarnessError("a replica pool needs at least one replica")
        self._sizes = list(sizes)
        self._queue: deque[int] = deque(range(len(sizes)))
        self._replicas = {replica: _ReplicaState() for replica in replicas}
        self._max_inflight = max(1, max_inflight)
        self._steal = steal
        self._complete: set[int] = set()
        self._failures: dict[int, int] = {}
        self.copies = 0  # duplicate submissions made by stealing
        self.resubmissions = 0

    @property
    def done(self) -> bool:
        return len(self._complete) == len(self._sizes)

    def assignments(self, now: float) -> list[tuple[Replica, int]]:
        """New (replica, batch) submissions: queued batches into free slots, then tail steals."""
        made: list[tuple[Replica, int]] = []
        if all(state.lost for state in self._replicas.values()):
            raise HarnessError("every replica of the pool is lost (max_restarts exhausted)")
        live = [(replica, state) for replica, state in self._replicas.items() if state.usable]
        progress = True
        while self._queue and progress:
            progress = False
            for replica, state in live:  # round robin, so equal replicas share the first fill
                if self._queue and len(state.inflight) < self._max_inflight:
                    made.append(self._submit(replica, state, self._queue.popleft(), now))
                    progress = True
        if self._steal and not self._queue:
            for replica, state in live:
                if not state.inflight:
                    stolen = self._steal_for(replica, state, now)
                    if stolen is not None:
                        self.copies += 1
                        made.append(self._submit(replica, state, stolen, now))
        return made

    def _submit(self, replica: Replica, state: _ReplicaState, batch: int, now: float) -> tuple[Replica, int]:
        if not state.inflight:
            state.running_since = now
        state.inflight.append(batch)
        return replica, batch

    def _holders(self, batch: int) -> int:
        return sum(batch in state.inflight for state in self._replicas.values())

    def _steal_for(self, thief: Replica, thief_state: _ReplicaState, now: float) -> int | None:
        """The batch an idle replica should copy, or None when no copy is expected to finish sooner."""
        own_rate = thief_state.seconds_per_request()
        best: tuple[float, int] | None = None
        for replica, state in self._replicas.items():
            if replica == thief or not state.inflight:
                continue
            rate = state.seconds_per_request()
            clock = now  # when this replica would finish each of its batches, left alone
            for position, batch in enumerate(state.inflight):
                per_request = rate if rate is not None else own_rate
                duration = self._sizes[batch] * per_request if per_request is not None else 0.0
                if position == 0:
                    elapsed = now - state.running_since
                    # unmeasured replica: assume what is left takes as long as what has run (LATE)
                    clock += max(0.0, duration - elapsed) if rate is not None else max(elapsed, duration - elapsed)
                else:
                    clock += duration
                if batch in self._complete or self._holders(batch) > 1:
                    continue
                if own_rate is None:
                    if position == 0:
                        continue  # never copy a running batch without evidence that it would help
                    gain = float(position)  # it would wait behind a running batch; the thief is idle now
                else:
                    gain = clock - (now + self._sizes[batch] * own_rate)
                if gain > 0 and (best is None or gain > best[0]):
                    best = (gain, batch)
        return None if best is None else best[1]

    def _release(self, replica: Replica, batch: int, now: float) -> _ReplicaState:
        state = self._replicas[replica]
        if batch in state.inflight:
            was_running = state.inflight[0] == batch
            state.inflight.remove(batch)
            if was_running:
                state.running_since = now
        return state

    def finished(self, replica: Replica, batch: int, now: float) -> bool:
        """Record a result; True when it is the first for this batch (use it), False for a late copy."""
        state = self._replicas[replica]
        started = state.running_since
        self._release(replica, batch, now)
        state.busy_seconds += max(0.0, now - started)
        state.requests_done += self._sizes[batch]
        if batch in self._complete:
            return False
        self._complete.add(batch)
        return True

    def failed(self, replica: Replica, batch: int, now: float, reason: str) -> None:
        """Record a failed execution: requeue the batch once (unless another copy is still out)."""
        self._release(replica, batch, now)
        if batch in self._complete or self._holders(batch) > 0 or batch in self._queue:
            return
        failures = self._failures.get(batch, 0) + 1
        self._failures[batch] = failures
        if failures > 1:
            raise BatchFailed(f"batch {batch} failed twice ({reason}); the run stops here, finished batches are cached")
        self.resubmissions += 1
        self._queue.appendleft(batch)

    def pause(self, replica: Replica) -> None:
        """No new work for a replica that is restarting."""
        self._replicas[replica].paused = True

    def resume(self, replica: Replica, now: float) -> None:
        state = self._replicas[replica]
        state.paused = False
        state.running_since = now

    def lose(self, replica: Replica) -> None:
        """Stop using a replica for good (its in-flight batches are reported with `failed`)."""
        self._replicas[replica].lost = True
