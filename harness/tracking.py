"""MLflow tracking: one run per invocation, opened before judging so a bad tracking URI fails fast.

Params are the flattened resolved config; metrics are the summary's numeric values; tags carry the
git commit, package versions, model file hashes and the data hash; artifacts are the run's files.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.config import TrackingConfig
from harness.errors import HarnessError

log = logging.getLogger(__name__)


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


class TrackedRun:
    """The open MLflow run; stages add to it, `pipeline.run` closes it."""

    def __init__(self, mlflow: Any, run_id: str) -> None:
        self._mlflow = mlflow
        self.run_id = run_id

    def log_params(self, params: Mapping[str, Any]) -> None:
        self._mlflow.log_params({key: str(value) for key, value in params.items()})

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        self._mlflow.set_tags({key: str(value) for key, value in tags.items() if value is not None})

    def log_metrics(self, metrics: Mapping[str, Any]) -> None:
        numeric = {
            key: float(value)
            for key, value in metrics.items()
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        }
        self._mlflow.log_metrics(numeric)

    def log_artifacts(self, paths: list[Path]) -> None:
        for path in paths:
            self._mlflow.log_artifact(str(path))


class _NoRun(TrackedRun):
    def __init__(self) -> None:
        self.run_id = None  # type: ignore[assignment]

    def log_params(self, params: Mapping[str, Any]) -> None:
        return None

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        return None

    def log_metrics(self, metrics: Mapping[str, Any]) -> None:
        return None

    def log_artifacts(self, paths: list[Path]) -> None:
        return None


def _sweep_parent(mlflow: Any, experiment_id: str, sweep: str) -> str:
    """The parent run of a multirun sweep (found by its sweep directory tag, created by the first job)."""
    client = mlflow.tracking.MlflowClient()
    escaped = sweep.replace("'", "\\'")
    found = client.search_runs([experiment_id], filter_string=f"tags.`harness.sweep` = '{escaped}'", max_results=1)
    if found:
        return found[0].info.run_id
    parent = client.create_run(experiment_id, run_name=f"sweep {Path(sweep).name}", tags={"harness.sweep": sweep})
    client.set_terminated(parent.info.run_id)
    log.info("MLflow parent run %s for sweep %s", parent.info.run_id, sweep)
    return parent.info.run_id


@contextmanager
def tracked_run(config: TrackingConfig, run_name: str) -> Iterator[TrackedRun]:
    """An MLflow run that ends FINISHED on success and FAILED when the body raises."""
    if not config.enabled:
        yield _NoRun()
        return
    import mlflow
    from mlflow.exceptions import MlflowException

    try:
        mlflow.set_tracking_uri(config.uri)
        experiment = mlflow.set_experiment(config.experiment)
        tags = {"mlflow.parentRunId": _sweep_parent(mlflow, experiment.experiment_id, config.sweep)} if config.sweep else None
        active = mlflow.start_run(run_name=run_name, tags=tags)
    except (MlflowException, OSError) as error:
        raise HarnessError(f"cannot open MLflow tracking at {config.uri!r}: {str(error).splitlines()[0]}") from error
    log.info("MLflow run %s in experiment %r at %s", active.info.run_id, config.experiment, config.uri)
    with active:
        yield TrackedRun(mlflow, active.info.run_id)
