"""`slurm/ray-cluster.sbatch` on the real single-node Slurm, with one node (the Ray head alone): the
harness joins the job's Ray cluster, finishes, and every Ray process the job started is gone after."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "slurm" / "ray-cluster.sbatch"


def _job_processes(marker: str) -> list[str]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or [])
        if marker in command:
            found.append(command[:200])
    return found


def test_ray_cluster_sbatch_runs_the_harness_on_the_jobs_ray_and_stops_it(slurm, tmp_path: Path) -> None:
    ray = Path(sys.executable).with_name("ray")
    job = slurm.submit(
        f"--output={tmp_path}/slurm-%j.out", "--nodes=1", "--cpus-per-task=1", str(SCRIPT),
        "judge=llama_tiny", "limit=1", "tracking.enabled=false", "bootstrap_samples=0", f"cache.path={tmp_path / 'calls.sqlite'}",
        env={"HARNESS_OUTPUT_ROOT": str(tmp_path / "out"), "HARNESS_PYTHON": sys.executable, "HARNESS_RAY": str(ray)}, cwd=tmp_path,
    )
    record = slurm.wait(job, timeout=600)
    log = (tmp_path / f"slurm-{job}.out").read_text()
    assert (record["JobState"], record["ExitCode"]) == ("COMPLETED", "0:0"), log[-4000:]
    assert "ray-cluster.sbatch: 1 Ray node(s) up" in log and "ray cluster: 1 CPUs" in log

    out = tmp_path / "out" / job
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["candidates"], summary["judge_calls"]) == (4, 4)
    (started,) = [json.loads(line) for line in (out / "replicas.jsonl").read_text().splitlines()]
    assert started["event"] == "started" and started["pid"] > 0
    assert not psutil.pid_exists(started["pid"]), "the replica must not outlive the job"
    assert _job_processes(f"/tmp/ray-{job}") == [], "every Ray process of the job is stopped"
    assert not Path(f"/tmp/ray-{job}").exists()


def test_a_ray_head_that_never_starts_ends_the_job_at_once_with_its_reason(slurm, tmp_path: Path) -> None:
    """With no `ray` command where HARNESS_RAY points, the head's step fails at once; the job
    used to wait on `ray.init`, which retries an address nobody serves for many minutes."""
    missing = tmp_path / "no-such-bin" / "ray"
    job = slurm.submit(
        f"--output={tmp_path}/slurm-%j.out", "--nodes=1", "--cpus-per-task=1", str(SCRIPT), "judge=none", "limit=1",
        env={"HARNESS_OUTPUT_ROOT": str(tmp_path / "out"), "HARNESS_PYTHON": sys.executable, "HARNESS_RAY": str(missing)}, cwd=tmp_path,
    )
    record = slurm.wait(job, timeout=120)
    log = (tmp_path / f"slurm-{job}.out").read_text()
    assert record["JobState"] == "FAILED", log[-2000:]
    assert f"{missing}: No such file or directory" in log
    assert "ray-cluster.sbatch: the Ray head's step ended before its GCS at 127.0.0.1:" in log
