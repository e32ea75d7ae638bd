"""A run stopped before its summary (preempted, then requeued into the same directory) carries on in
the same MLflow run; a finished run or a different config in that directory starts a new one."""

from __future__ import annotations

import threading

import mlflow
import pytest

from harness.core.errors import HarnessError
from harness.pipeline import run
from harness.tracking import RUN_UID_TAG


def _runs() -> list:
    return mlflow.search_runs(experiment_names=["harness"], output_format="list")


def test_a_requeued_attempt_continues_the_stopped_attempts_mlflow_run(make_config) -> None:
    overrides = ("judge=llama_tiny", "limit=1", "n=2")  # the test's own cache: a stop only acts on an uncached batch
    stop = threading.Event()
    stop.set()  # as if SIGUSR1 had arrived before the first batch
    with pytest.raises(HarnessError):
        run(make_config(*overrides), stop)
    [stopped] = _runs()
    assert stopped.info.status == "FAILED"

    finished = run(make_config(*overrides))
    [tracked] = _runs()
    assert tracked.info.run_id == stopped.info.run_id == finished.mlflow_run_id
    assert tracked.info.status == "FINISHED" and tracked.data.metrics["candidates"] == 2
    assert tracked.data.tags[RUN_UID_TAG] == stopped.data.tags[RUN_UID_TAG]

    again = run(make_config(*overrides))  # the run had finished: a rerun is a new run
    assert again.mlflow_run_id != finished.mlflow_run_id and len(_runs()) == 2

    with pytest.raises(HarnessError):
        run(make_config("judge=llama_tiny", "limit=1", "n=3", run="other"), stop)  # a third, uncached candidate
    changed = run(make_config("judge=llama_tiny", "limit=1", "n=1", run="other"))
    by_id = {found.info.run_id: found for found in _runs()}
    assert len(by_id) == 4 and by_id[changed.mlflow_run_id].info.status == "FINISHED"
    assert sorted(found.info.status for found in by_id.values()) == ["FAILED", "FINISHED", "FINISHED", "FINISHED"]
