"""`tracking.traces=off` logs no trace and opens no queue; a `file:` store, which has no review queues,
gets its traces and a one-line notice, and the run carries on with its items in review.json only.

MLflow 3.17 refuses a `file:` store unless MLFLOW_ALLOW_FILE_STORE is set (the run then stops in one
line before any work); the test sets it, as a user who keeps such a store must."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mlflow
import pytest

from harness.pipeline import run

TAU = ("task=tau_airline", "judge=none", "limit=1")


def test_traces_off_logs_no_trace_and_no_queue(make_config) -> None:
    result = run(make_config(*TAU, "tracking.traces=off"))
    assert "traces.logged" not in result.summary and "review.items" not in result.summary
    assert not (result.output_dir / "review.json").exists()
    experiment = mlflow.get_experiment_by_name("harness")
    assert experiment is not None
    assert mlflow.search_traces(locations=[experiment.experiment_id], run_id=result.mlflow_run_id, return_type="list") == []


def test_a_file_store_gets_traces_and_one_line_instead_of_a_queue(
    make_config, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    with caplog.at_level(logging.WARNING, logger="harness.review"):
        result = run(make_config(*TAU, f"tracking.uri=file://{tmp_path / 'mlruns'}"))
    record = json.loads((result.output_dir / "review.json").read_text())
    assert record["queue_id"] is None and record["items"]
    assert result.summary["traces.logged"] == 4
    notices = [r.getMessage() for r in caplog.records if r.name.startswith("harness.review")]
    assert len(notices) == 1 and "has no review queues" in notices[0]
