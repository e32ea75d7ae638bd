"""Where judges run: in this process (`cluster=inline`) or as Ray replica pools (`local`, `ray`).

Public surface: `open_cluster(config, replica_log)` yields a `Cluster`, whose `executor(key, member,
spec)` gives the `BatchExecutor` a judge member's `CachedEngine` sends its batches to, and whose
`concurrent` says whether ensemble members should be judged at the same time. Ray is imported only
here and in `pool`, and only for the Ray kinds. A `stop` event given to `open_cluster` reaches every
executor: once set, they start no new batch and raise `harness.core.stopping.Stopped`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from harness.cluster.placement import gpus_needed, replica_placement
from harness.cluster.reaper import start_reaper, stop_reaper
from harness.config import ClusterConfig, member_path
from harness.core import BatchExecutor, HarnessError
from harness.preemption import StopRequest
from judges import EngineSpec, InlineExecutor, ModelConfig, engine_spec

log = logging.getLogger(__name__)

_OBJECT_STORE_BYTES = 256 * 1024 * 1024  # batches of prompts are small; Ray's default takes 30% of RAM


class Cluster(Protocol):
    concurrent: bool

    def executor(self, key: str, member: ModelConfig, spec: EngineSpec) -> BatchExecutor: ...

    def close(self) -> None: ...


class InlineCluster:
    """Every member in this process, one after another."""

    concurrent = False

    def __init__(self, stop: threading.Event | None = None) -> None:
        self._stop = stop
        self._executors: list[InlineExecutor] = []

    def executor(self, key: str, member: ModelConfig, spec: EngineSpec) -> BatchExecutor:
        executor = InlineExecutor(spec.factory, self._stop)
        self._executors.append(executor)
        return executor

    def close(self) -> None:
        """Close every engine this cluster built (a vLLM engine's process ends with it)."""
        for executor in self._executors:
            executor.close()
        self._executors = []


class RayCluster:
    """Each member a pool of replica actors on a Ray cluster this process is connected to."""

    concurrent = True

    def __init__(self, config: ClusterConfig, replica_log: Path | None, stop: threading.Event | None = None) -> None:
        import ray

        self._config = config
        self._replica_log = replica_log
        self._stop = stop
        self._pools: list[Any] = []
        resources = ray.cluster_resources()
        self._free = {"CPU": float(resources.get("CPU", 0.0)), "GPU": float(resources.get("GPU", 0.0))}
        log.info("ray cluster: %g CPUs, %g GPUs", self._free["CPU"], self._free["GPU"])

    def _reserve(self, key: str, member: ModelConfig) -> None:
        """Refuse, up front, a layout the cluster cannot hold at once (Ray would wait forever)."""
        cpus = member.resources.replicas * (member.resources.num_cpus + max(0, member.vllm.tensor_parallel_size - 1))
        gpus = gpus_needed(member)
        for resource, wanted in (("CPU", cpus), ("GPU", gpus)):
            if wanted > self._free[resource] + 1e-9:
                raise HarnessError(
                    f"{member_path(key)} needs {wanted:g} {resource}s for {member.resources.replicas} replica(s) but the Ray cluster has "
                    f"{self._free[resource]:g} left (lower {member_path(key)}.resources.replicas or .resources.num_{resource.lower()}s)"
                )
            self._free[resource] -= wanted

    def executor(self, key: str, member: ModelConfig, spec: EngineSpec) -> BatchExecutor:
        from harness.cluster.pool import ReplicaPool

        placement = replica_placement(member)
        self._reserve(key, member)
        factory = spec.factory
        if member.backend == "cpu" and member.n_threads is None:
            # llama.cpp would spin a thread per machine core in every replica; give it its CPUs only
            factory = engine_spec(dataclasses.replace(member, n_threads=max(1, int(member.resources.num_cpus)))).factory
        pool = ReplicaPool(
            name=key,
            factory=factory,
            placement=placement,
            count=member.resources.replicas,
            max_inflight=self._config.max_inflight,
            steal=self._config.steal,
            on_event=self._record,
            stop=self._stop,
        )
        self._pools.append(pool)
        return pool

    def _record(self, event: dict[str, Any]) -> None:
        if self._replica_log is not None:
            with self._replica_log.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(event) + "\n")

    def close(self) -> None:
        for pool in self._pools:
            pool.close()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise HarnessError("cluster=local and cluster=ray need Ray (pip install ray); cluster=inline runs without it") from error
    return ray


def _reclaim_signals(stop: threading.Event | None) -> None:
    """`ray.init` installs its own SIGTERM handler in the driver; a run that stops on signals takes it back."""
    if isinstance(stop, StopRequest):
        stop.install()


@contextmanager
def _ray_connection(config: ClusterConfig, stop: threading.Event | None) -> Iterator[None]:
    """Connect to (`ray`) or start (`local`) Ray; stop only what this run started."""
    ray = _import_ray()
    if ray.is_initialized():
        yield  # someone else's Ray session (a notebook, a test): use it, leave it running
        return
    common: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False, "namespace": "harness"}
    if config.kind == "ray":
        address = config.address or os.environ.get("RAY_ADDRESS") or "auto"
        try:
            ray.init(address=address, **common)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise HarnessError(f"cannot connect to the Ray cluster at {address}: {error}") from error
        _reclaim_signals(stop)
        try:
            yield
        finally:
            ray.shutdown()
        return
    reaper = start_reaper()
    try:
        ray.init(
            num_cpus=config.num_cpus or os.cpu_count() or 1,
            num_gpus=config.num_gpus,
            include_dashboard=False,
            object_store_memory=_OBJECT_STORE_BYTES,
            **common,
        )
        _reclaim_signals(stop)
        yield
    finally:
        ray.shutdown()
        stop_reaper(reaper)


def check_cluster(config: ClusterConfig) -> None:
    """Refuse a non-positive in-flight bound before Ray is touched (the kind is an enum, checked at composition)."""
    if config.max_inflight < 1:
        raise HarnessError(f"cluster.max_inflight={config.max_inflight} must be at least 1")


@contextmanager
def open_cluster(config: ClusterConfig, replica_log: Path | None = None, stop: threading.Event | None = None) -> Iterator[Cluster]:
    """The run's cluster, released on exit (replica actors killed, a local Ray stopped).

    `replica_log` receives one JSON line per replica event (started, died, restarted, lost) with
    its process id, as it happens.
    """
    check_cluster(config)
    if config.kind == "inline":
        inline = InlineCluster(stop)
        try:
            yield inline
        finally:
            inline.close()
        return
    with _ray_connection(config, stop):
        cluster = RayCluster(config, replica_log, stop)
        try:
            yield cluster
        finally:
            cluster.close()
