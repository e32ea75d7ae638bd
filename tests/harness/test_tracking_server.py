"""The harness against a real `mlflow server` over HTTP (SQLite store, proxied artifact root): a run
and a two-point sweep, read back with `mlflow.search_runs`: params, metrics, manifest tags,
artifacts, parent and children."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from harness import manifest
from harness.tracking import SWEEP_TAG, experiment_id, numeric_metrics, sweep_parent


def _assert_run_matches_its_directory(client: MlflowClient, tracked, run_dir: Path, tmp_path: Path) -> None:
    """Metrics are the summary's numbers, tags the manifest, artifacts the files byte for byte."""
    summary = json.loads((run_dir / "summary.json").read_text())
    recorded = manifest.read(run_dir)
    assert tracked.info.status == "FINISHED"
    assert tracked.data.metrics == pytest.approx(numeric_metrics(summary))
    expected_tags = manifest.tags(recorded)
    assert {key: tracked.data.tags.get(key) for key in expected_tags} == expected_tags
    assert tracked.data.tags["harness.run_uid"] == recorded.run_uid
    names = {item.path for item in client.list_artifacts(tracked.info.run_id)}
    assert {"summary.json", "manifest.json", "candidates.jsonl", "resolved_config.yaml", "prompts.jsonl"} <= names
    for name in ("summary.json", "manifest.json", "candidates.jsonl"):
        downloaded = client.download_artifacts(tracked.info.run_id, name, str(tmp_path))
        assert Path(downloaded).read_bytes() == (run_dir / name).read_bytes()


def test_a_run_logs_over_http_through_mlflow_tracking_uri(mlflow_server, run_harness, tmp_path: Path) -> None:
    mlflow_server.start()
    run_dir = tmp_path / "run"
    done = run_harness(
        "judge=llama_tiny", "limit=2", "n=2", f"output_dir={run_dir}", "tracking.experiment=server-run",
        env={"MLFLOW_TRACKING_URI": mlflow_server.url, "SLURM_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": "3"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "harness.sync" not in done.stdout + done.stderr  # nothing pending: the server got everything

    [tracked] = mlflow_server.runs("server-run")
    assert tracked.data.params["limit"] == "2" and tracked.data.params["n"] == "2"
    assert tracked.data.params["judge.name"] == "llama_tiny" and tracked.data.params["protocol.name"] == "plausibility"
    assert tracked.data.params["tracking.uri"] == mlflow_server.url
    assert tracked.data.tags["slurm.job_id"] == "4242" and tracked.data.tags["slurm.array_task_id"] == "3"
    assert tracked.data.tags["model.llama_tiny.identity"].startswith("gguf-sha256:")
    assert tracked.data.metrics["candidates"] == 4 and tracked.data.metrics["problems"] == 2
    _assert_run_matches_its_directory(MlflowClient(mlflow_server.url), tracked, run_dir, tmp_path / "download")

    command = manifest.read(run_dir).command
    assert command["argv"][1:3] == ["-m", "harness"] and command["argv"][3:] == done.args[3:]
    assert command["overrides"] == done.args[3:]  # the exact Hydra overrides of the job


def test_a_two_point_sweep_nests_under_one_parent(mlflow_server, run_harness, tmp_path: Path) -> None:
    mlflow_server.start()
    sweep = tmp_path / "sweep"
    done = run_harness(
        "-m", "protocol=plausibility,blind", "judge=llama_tiny", "limit=1", "n=2",
        f"tracking.uri={mlflow_server.url}", "tracking.experiment=server-sweep", f"hydra.sweep.dir={sweep}",
    )
    assert done.returncode == 0, done.stderr[-2000:]

    runs = mlflow_server.runs("server-sweep")
    parents = [run for run in runs if SWEEP_TAG in run.data.tags]
    children = [run for run in runs if "mlflow.parentRunId" in run.data.tags]
    assert len(runs) == 3 and len(parents) == 1 and len(children) == 2
    assert parents[0].data.tags[SWEEP_TAG] == str(sweep)
    assert {child.data.tags["mlflow.parentRunId"] for child in children} == {parents[0].info.run_id}
    by_protocol = {child.data.params["protocol.name"]: child for child in children}
    assert sorted(by_protocol) == ["blind", "plausibility"]
    client = MlflowClient(mlflow_server.url)
    for job in ("0", "1"):
        run_dir = sweep / job
        protocol = manifest.read(run_dir).config["protocol"]["name"]
        assert f"protocol={protocol}" in manifest.read(run_dir).command["overrides"]
        _assert_run_matches_its_directory(client, by_protocol[protocol], run_dir, tmp_path / f"download-{job}")


def test_array_jobs_starting_together_settle_on_one_sweep_parent(mlflow_server) -> None:
    """Array tasks of a Slurm sweep start at once; each may create a parent, all must pick one."""
    mlflow_server.start()
    experiment = experiment_id(MlflowClient(mlflow_server.url), "server-race")
    barrier = threading.Barrier(4)

    def job(_: int) -> str:
        client = MlflowClient(mlflow_server.url)
        barrier.wait()
        return sweep_parent(client, experiment, "/sweeps/race")

    with ThreadPoolExecutor(max_workers=4) as pool:
        chosen = list(pool.map(job, range(4)))
    assert len(set(chosen)) == 1
    active = MlflowClient(mlflow_server.url).search_runs([experiment], filter_string=f"tags.`{SWEEP_TAG}` = '/sweeps/race'")
    assert [run.info.run_id for run in active] == chosen[:1]
