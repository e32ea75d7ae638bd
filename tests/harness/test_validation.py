"""A bad value for any mode is one line before any work: no pool generated, no model loaded, no
MLflow run opened."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from harness.pipeline import run


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param(("pool=generate", "cluster.kind=typo"), "cluster='typo' is not one of: inline, local, ray", id="cluster-kind-after-generate"),
        pytest.param(("judge.aggregate=typo",), "judge.aggregate: unknown aggregate 'typo'", id="aggregate"),
        pytest.param(("protocol.mode=typo",), "protocol.mode='typo' is not one of verdict, generate", id="protocol-mode"),
        pytest.param(("protocol.view=typo",), "protocol.view='typo' is not one of full, final_answer", id="protocol-view"),
        pytest.param(("judge.backend=typo",), "judge backend 'typo' (model llama_tiny) is not one of: cpu, openai, vllm", id="backend"),
        pytest.param(("judge.members.llama_tiny.prompt_style=typo",), "prompt_style='typo' (model llama_tiny)", id="prompt-style"),
        pytest.param(("judge.backend=openai",), "judge llama_tiny: backend=openai needs base_url", id="openai-without-url"),
        pytest.param(("pool.kind=typo",), "pool.kind='typo' is not one of: task, file, adversarial, generate", id="pool-kind"),
        pytest.param(("pool=adversarial", "pool.base=typo"), "pool.base='typo' is not one of: task, file", id="pool-base"),
        pytest.param(("pool=file",), "pool=file needs pool.path=<file.jsonl>", id="pool-file-without-path"),
        pytest.param(("pool=generate", "pool.samples=0"), "pool.samples and pool.max_tokens must be at least 1", id="generate-samples"),
        pytest.param(("cluster.max_inflight=0",), "cluster.max_inflight=0 must be at least 1", id="inflight"),
        pytest.param(("limit=0",), "limit must be at least 1 (got 0)", id="limit"),
        pytest.param(("n=0",), "n must be at least 1 or null", id="n"),
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


def test_the_command_line_says_it_in_one_line_with_exit_2(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "harness", "pool=generate", "cluster.kind=typo", f"output_dir={tmp_path / 'run'}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == ["error: cluster='typo' is not one of: inline, local, ray"]
    assert not (tmp_path / "run").exists() and not (tmp_path / "mlruns.db").exists()
