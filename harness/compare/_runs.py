"""Reading the runs to compare out of MLflow, as plain values.

Only leaf runs are compared: a Hydra multirun logs one child run per sweep point under a parent run
(tagged on each child as `mlflow.parentRunId`), and the parent holds no results of its own. Runs that
did not finish (failed, killed, still running) are left out, since their metrics may be partial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.core import HarnessError

PARENT_TAG = "mlflow.parentRunId"


@dataclass(frozen=True)
class RunRecord:
    """One MLflow run: its id, start time (ms), flattened config params and final metric values."""

    run_id: str
    start_time: int
    params: Mapping[str, str]
    metrics: Mapping[str, float]


@dataclass(frozen=True)
class Fetched:
    runs: list[RunRecord]
    skipped_parents: int
    skipped_unfinished: int


def _check_sqlite_store(tracking_uri: str) -> None:
    """MLflow would silently create an empty database at a mistyped path; say so instead."""
    if not tracking_uri.startswith("sqlite:///"):
        return
    path = Path(tracking_uri[len("sqlite:///") :].split("?", 1)[0])  # sqlite:////abs/path keeps its leading slash
    if not path.is_file():
        raise HarnessError(f"no MLflow store at {path} (from --tracking-uri {tracking_uri}); run the harness first or point --tracking-uri at it")


def fetch_runs(tracking_uri: str, experiment: str, filter_string: str) -> Fetched:
    """Finished leaf runs of `experiment` that match `filter_string` (MLflow search syntax)."""
    _check_sqlite_store(tracking_uri)
    import mlflow
    from mlflow.exceptions import MlflowException

    mlflow.set_tracking_uri(tracking_uri)
    try:
        found = mlflow.get_experiment_by_name(experiment)
    except MlflowException as error:
        raise HarnessError(f"cannot read MLflow at {tracking_uri}: {str(error).splitlines()[0]}") from error
    if found is None:
        raise HarnessError(f"no experiment named {experiment!r} at {tracking_uri}")
    try:
        matched = mlflow.search_runs([found.experiment_id], filter_string=filter_string, output_format="list")
    except MlflowException as error:
        raise HarnessError(f"bad --filter {filter_string!r}: {str(error).splitlines()[0]}") from error
    if not matched:
        raise HarnessError(f"no runs in experiment {experiment!r} match --filter {filter_string!r}" if filter_string else f"experiment {experiment!r} has no runs")
    # A parent may not match the filter (it has no protocol params), so look for children among all runs.
    everything = mlflow.search_runs([found.experiment_id], output_format="list") if filter_string else matched
    parents = {run.data.tags[PARENT_TAG] for run in everything if PARENT_TAG in run.data.tags}
    leaves = [run for run in matched if run.info.run_id not in parents]
    finished = [run for run in leaves if run.info.status == "FINISHED"]
    if not finished:
        raise HarnessError(f"none of the {len(matched)} matching runs in {experiment!r} is a finished leaf run")
    records = [
        RunRecord(run.info.run_id, run.info.start_time or 0, dict(run.data.params), dict(run.data.metrics)) for run in finished
    ]
    return Fetched(records, skipped_parents=len(matched) - len(leaves), skipped_unfinished=len(leaves) - len(finished))
