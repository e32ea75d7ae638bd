"""Every config option composes into typed objects; typos fail at composition."""

from __future__ import annotations

from importlib import resources

import pytest
from hydra.errors import ConfigCompositionException

from harness.config import GENERATOR, RunConfig, member_path


def _options(group: str) -> list[str]:
    folder = resources.files("harness.conf").joinpath(group)
    return sorted(item.name.removesuffix(".yaml") for item in folder.iterdir() if item.name.endswith(".yaml"))


@pytest.mark.parametrize(
    "override",
    [f"{group}={option}" for group in ("task", "pool", "judge", "protocol", "tracking", "cluster") for option in _options(group)],
)
def test_every_option_composes(make_config, override: str) -> None:
    extra = ["pool.path=x.jsonl"] if override == "pool=file" else []
    config = make_config(override, *extra)
    assert isinstance(config, RunConfig)


def test_defaults_are_the_documented_ones(make_config) -> None:
    config = make_config()
    assert (config.limit, config.n, config.seed) == (50, None, 0)
    assert config.task.name == "gsm8k" and config.pool.kind == "task"
    assert list(config.judge.members) == ["llama_tiny"]
    assert config.protocol.name == "plausibility" and config.protocol.verdict_options == ["Yes", "No"]


@pytest.mark.parametrize("aggregate", ["min", "mean", "median", "majority", "veto"])
def test_ensembles_span_families(make_config, aggregate: str) -> None:
    judge = make_config(f"judge=ensemble_{aggregate}").judge
    assert judge.aggregate == aggregate and judge.cpu_fallback == f"ensemble_{aggregate}_tiny"
    assert {member.family for member in judge.members.values()} == {"qwen", "llama", "gemma"}
    assert {member.backend for member in judge.members.values()} == {"vllm"}
    tiny = make_config(f"judge=ensemble_{aggregate}_tiny").judge
    assert tiny.aggregate == aggregate and tiny.cpu_fallback is None
    assert {member.family for member in tiny.members.values()} == {"llama", "gemma"}


@pytest.mark.parametrize(
    ("option", "repo", "revision"),
    [
        ("qwen", "Qwen/Qwen2.5-7B-Instruct", "a09a35458c702b33eeacc393d103063234e8bc28"),
        ("llama", "meta-llama/Llama-3.1-8B-Instruct", "0e9e39f249a16976918f6564b8830bc894c89659"),
        ("gemma", "google/gemma-2-9b-it", "11c9b309abf73637e4b6f9a3fa1e92e615547819"),
    ],
)
def test_production_judges_pin_a_hub_revision_and_ask_for_a_gpu_share(make_config, option: str, repo: str, revision: str) -> None:
    member = make_config(f"judge={option}").judge.members[option]
    assert (member.backend, member.model, member.vllm.revision) == ("vllm", repo, revision)
    assert member.resources.num_gpus > 0 and member.vllm.engine_kwargs["gpu_memory_utilization"] * 3 < 1.0
    assert member.vllm.fold_system_prompt == (option == "gemma")  # Gemma's chat template has no system role


def test_judge_backend_replaces_every_members_engine(make_config) -> None:
    judge = make_config("judge=llama_tiny", "judge.backend=vllm").judge
    assert judge.members["llama_tiny"].backend == "cpu"
    assert judge.member_configs()["llama_tiny"].backend == "vllm"


def test_judge_none_has_no_members(make_config) -> None:
    assert make_config("judge=none").judge.members == {}


@pytest.mark.parametrize("override", ["limt=5", "limit=abc", "judge.membrs=1", "judge=nope"])
def test_typos_fail_at_composition(make_config, override: str) -> None:
    with pytest.raises(ConfigCompositionException):
        make_config(override)


def test_tracking_uri_defaults_to_environment(monkeypatch, make_config) -> None:
    from hydra import compose, initialize_config_module

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///from-env.db")
    with initialize_config_module(config_module="harness.conf", version_base=None):
        cfg = compose(config_name="config", overrides=["output_dir=x"])
    assert cfg.tracking.uri == "sqlite:///from-env.db"


@pytest.mark.parametrize(
    ("overrides", "read", "value"),
    [
        pytest.param(("judge=qwen", "judge.members.qwen.resources.replicas=8"), lambda c: c.judge.members["qwen"].resources.replicas, 8, id="resources"),
        pytest.param(("judge=llama", "judge.members.llama.vllm.tensor_parallel_size=2"), lambda c: c.judge.members["llama"].vllm.tensor_parallel_size, 2, id="vllm"),
        pytest.param(
            ("judge=llama_tiny_http", "judge.members.llama_tiny_http.http.base_url=http://127.0.0.1:9/v1"),
            lambda c: c.judge.members["llama_tiny_http"].http.base_url,
            "http://127.0.0.1:9/v1",
            id="http",
        ),
        pytest.param(("pool=generate", "pool.generator.vllm.revision=abc"), lambda c: c.pool.generator.vllm.revision, "abc", id="generator"),
    ],
)
def test_engine_and_ray_options_live_in_their_blocks(make_config, overrides: tuple[str, ...], read, value: object) -> None:
    assert read(make_config(*overrides)) == value


@pytest.mark.parametrize("flat", ["judge.members.llama_tiny.replicas=2", "judge.members.llama_tiny.base_url=x", "judge.members.llama_tiny.engine_kwargs={}"])
def test_the_flat_paths_of_before_the_blocks_are_refused(make_config, flat: str) -> None:
    with pytest.raises(ConfigCompositionException):
        make_config(flat)


def test_a_models_override_path_names_the_policy_model_under_the_pool_and_judges_under_their_members() -> None:
    assert member_path(GENERATOR) == "pool.generator"
    assert member_path("qwen") == "judge.members.qwen"
