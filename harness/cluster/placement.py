"""What a judge replica asks Ray for: pure data, so GPU layouts are testable without a GPU.

A replica with `vllm.tensor_parallel_size = 1` is one actor with `resources.num_gpus` (a fraction
lets several judges share a GPU, each engine capped by its own `gpu_memory_utilization`). With
`vllm.tensor_parallel_size = k > 1` the replica reserves a placement group of k single-GPU bundles packed
on one node (`STRICT_PACK`): the replica actor itself sits in bundle 0 without a GPU of its own, and
vLLM's Ray executor places its k tensor-parallel workers in the group's bundles (the pattern of
vLLM's own Ray examples).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core import HarnessError
from judges import ModelConfig


@dataclass(frozen=True)
class ReplicaPlacement:
    """Ray options for one replica actor, plus the placement group it needs (None: none)."""

    num_cpus: float
    num_gpus: float
    bundles: tuple[dict[str, float], ...] | None
    strategy: str | None
    max_restarts: int

    def actor_options(self) -> dict[str, Any]:
        """`ray.remote(...).options(**this)`, without the scheduling strategy (set once the group exists)."""
        return {
            "num_cpus": self.num_cpus,
            "num_gpus": self.num_gpus,
            "max_restarts": self.max_restarts,
            "max_task_retries": 0,  # the scheduler resubmits, exactly once, itself
        }


def replica_placement(model: ModelConfig) -> ReplicaPlacement:
    """The placement of each replica of `model`; raises HarnessError on impossible resources."""
    tp = model.vllm.tensor_parallel_size
    if tp < 1:
        raise HarnessError(f"judge {model.name}: vllm.tensor_parallel_size={tp} must be at least 1")
    if model.resources.replicas < 1:
        raise HarnessError(f"judge {model.name}: resources.replicas={model.resources.replicas} must be at least 1")
    if model.resources.num_cpus < 0 or model.resources.num_gpus < 0:
        raise HarnessError(f"judge {model.name}: resources.num_cpus and resources.num_gpus must not be negative")
    if model.resources.max_restarts < 0:
        raise HarnessError(f"judge {model.name}: resources.max_restarts={model.resources.max_restarts} must not be negative")
    if tp == 1:
        return ReplicaPlacement(model.resources.num_cpus, model.resources.num_gpus, None, None, model.resources.max_restarts)
    if model.backend != "vllm":
        raise HarnessError(f"judge {model.name}: vllm.tensor_parallel_size={tp} needs backend=vllm (got {model.backend})")
    if model.resources.num_gpus not in (0, 1, tp):
        raise HarnessError(f"judge {model.name}: with vllm.tensor_parallel_size={tp}, each of the {tp} workers takes one GPU; leave resources.num_gpus at 1")
    bundles = tuple({"GPU": 1.0, "CPU": model.resources.num_cpus if index == 0 else 1.0} for index in range(tp))
    return ReplicaPlacement(num_cpus=0.0, num_gpus=0.0, bundles=bundles, strategy="STRICT_PACK", max_restarts=model.resources.max_restarts)


def gpus_needed(model: ModelConfig) -> float:
    """GPUs all replicas of `model` hold at once."""
    per_replica = model.vllm.tensor_parallel_size if model.vllm.tensor_parallel_size > 1 else model.resources.num_gpus
    return per_replica * model.resources.replicas
