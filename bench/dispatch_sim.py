"""A discrete-event simulation of replica pools driven by the real `harness.cluster.dispatch.Dispatcher`.

Shared by `bench/scheduler.py` (the policy alone, no Ray: what the Ray pool's makespan would be with
zero call overhead) and `bench/cluster_sim.py` (the production sweep on one 8-GPU node). The clock is
virtual: nothing sleeps.

The model mirrors `harness.cluster.pool.ReplicaPool.run`: every pool has its own dispatcher; a
replica answers its submitted batches in order (the head runs, the rest wait on the actor); when a
batch's first copy finishes, copies still waiting on other replicas are cancelled (reported to the
dispatcher with `failed`, as the pool does on `TaskCancelledError`), running copies finish and are
dropped (`finished` returns False). Replicas sit on devices; a device serving k busy replicas gives
each 1/k of its speed (processor sharing), so a replica alone on its device runs at its full speed.
A per-batch `delay` models time a batch spends off the device (CPU work, round trips).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.cluster.dispatch import Dispatcher  # noqa: E402


@dataclass(frozen=True)
class SimPool:
    """One judge model: `work[i]` is batch i's service time (s) on a device to itself at speed 1;
    replica j sits on device `devices[j]` and runs at `speeds[j]` (default 1) when alone there."""

    name: str
    work: tuple[float, ...]
    devices: tuple[int, ...]
    speeds: tuple[float, ...] | None = None
    sizes: tuple[int, ...] | None = None  # requests per batch, for the dispatcher's rate estimates (default 1)


@dataclass
class PoolOutcome:
    finish: float = 0.0  # when its last batch's first copy finished
    copies: int = 0
    wasted_seconds: float = 0.0  # device-seconds (at speed 1) spent on copies that lost
    busy_seconds: dict[int, float] = field(default_factory=dict)  # replica -> time with a batch in progress


@dataclass
class SimOutcome:
    makespan: float
    device_busy_seconds: dict[int, float]  # device -> time with at least one busy replica
    pools: dict[str, PoolOutcome]


def simulate(pools: list[SimPool], max_inflight: int = 2, steal: bool = True, delay: float = 0.0) -> SimOutcome:
    """Run every pool to completion at once.

    Each batch first spends `delay` seconds off its device (the engine's CPU side, the round trip:
    the device serves the other replicas meanwhile), then its `work` on the device."""
    dispatchers = {}
    queues: dict[tuple[str, int], list[int]] = {}  # (pool, replica) -> batches submitted, head running
    remaining: dict[tuple[str, int], float] = {}  # work left on the running head, in device-seconds at speed 1
    waiting: dict[tuple[str, int], float] = {}  # delay left before the running head reaches its device
    by_name = {pool.name: pool for pool in pools}
    outcomes = {pool.name: PoolOutcome() for pool in pools}
    for pool in pools:
        replicas = range(len(pool.devices))
        sizes = pool.sizes if pool.sizes is not None else (1,) * len(pool.work)
        dispatchers[pool.name] = Dispatcher(sizes, list(replicas), max_inflight=max_inflight, steal=steal)
        for replica in replicas:
            queues[pool.name, replica] = []
    devices = sorted({device for pool in pools for device in pool.devices})
    device_busy = {device: 0.0 for device in devices}
    now = 0.0

    def speed(key: tuple[str, int]) -> float:
        pool = by_name[key[0]]
        return pool.speeds[key[1]] if pool.speeds is not None else 1.0

    def start_head(key: tuple[str, int]) -> None:
        remaining[key] = by_name[key[0]].work[queues[key][0]]
        waiting[key] = delay

    def submit(name: str) -> None:
        for replica, batch in dispatchers[name].assignments(now):
            key = (name, replica)
            queues[key].append(batch)
            if len(queues[key]) == 1:
                start_head(key)

    for pool in pools:
        submit(pool.name)
    while not all(d.done for d in dispatchers.values()):
        busy = [key for key, queue in queues.items() if queue]
        if not busy:
            raise RuntimeError("simulation stalled: work left but no replica busy")
        waiting_keys = [key for key in busy if waiting[key] > 0]
        on_device = [key for key in busy if waiting[key] <= 0]
        sharing: dict[int, int] = {}
        for name, replica in on_device:
            device = by_name[name].devices[replica]
            sharing[device] = sharing.get(device, 0) + 1
        rate = {key: speed(key) / sharing[by_name[key[0]].devices[key[1]]] for key in on_device}
        step = min([remaining[key] / rate[key] for key in on_device] + [waiting[key] for key in waiting_keys])
        now += step
        for device in sharing:
            device_busy[device] += step
        for key in busy:
            outcomes[key[0]].busy_seconds[key[1]] = outcomes[key[0]].busy_seconds.get(key[1], 0.0) + step
        for key in waiting_keys:
            waiting[key] -= step
        for key in on_device:
            remaining[key] -= rate[key] * step
        for key in on_device:
            if remaining[key] > 1e-9 * (1.0 + now):
                continue
            name, replica = key
            batch = queues[key].pop(0)
            dispatcher = dispatchers[name]
            if dispatcher.finished(replica, batch, now):
                outcomes[name].finish = now
                for (other_name, other), queue in queues.items():  # cancel copies still waiting elsewhere
                    if other_name == name and batch in queue[1:]:
                        queue.remove(batch)
                        dispatcher.failed(other, batch, now, "cancelled")
            else:
                outcomes[name].wasted_seconds += by_name[name].work[batch]
            if queues[key]:
                start_head(key)
            submit(name)
    for name, outcome in outcomes.items():
        outcome.copies = dispatchers[name].copies
    return SimOutcome(makespan=now, device_busy_seconds=device_busy, pools=outcomes)
