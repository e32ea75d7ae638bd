"""A bad value for any mode is one line before any work: no pool generated, no model loaded, no
MLflow run opened."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hydra.errors import ConfigCompositionException

from harness.__main__ import one_line
from harness.core.errors import HarnessError
from harness.pipeline import run


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param(("judge.aggregate=typo",), "judge.aggregate: unknown aggregate 'typo'", id="aggregate"),
        pytest.param(("pool=generate", "judge.aggregate=typo"), "judge.aggregate: unknown aggregate 'typo'", id="aggregate-after-generate"),
        pytest.param(("judge=none", "judge.aggregate=typo"), "judge.aggregate: unknown aggregate 'typo'", id="aggregate-without-members"),
        pytest.param(("judge.backend=openai",), "judge llama_tiny: backend=openai needs base_url", id="openai-without-url"),
        pytest.param(("pool=generate", "pool.generator.backend=openai"), "judge llama_tiny: backend=openai needs base_url", id="generator-without-url"),
        pytest.param(("pool=file",), "pool=file needs pool.path=<file.jsonl>", id="pool-file-without-path"),
        pytest.param(("pool=generate", "pool.samples=0"), "pool.samples and pool.max_tokens must be at least 1", id="generate-samples"),
        pytest.param(("cluster.max_inflight=0",), "cluster.max_inflight=0 must be at least 1", id="inflight"),
        pytest.param(("limit=0",), "limit must be at least 1 (got 0)", id="limit"),
        pytest.param(("n=0",), "n must be at least 1 or null", id="n"),
        pytest.param(("pool=generate", "tracking.enabled=true", "tracking.uri=foo://x"), "tracking.uri='foo://x': MLflow has no tracking store", id="tracking-uri"),
    ],
)
def test_a_bad_mode_is_refused_before_any_work(make_config, tmp_path: Path, overrides: tuple[str, ...], message: str) -> None:
    config = make_config(*overrides)
    with pytest.raises(HarnessError) as raised:
        run(config)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    # nothing was started: no output directory (so no generated pool), no MLflow store, no cache
    assert not Path(config.output_dir).exists()
    assert not (tmp_path / "mlruns.db").exists() and not (tmp_path / "cache.sqlite").exists()


# Every mode is an enum of its owner's config: a value outside it fails at composition, before the
# run config exists, naming the field and the values it allows.
ENUM_MODES = [
    pytest.param(("cluster.kind=typo",), "cluster.kind", "[inline, local, ray]", id="cluster-kind"),
    pytest.param(("pool=generate", "cluster.kind=typo"), "cluster.kind", "[inline, local, ray]", id="cluster-kind-after-generate"),
    pytest.param(("judge.backend=typo",), "judge.backend", "[cpu, openai, vllm]", id="judge-backend"),
    pytest.param(("judge.members.llama_tiny.backend=typo",), "judge.members.llama_tiny.backend", "[cpu, openai, vllm]", id="member-backend"),
    pytest.param(("judge.members.llama_tiny.prompt_style=typo",), "judge.members.llama_tiny.prompt_style", "[chat, completion]", id="prompt-style"),
    pytest.param(("pool=generate", "pool.generator.backend=typo"), "pool.generator.backend", "[cpu, openai, vllm]", id="generator-backend"),
    pytest.param(("protocol.view=typo",), "protocol.view", "[full, final_answer]", id="protocol-view"),
    pytest.param(("protocol.mode=typo",), "protocol.mode", "[verdict, generate]", id="protocol-mode"),
    pytest.param(("pool.kind=typo",), "pool.kind", "[task, file, adversarial, generate]", id="pool-kind"),
    pytest.param(("pool=adversarial", "pool.base=typo"), "pool.base", "[task, file]", id="pool-base"),
    pytest.param(("task.source=typo",), "task.source", "[bundled, hub]", id="task-source"),
]


@pytest.mark.parametrize(("overrides", "field", "allowed"), ENUM_MODES)
def test_a_mode_outside_its_enum_fails_at_composition(make_config, tmp_path: Path, overrides: tuple[str, ...], field: str, allowed: str) -> None:
    with pytest.raises(ConfigCompositionException) as raised:
        make_config(*overrides)
    cause = str(raised.value.__cause__)
    assert cause.splitlines()[0] == f"Invalid value 'typo', expected one of {allowed}"
    assert f"full_key: {field}" in cause
    assert list(tmp_path.iterdir()) == []
    # the one line `python -m harness` prints for it (the command line itself is run below)
    line = one_line(raised.value)
    assert f"{field}=typo" in line and f"expected one of {allowed}" in line and "\n" not in line


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


# The command line turns every composition error into its line the same way (`one_line`, checked for
# each mode above), so two modes are enough here: one plain, one that would generate a pool.
@pytest.mark.parametrize(("overrides", "field", "allowed"), ENUM_MODES[:2])
def test_the_command_line_says_a_bad_mode_in_one_line_with_exit_2(tmp_path: Path, overrides: tuple[str, ...], field: str, allowed: str) -> None:
    completed = _harness(*overrides, cwd=tmp_path)
    assert completed.returncode == 2
    [line] = completed.stderr.splitlines()
    assert f"{field}=typo" in line and f"expected one of {allowed}" in line
    # tracking is on by default: still no outputs/, no mlruns.db, no cache, no generated pool
    assert list(tmp_path.iterdir()) == []


def test_the_command_line_says_a_bad_aggregate_in_one_line_with_exit_2(tmp_path: Path) -> None:
    completed = _harness("pool=generate", "judge.aggregate=typo", cwd=tmp_path)
    assert completed.returncode == 2
    [line] = completed.stderr.splitlines()
    assert line.startswith("error: judge.aggregate: unknown aggregate 'typo'; expected one of min, mean, median, majority, veto, quorum:k")
    assert list(tmp_path.iterdir()) == []
