"""A judge model as a pool of Ray replica actors, fed batch by batch by the dispatcher.

Each replica actor holds one engine (llama.cpp, vLLM or the HTTP client: whatever `engine_spec`
builds), so every backend runs the same way. The pool is a `BatchExecutor`: `CachedEngine` gives it
the batches the cache could not answer and commits each result as it arrives, so the cache stays the
source of truth when replicas die: a batch answered is never asked again, and a batch lost with its
replica is resubmitted once.

Actors are created on the first batch, so a fully cached run starts no engine. Once the stop event
is set the pool submits nothing more, waits for the batches already submitted (committing each), and
raises `harness.core.stopping.Stopped`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from harness.cluster.dispatch import Dispatcher
from harness.cluster.placement import ReplicaPlacement
from harness.core import Engine, EngineRequest, EngineResult, HarnessError, OnBatch, check

log = logging.getLogger(__name__)

ReplicaEvent = Callable[[dict[str, Any]], None]
PING_INTERVAL_S = 0.5
CLOSE_GRACE_S = 30.0
RESTART_TIMEOUT_S = 600.0  # a restarted replica reloads its model; vLLM on a big model takes minutes


class JudgeReplica:
    """The actor body: one engine, answering batches in arrival order."""

    def __init__(self, factory: Callable[[], Engine]) -> None:
        self._engine = factory()

    def run(self, requests: Sequence[EngineRequest]) -> list[EngineResult]:
        return self._engine.run(requests)

    def where(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "host": socket.gethostname()}

    def close(self) -> None:
        self._engine.close()


class ReplicaPool:
    """`count` replicas of one judge model; run batches with `run`, release them with `close`."""

    def __init__(
        self,
        *,
        name: str,
        factory: Callable[[], Engine],
        placement: ReplicaPlacement,
        count: int,
        max_inflight: int,
        steal: bool,
        on_event: ReplicaEvent | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.name = name
        self._stop = stop
        self._factory = factory
        self._placement = placement
        self._count = count
        self._max_inflight = max_inflight
        self._steal = steal
        self._on_event = on_event
        self._actors: list[Any] = []
        self._groups: list[Any] = []
        self.resubmissions = 0
        self.copies = 0
        self._deaths: dict[int, int] = {}  # replica -> deaths seen (Ray restarts it max_restarts times)
        self._restarting: dict[int, float] = {}  # replica -> when it died
        self._pings: dict[int, float] = {}  # replica -> when to ask next whether it is back

    def _event(self, replica: int, event: str, where: dict[str, Any] | None = None) -> None:
        record = {"judge": self.name, "replica": replica, "event": event, "time": time.time(), **(where or {})}
        log.info("judge %s replica %d %s%s", self.name, replica, event, f" (pid {where['pid']})" if where else "")
        if self._on_event is not None:
            self._on_event(record)

    def _start(self) -> None:
        import ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        actor_class = ray.remote(JudgeReplica)
        for _ in range(self._count):
            options = self._placement.actor_options()
            if self._placement.bundles is not None:
                group = placement_group(list(self._placement.bundles), strategy=self._placement.strategy)
                self._groups.append(group)
                options["scheduling_strategy"] = PlacementGroupSchedulingStrategy(
                    placement_group=group, placement_group_bundle_index=0, placement_group_capture_child_tasks=True
                )
            self._actors.append(actor_class.options(**options).remote(self._factory))
        for replica, where in enumerate(self._wait_all([actor.where.remote() for actor in self._actors])):
            self._event(replica, "started", where)

    def _wait_all(self, refs: list[Any]) -> list[Any]:
        import ray

        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as error:  # the engine could not be built
            raise _engine_error(self.name, error) from None
        except ray.exceptions.RayActorError as error:
            raise HarnessError(f"judge {self.name}: a replica died while loading its model ({_first_line(error)})") from None

    def run(self, batches: Sequence[Sequence[EngineRequest]], on_batch: OnBatch) -> None:
        import ray

        if not self._actors:
            self._start()
        dispatcher = Dispatcher([len(batch) for batch in batches], range(len(self._actors)), self._max_inflight, self._steal)
        pending: dict[Any, tuple[str, int, int]] = {}  # ref -> (kind, replica, batch)
        while not dispatcher.done:
            if self._stop is not None and self._stop.is_set():
                if not any(kind == "batch" for kind, _, _ in pending.values()):
                    self._tally(dispatcher)
                    check(self._stop)
            else:
                for replica, batch in dispatcher.assignments(time.monotonic()):
                    pending[self._actors[replica].run.remote(list(batches[batch]))] = ("batch", replica, batch)
                self._send_pings(pending, time.monotonic())
            if not pending and not self._pings:
                raise HarnessError(f"judge {self.name}: no replica can take work")
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=PING_INTERVAL_S) if pending else ([], [])
            if not pending:
                time.sleep(PING_INTERVAL_S)
            for ref in ready:
                kind, replica, batch = pending.pop(ref)
                self._collect(ref, kind, replica, batch, dispatcher, pending, batches, on_batch)
        self._tally(dispatcher)

    def _tally(self, dispatcher: Dispatcher) -> None:
        self.resubmissions += dispatcher.resubmissions
        self.copies += dispatcher.copies

    def _collect(
        self,
        ref: Any,
        kind: str,
        replica: int,
        batch: int,
        dispatcher: Dispatcher,
        pending: dict[Any, tuple[str, int, int]],
        batches: Sequence[Sequence[EngineRequest]],
        on_batch: OnBatch,
    ) -> None:
        import ray

        now = time.monotonic()
        try:
            value = ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            raise _engine_error(self.name, error) from None
        except ray.exceptions.RayActorError as error:
            if kind == "ping":
                self._ping_failed(replica, dispatcher, now)
                return
            dispatcher.failed(replica, batch, now, _first_line(error))
            if replica not in self._restarting:  # the first failure of this death
                self._deaths[replica] = self._deaths.get(replica, 0) + 1
                self._event(replica, "died")
                dispatcher.pause(replica)
                self._restarting[replica] = now
                self._pings[replica] = now
            return
        if kind == "ping":
            del self._restarting[replica]
            self._event(replica, "restarted", value)
            dispatcher.resume(replica, now)
            return
        if len(value) != len(batches[batch]):
            raise HarnessError(f"judge {self.name}: replica {replica} answered {len(value)} of {len(batches[batch])} requests")
        if dispatcher.finished(replica, batch, now):
            on_batch(batch, value)

    def _ping_failed(self, replica: int, dispatcher: Dispatcher, now: float) -> None:
        """A restarting actor refuses calls until its engine is up again; ask again shortly, unless
        Ray has no restart left for it or it does not come back within the restart timeout."""
        out_of_restarts = self._deaths.get(replica, 0) > self._placement.max_restarts
        if out_of_restarts or now - self._restarting[replica] > RESTART_TIMEOUT_S:
            del self._restarting[replica]
            self._event(replica, "lost")
            dispatcher.lose(replica)
        else:
            self._pings[replica] = now + PING_INTERVAL_S

    def _send_pings(self, pending: dict[Any, tuple[str, int, int]], now: float) -> None:
        for replica, due in list(self._pings.items()):
            if due <= now:
                del self._pings[replica]
                pending[self._actors[replica].where.remote()] = ("ping", replica, -1)

    def close(self) -> None:
        import ray

        # Each replica closes its engine first (vLLM's engine-core process would outlive a killed
        # actor); a replica that is dead or stuck is killed all the same after the grace.
        closing = [actor.close.remote() for actor in self._actors]
        if closing:
            ray.wait(closing, num_returns=len(closing), timeout=CLOSE_GRACE_S)
        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        for group in self._groups:
            ray.util.remove_placement_group(group)
        self._actors, self._groups = [], []


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _engine_error(judge: str, error: Any) -> HarnessError:
    """An exception raised by the engine inside a replica, as the one-line error it was."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, HarnessError):
        return HarnessError(f"judge {judge}: {cause}")
    return HarnessError(f"judge {judge}: its engine failed in a replica: {_first_line(cause or error)}")
