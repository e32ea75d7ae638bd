"""`python -m harness` as a user runs it: help, config printing, one-line errors, and resuming after a kill."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _harness(*args: str, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def test_help_lists_groups_and_examples(tmp_path: Path) -> None:
    completed = _harness("--help", cwd=tmp_path)
    assert completed.returncode == 0
    assert "ensemble_min, ensemble_min_tiny" in completed.stdout
    assert "cluster: inline, local, ray" in completed.stdout
    assert "python -m harness judge=ensemble_min" in completed.stdout


def test_cfg_job_prints_the_composed_config(tmp_path: Path) -> None:
    completed = _harness("judge=ensemble_min", "--cfg", "job", cwd=tmp_path)
    assert completed.returncode == 0
    assert "limit: 50" in completed.stdout and "aggregate: min" in completed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["pool=file", "pool.path={bad_pool}"], "bad.jsonl:2: malformed JSON", id="malformed-pool-line"),
        pytest.param(["pool=file", "pool.path={unknown_pool}"], "unknown.jsonl:2: field 'problem_id': unknown problem id 'no-such-problem'", id="unknown-problem-id"),
        pytest.param(["limit=0"], "limit must be at least 1", id="limit-below-one"),
        pytest.param(["judge.members.llama_tiny.model={junk_model}"], "not a GGUF file", id="corrupt-model-file"),
        pytest.param(["output_dir=/proc/forbidden/run"], "output directory /proc/forbidden/run is not writable", id="unwritable-output"),
    ],
)
def test_bad_input_gets_one_line_and_a_nonzero_exit(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "bad.jsonl").write_text('{"problem_id": "gsm8k-test-0", "candidate_id": "a", "text": "A: 1"}\n{oops\n')
    (tmp_path / "unknown.jsonl").write_text(
        '{"problem_id": "gsm8k-test-0", "candidate_id": "a", "text": "A: 1"}\n{"problem_id": "no-such-problem", "candidate_id": "a", "text": "A: 1"}\n'
    )
    (tmp_path / "junk.gguf").write_bytes(b"junk")
    paths = {"bad_pool": tmp_path / "bad.jsonl", "unknown_pool": tmp_path / "unknown.jsonl", "junk_model": tmp_path / "junk.gguf"}
    completed = _harness(*[arg.format(**paths) for arg in args], "tracking.enabled=false", "limit=1" if "limit=0" not in args else "seed=0", cwd=tmp_path)
    assert completed.returncode == 2
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0]
    assert "Traceback" not in completed.stderr
    # nothing left behind: no outputs/ holding only harness.log, no cache, no MLflow store
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.jsonl", "junk.gguf", "unknown.jsonl"]


@pytest.mark.parametrize(
    ("args", "line"),
    [
        pytest.param(["judge=nope"], "error: config: In 'config': Could not find 'judge/nope'; available: ", id="unknown-judge"),
        pytest.param(["-m", "judge=nope"], "error: config: In 'config': Could not find 'judge/nope'; available: ", id="unknown-judge-multirun"),
        pytest.param(["limt=3"], "error: config: Could not override 'limt': Key 'limt' not in 'RunConfig'; To append to your config use +limt=3", id="typo-key"),
        pytest.param(["-m", "limt=3"], "error: config: Could not override 'limt': Key 'limt' not in 'RunConfig'; To append to your config use +limt=3", id="typo-key-multirun"),
        pytest.param(["limit=abc"], "error: config: Error merging override limit=abc: Value 'abc' of type 'str' could not be converted to Integer", id="wrong-type"),
        pytest.param(["limit"], "error: config: Error parsing override 'limit'; missing EQUAL at '<EOF>'", id="not-an-override"),
    ],
)
def test_config_mistakes_are_one_line_exit_2_and_write_nothing(tmp_path: Path, args: list[str], line: str) -> None:
    completed = _harness(*args, cwd=tmp_path)
    assert completed.returncode == 2
    [printed] = completed.stderr.splitlines()
    assert printed.startswith(line)
    if "available" in line:  # every judge option, on the same line
        assert all(option in printed.split("available: ")[1].split(", ") for option in ("ensemble_min_tiny", "llama_tiny", "none"))
    # tracking is on by default: no outputs/ or multirun/ directory, no mlruns.db, no cache
    assert list(tmp_path.iterdir()) == []


def test_a_run_killed_midway_resumes_without_repeating_finished_calls(tmp_path: Path) -> None:
    cache = tmp_path / "calls.sqlite"
    args = ["limit=3", "judge.members.llama_tiny.batch_size=1", f"cache.path={cache}", "tracking.enabled=false", "bootstrap_samples=0"]
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", *args, f"hydra.run.dir={tmp_path / 'killed'}"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    deadline = time.monotonic() + 240

    def cached() -> int:
        if not cache.exists():
            return 0
        with sqlite3.connect(cache, timeout=30) as connection:
            try:
                return connection.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
            except sqlite3.OperationalError:
                return 0

    while cached() < 3 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done = cached()
    assert 3 <= done < 12, "the run should have been killed midway"
    assert not (tmp_path / "killed" / "summary.json").exists()

    resumed = _harness(*args, f"hydra.run.dir={tmp_path / 'resumed'}", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    import json

    summary = json.loads((tmp_path / "resumed" / "summary.json").read_text())
    assert summary["cache_hits"] == done and summary["judge_calls"] == 12 - done


def test_gpu_judges_fall_back_to_their_cpu_ensemble_without_a_gpu(tmp_path: Path, shared_cache: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "harness", "judge=ensemble_min", "judge.members.qwen.resources.replicas=8", "limit=1", "tracking.enabled=false"]
        + [f"cache.path={shared_cache}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "no GPU visible: judge=ensemble_min falls back to judge=ensemble_min_tiny" in completed.stdout
    assert "ignoring judge.members.qwen.resources.replicas=8" in completed.stdout
    assert "judge=ensemble_min_tiny" in completed.stdout
    (resolved,) = tmp_path.glob("outputs/*/*/resolved_config.yaml")
    assert "name: ensemble_min_tiny" in resolved.read_text()


def test_a_gpu_judge_without_a_fallback_says_so_in_one_line(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "harness", "judge=qwen", "tracking.enabled=false"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines()[-1] == (
        "error: judge=qwen needs a GPU and this machine has none (no CPU fallback for it; try judge=llama_tiny)"
    )
