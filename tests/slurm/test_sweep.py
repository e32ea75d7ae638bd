"""A Hydra sweep submitted through hydra-submitit-launcher (`hydra/launcher=slurm`) to a real Slurm:
one array task per point, every run nested under one MLflow parent, and `harness.compare` on it."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import mlflow
from hydra import compose, initialize_config_module

from harness.config import register_configs


def test_the_slurm_preset_exposes_the_cluster_settings() -> None:
    register_configs()
    with initialize_config_module(config_module="harness.conf", version_base=None):
        cfg = compose(config_name="config", overrides=["hydra/launcher=slurm", "hydra.launcher.partition=gpu"], return_hydra_config=True)
    launcher = cfg.hydra.launcher
    assert launcher._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (launcher.partition, launcher.cpus_per_task, launcher.mem_gb, launcher.timeout_min) == ("gpu", 8, 16, 240)
    assert (launcher.array_parallelism, launcher.signal_delay_s, launcher.max_num_timeout) == (16, 300, 3)
    assert launcher.gpus_per_node is None and "export PYTHONUNBUFFERED=1" in launcher.setup


def test_a_two_point_sweep_runs_as_one_array_under_one_mlflow_parent(slurm, tmp_path: Path) -> None:
    tracking = f"sqlite:///{tmp_path / 'mlruns.db'}"
    sweep = tmp_path / "sweep"
    # The array's tasks start together; a SQLite store they would all create at once races in
    # MLflow's schema migration, so it exists first (a shared tracking server has no such step).
    mlflow.set_tracking_uri(tracking)
    mlflow.set_experiment("harness")
    completed = subprocess.run(
        [
            sys.executable, "-m", "harness", "-m", "hydra/launcher=slurm", "protocol=plausibility,blind",
            "judge=llama_tiny", "limit=2", "bootstrap_samples=0", f"cache.path={tmp_path / 'calls.sqlite'}",
            f"tracking.uri={tracking}", f"hydra.sweep.dir={sweep}",
            "hydra.launcher.cpus_per_task=1", "hydra.launcher.mem_gb=null", "hydra.launcher.timeout_min=20",
        ],
        env=slurm.env, cwd=tmp_path, capture_output=True, text=True, timeout=900,
    )
    logs = "\n".join(path.read_text(errors="replace")[-2000:] for path in sweep.glob(".submitit/*/*.err"))
    assert completed.returncode == 0, completed.stderr[-3000:] + logs

    tasks = sorted(path.name for path in (sweep / ".submitit").iterdir() if path.is_dir() and "_" in path.name)
    assert len(tasks) == 2 and tasks[0].split("_")[0] == tasks[1].split("_")[0], f"one array job, two tasks: {tasks}"
    summaries = {index: json.loads((sweep / str(index) / "summary.json").read_text()) for index in (0, 1)}
    assert all(summary["candidates"] == 8 for summary in summaries.values())

    (parent,) = mlflow.search_runs(experiment_names=["harness"], filter_string=f"tags.`harness.sweep` = '{sweep}'", output_format="list")
    children = mlflow.search_runs(
        experiment_names=["harness"], filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'", output_format="list"
    )
    assert sorted(run.data.params["protocol.name"] for run in children) == ["blind", "plausibility"]
    assert all(run.info.status == "FINISHED" for run in children)
    by_dir = {Path(run.data.params["output_dir"]).name: run for run in children}
    for index, summary in summaries.items():
        assert by_dir[str(index)].data.metrics["selection_accuracy"] == summary["selection_accuracy"]

    compared = subprocess.run(
        [
            sys.executable, "-m", "harness.compare", "--tracking-uri", tracking, "--output", str(tmp_path / "comparison"),
            "--filter", f"params.tracking.sweep = '{sweep}'",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert compared.returncode == 0, compared.stderr
    rows = list(csv.DictReader((tmp_path / "comparison" / "comparison.csv").open()))
    assert len(rows) == 2
    assert {"blind", "plausibility"} <= {value for row in rows for value in row.values()}
