"""Tracking outages against a real `mlflow server`: a run whose server is down at the start or dies
midway still finishes, keeps what MLflow missed in `mlflow_pending/`, says so in one line, and
`python -m harness.sync` uploads it later, once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from harness import manifest, sync
from harness.tracking import numeric_metrics


@pytest.fixture(autouse=True)
def _restored_mlflow_environment(monkeypatch) -> None:
    """`harness.sync` bounds MLflow's HTTP retries through its environment variables; undo that after each test."""
    for name in ("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "MLFLOW_HTTP_REQUEST_TIMEOUT"):
        monkeypatch.setenv(name, "2" if name.endswith("RETRIES") else "1" if name.endswith("FACTOR") else "30")


def _notice(done_stdout: str, done_stderr: str) -> str:
    """The run's one line about MLflow: it must be the last line of the output and the only one."""
    lines = [line for line in (done_stdout + done_stderr).splitlines() if any(word in line for word in ("mlflow_pending", "harness.sync", "refused", "failed"))]
    assert len(lines) == 1, lines
    assert done_stdout.rstrip().splitlines()[-1] == lines[0]
    return lines[0]


def _sync(capsys, *args: str) -> tuple[int, str, str]:
    code = sync.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_uploaded_as_recorded(server, experiment: str, run_dir: Path, tmp_path: Path) -> str:
    """One run on the server, holding exactly what the run directory recorded."""
    record = json.loads((run_dir / "mlflow_pending" / "run.json").read_text())
    [tracked] = server.runs(experiment)
    assert tracked.info.status == "FINISHED"
    assert tracked.data.params == record["params"]
    assert tracked.data.metrics == pytest.approx(record["metrics"])
    assert {key: tracked.data.tags.get(key) for key in record["tags"]} == record["tags"]
    client = MlflowClient(server.url)
    names = sorted(item.path for item in client.list_artifacts(tracked.info.run_id))
    assert names == sorted(Path(artifact["path"]).name for artifact in record["artifacts"])
    for artifact in record["artifacts"]:
        downloaded = client.download_artifacts(tracked.info.run_id, Path(artifact["path"]).name, str(tmp_path))
        assert Path(downloaded).read_bytes() == (run_dir / artifact["path"]).read_bytes()
    return tracked.info.run_id


def test_a_run_against_a_dead_server_is_kept_then_synced_once(mlflow_server, run_harness, tmp_path: Path, capsys) -> None:
    mlflow_server.stop()
    run_dir, experiment = tmp_path / "run", "outage-at-start"
    done = run_harness("judge=llama_tiny", "limit=1", "n=2", f"output_dir={run_dir}", f"tracking.uri={mlflow_server.url}",
                       f"tracking.experiment={experiment}")
    assert done.returncode == 0, done.stderr[-2000:]
    notice = _notice(done.stdout, done.stderr)
    assert "while opening the run" in notice and "Connection refused" in notice
    assert "; 2 traces were not logged (harness.sync does not upload traces)" in notice
    assert notice.endswith(f"python -m harness.sync {run_dir}")

    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["traces.logged"], summary["traces.not_logged"]) == (0, 2)  # limit=1 x n=2 candidates
    record = json.loads((run_dir / "mlflow_pending" / "run.json").read_text())
    assert record["run_id"] is None and record["status"] == "FINISHED"
    assert record["metrics"] == numeric_metrics(summary)
    assert record["params"]["limit"] == "1" and record["params"]["judge.name"] == "llama_tiny"
    assert {key: record["tags"][key] for key in manifest.tags(manifest.read(run_dir))} == manifest.tags(manifest.read(run_dir))
    assert {"summary.json", "manifest.json", "candidates.jsonl", "prompts.jsonl"} <= {a["path"] for a in record["artifacts"]}

    mlflow_server.start()
    # A result edited after the run is not uploaded as the run's.
    original = (run_dir / "summary.json").read_text()
    (run_dir / "summary.json").write_text(original.replace('"problems": 1', '"problems": 100'))
    code, out, err = _sync(capsys, str(run_dir))
    assert code == 2 and "summary.json: changed since the run" in err and mlflow_server.runs(experiment) == []
    (run_dir / "summary.json").write_text(original)

    code, out, err = _sync(capsys, str(run_dir))
    assert code == 0, err
    run_id = _assert_uploaded_as_recorded(mlflow_server, experiment, run_dir, tmp_path / "download")
    assert out.strip().endswith(f"uploaded as MLflow run {run_id}")

    code, out, err = _sync(capsys, str(tmp_path))  # again, through the directory above: nothing new
    assert code == 0 and out.strip() == f"{run_dir}: already uploaded as MLflow run {run_id}"
    assert [run.info.run_id for run in mlflow_server.runs(experiment)] == [run_id]


def test_a_server_lost_midway_gets_the_rest_into_the_same_run(mlflow_server, run_harness, tmp_path: Path, capsys) -> None:
    mlflow_server.start()
    run_dir, experiment = tmp_path / "run", "outage-midway"
    process = run_harness("judge=llama_tiny", "limit=1", "n=4", f"output_dir={run_dir}", f"tracking.uri={mlflow_server.url}",
                          f"tracking.experiment={experiment}", cache=tmp_path / "fresh-cache.sqlite", wait=False)
    # The manifest tags are set right before judging (4 uncached calls): crash the server then.
    deadline, started = time.monotonic() + 300, []
    while time.monotonic() < deadline and not started:
        assert process.poll() is None, process.communicate()[1][-2000:]
        started = [run for run in mlflow_server.runs(experiment) if "model.llama_tiny.identity" in run.data.tags]
        time.sleep(0.2)
    assert started, "the run never reached MLflow"
    mlflow_server.stop(crash=True)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-2000:]
    # The trace export is the first call after the crash: it fails once (no urllib3 retry warnings,
    # `_notice` finds one line), the run goes offline and says how many traces MLflow missed.
    notice = _notice(stdout, stderr)
    assert "while logging traces (" in notice and "Connection refused" in notice
    assert "; 4 traces were not logged (harness.sync does not upload traces)" in notice
    assert "Retrying" not in stdout + stderr

    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["traces.logged"], summary["traces.not_logged"]) == (0, 4)  # limit=1 x n=4: none acknowledged
    record = json.loads((run_dir / "mlflow_pending" / "run.json").read_text())
    assert record["run_id"] == started[0].info.run_id
    assert record["metrics"] == numeric_metrics(summary)

    mlflow_server.start()
    code, out, err = _sync(capsys, str(run_dir))
    assert code == 0, err
    run_id = _assert_uploaded_as_recorded(mlflow_server, experiment, run_dir, tmp_path / "download")
    assert run_id == started[0].info.run_id
    # harness.sync uploads the run's record, not its traces: the run's metrics say 4 were not logged.
    experiment_id = MlflowClient(mlflow_server.url).get_experiment_by_name(experiment).experiment_id
    assert mlflow.search_traces(locations=[experiment_id], run_id=run_id, return_type="list") == []
    code, out, err = _sync(capsys, str(run_dir))
    assert code == 0 and "already uploaded" in out and len(mlflow_server.runs(experiment)) == 1


def test_sync_of_a_directory_without_a_record_says_so(tmp_path: Path, capsys) -> None:
    code, out, err = _sync(capsys, str(tmp_path))
    assert code == 2 and err.strip() == f"error: {tmp_path}: nothing to sync (no mlflow_pending/run.json: the run reached MLflow, or this is not a run directory)"
