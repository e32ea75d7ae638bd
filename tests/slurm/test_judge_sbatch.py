"""`slurm/judge.sbatch` on a real single-node Slurm: a tiny CPU run, and a job preempted mid-judging
that Slurm requeues and that then finishes with no model call repeated and an undisturbed summary."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import mlflow

from tests.support.runs import cached_calls, findings

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "slurm" / "judge.sbatch"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HARNESS_OUTPUT_ROOT": str(tmp_path / "out"), "HARNESS_PYTHON": sys.executable, **extra}


def test_judge_sbatch_runs_a_tiny_cpu_judge_and_tracks_it(slurm, tmp_path: Path) -> None:
    tracking = f"sqlite:///{tmp_path / 'mlruns.db'}"
    job = slurm.submit(
        f"--output={tmp_path}/slurm-%j.out", "--cpus-per-task=1", str(SCRIPT),
        "judge=llama_tiny", "limit=2", f"cache.path={tmp_path / 'calls.sqlite'}", "bootstrap_samples=0",
        env=_env(tmp_path, MLFLOW_TRACKING_URI=tracking), cwd=tmp_path,
    )
    record = slurm.wait(job, timeout=600)
    log = (tmp_path / f"slurm-{job}.out").read_text()
    assert (record["JobState"], record["ExitCode"]) == ("COMPLETED", "0:0"), log[-4000:]

    out = tmp_path / "out" / job
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["problems"], summary["candidates"], summary["judge_calls"], summary["cache_hits"]) == (2, 8, 8, 0)
    assert "ray cluster: 1 CPUs" in log, "judge.sbatch runs the judges on a Ray instance of the job's own CPUs"

    mlflow.set_tracking_uri(tracking)
    (run,) = mlflow.search_runs(experiment_names=["harness"], filter_string=f"params.output_dir = '{out}'", output_format="list")
    assert run.info.status == "FINISHED"
    assert run.data.metrics["selection_accuracy"] == summary["selection_accuracy"]
    assert run.data.metrics["judge_calls"] == 8
    assert run.data.params["judge.name"] == "llama_tiny" and run.data.params["limit"] == "2"


def test_a_job_preempted_mid_judging_is_requeued_and_repeats_no_call(slurm, tmp_path: Path, shared_cache: Path) -> None:
    args = ["judge=llama_tiny", "limit=3", "judge.members.llama_tiny.batch_size=1", "tracking.enabled=false", "bootstrap_samples=0"]
    reference = subprocess.run(
        [sys.executable, "-m", "harness", *args, f"cache.path={shared_cache}", f"hydra.run.dir={tmp_path / 'undisturbed'}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert reference.returncode == 0, reference.stderr[-3000:]
    undisturbed = json.loads((tmp_path / "undisturbed" / "summary.json").read_text())
    total = undisturbed["judge_calls"] + undisturbed["cache_hits"]

    cache = tmp_path / "calls.sqlite"
    job = slurm.submit(
        f"--output={tmp_path}/slurm-%j.out", "--cpus-per-task=1", str(SCRIPT), *args, "cluster=inline", f"cache.path={cache}",
        env=_env(tmp_path), cwd=tmp_path,
    )
    deadline = time.monotonic() + 300
    while cached_calls(cache) < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert slurm.job(job)["JobState"] == "RUNNING", "the job should still be judging when the warning comes"
    warned = slurm.run("scancel", "--signal=USR1", "--batch", job)
    assert warned.returncode == 0, warned.stderr

    deadline = time.monotonic() + 600
    record = slurm.job(job)
    hurried = False
    while not (record["JobState"] == "COMPLETED" and record["Restarts"] == "1") and time.monotonic() < deadline:
        assert record["JobState"] not in ("FAILED", "CANCELLED", "TIMEOUT"), record
        if record["JobState"] == "PENDING" and record["Reason"] == "BeginTime" and not hurried:
            # Slurm holds a requeued job for two minutes before it may start again; skip most of the
            # wait, not all of it: slurmd refuses a launch whose credential is from the same second as
            # the old one's revocation ("Job credential revoked"), which fails the job on a busy node.
            hurried = slurm.run("scontrol", "update", f"JobId={job}", "StartTime=now+3").returncode == 0
        time.sleep(0.5)
        record = slurm.job(job)
    log = (tmp_path / f"slurm-{job}.out").read_text()
    assert (record["JobState"], record["Restarts"], record["ExitCode"]) == ("COMPLETED", "1", "0:0"), log[-4000:]
    assert "stopped on SIGUSR1 with everything answered in the cache; requeueing job" in log

    out = tmp_path / "out" / job
    attempts = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]
    assert [(a["status"], a["signal"], a["slurm_restart_count"]) for a in attempts] == [("stopped", "SIGUSR1", 0), ("finished", None, 1)]
    first, second = attempts[0]["judge_calls"], attempts[1]["judge_calls"]
    assert 1 <= first < total and first + second == total == cached_calls(cache), "no model call may be asked twice"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["judge_calls"], summary["cache_hits"]) == (second, first)
    assert findings(summary) == findings(undisturbed)
