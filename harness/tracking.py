"""MLflow tracking that survives an unreachable server.

One MLflow run per invocation, opened before judging. Params are the flattened resolved config;
metrics the summary's numeric values; tags the manifest; artifacts the run's files. Every value is
also kept in memory: when a call to the tracking server fails (unreachable at the start, or gone
midway), the run stops calling it, finishes its work, and writes what MLflow did not get to
`mlflow_pending/` in the run directory (see `harness.pending`), to be uploaded by
`python -m harness.sync`. A tracking URI MLflow cannot use at all (unknown scheme) still stops the
run before any work, with one line.

Runs are named by a `harness.run_uid` tag, so a later upload finds a run created before an outage.
"""

from __future__ import annotations

import logging
import math
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import pending
from harness.config import TrackingConfig
from harness.core import HarnessError

log = logging.getLogger(__name__)

RUN_UID_TAG = "harness.run_uid"
SWEEP_TAG = "harness.sweep"
SYNCED_TAG = "harness.synced"
PARENT_TAG = "mlflow.parentRunId"


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def tracking_failures() -> tuple[type[BaseException], ...]:
    """What a tracking call raises when the server is down or refuses: MLflow's wrapped HTTP errors,
    socket errors, and the artifact client's own requests errors."""
    import requests
    from mlflow.exceptions import MlflowException

    return (MlflowException, OSError, requests.RequestException)


def failure_gist(error: BaseException, limit: int = 200) -> str:
    """The gist of a tracking failure: the socket error when there is one (MLflow wraps it in a
    paragraph about the URL and retries), else the message's first line."""
    text = str(error).strip()
    socket_error = re.search(r"\[Errno -?\d+\][^'\")]*", text)
    if socket_error:
        return socket_error.group(0).strip()
    line = (text.splitlines() or [type(error).__name__])[0]
    return line if len(line) <= limit else line[: limit - 3] + "..."


def check_tracking(config: TrackingConfig) -> None:
    """Refuse a tracking URI MLflow has no store for, before any work (opening the store would create
    a SQLite file or contact a server, so only the scheme is looked up in MLflow's registry)."""
    if not config.enabled:
        return
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry as registry

    try:
        registry.get_store_builder(config.uri)
    except tracking_failures() as error:
        schemes = ", ".join(sorted(scheme for scheme in getattr(registry, "_registry", {}) if scheme))
        known = f" (MLflow knows {schemes})" if schemes else ""
        raise HarnessError(f"tracking.uri={config.uri!r}: MLflow has no tracking store for this URI{known}") from error


def client_for(config: TrackingConfig) -> Any:
    """An MlflowClient for `config.uri`, with HTTP retries bounded by `config.request_retries` (MLflow's
    own default retries a dead server for minutes). A URI MLflow has no store for is bad input."""
    os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = str(config.request_retries)
    os.environ["MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR"] = "1"
    os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] = str(config.request_timeout_s)
    from mlflow.tracking import MlflowClient

    try:
        client = MlflowClient(tracking_uri=config.uri)  # resolves the store for the scheme; contacts nothing
    except tracking_failures() as error:
        raise HarnessError(f"cannot use MLflow tracking URI {config.uri!r}: {failure_gist(error)}") from error
    return client


def experiment_id(client: Any, name: str) -> str:
    """The experiment's id, created when missing (a concurrent job creating it first is fine)."""
    from mlflow.exceptions import MlflowException

    found = client.get_experiment_by_name(name)
    if found is not None:
        return found.experiment_id
    try:
        return client.create_experiment(name)
    except MlflowException:
        found = client.get_experiment_by_name(name)
        if found is None:
            raise
        return found.experiment_id


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sweep_parent(client: Any, experiment: str, sweep: str) -> str:
    """The parent run of a multirun sweep, found by its sweep-directory tag or created by the first job.

    Array jobs start at once and may each create a parent; after creating one, a job looks again and
    every job settles on the oldest (ties by run id), deleting its own if it lost, so children of one
    sweep share one parent.
    """
    filter_string = f"tags.`{SWEEP_TAG}` = {_quoted(sweep)}"
    found = client.search_runs([experiment], filter_string=filter_string, max_results=50)
    if not found:
        created = client.create_run(experiment, run_name=f"sweep {Path(sweep).name}", tags={SWEEP_TAG: sweep})
        client.set_terminated(created.info.run_id)
        found = client.search_runs([experiment], filter_string=filter_string, max_results=50)
        winner = min(found, key=lambda run: (run.info.start_time, run.info.run_id))
        if winner.info.run_id != created.info.run_id:
            client.delete_run(created.info.run_id)
        log.info("MLflow parent run %s for sweep %s", winner.info.run_id, sweep)
        return winner.info.run_id
    return min(found, key=lambda run: (run.info.start_time, run.info.run_id)).info.run_id


def find_run(client: Any, experiment: str, run_uid: str) -> Any | None:
    found = client.search_runs([experiment], filter_string=f"tags.`{RUN_UID_TAG}` = {_quoted(run_uid)}", max_results=2)
    return found[0] if found else None


def create_run(client: Any, experiment: str, run_name: str, run_uid: str, sweep: str | None, start_time_ms: int) -> str:
    tags = {RUN_UID_TAG: run_uid}
    if sweep:
        tags[PARENT_TAG] = sweep_parent(client, experiment, sweep)
    return client.create_run(experiment, start_time=start_time_ms, tags=tags, run_name=run_name).info.run_id


def numeric_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {
        key: float(value)
        for key, value in metrics.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    }


def log_values(client: Any, run_id: str, params: Mapping[str, str], tags: Mapping[str, str], metrics: Mapping[str, float]) -> None:
    """One batched upload (MLflow's client splits it into requests within the server's limits)."""
    from mlflow.entities import Metric, Param, RunTag

    stamp = int(time.time() * 1000)
    client.log_batch(
        run_id,
        metrics=[Metric(key, value, stamp, 0) for key, value in metrics.items()],
        params=[Param(key, value) for key, value in params.items()],
        tags=[RunTag(key, value) for key, value in tags.items()],
    )


class TrackedRun:
    """The run's MLflow record: forwarded to the server while it answers, kept in memory always.

    `mode` is `online` (every call reached MLflow so far), `offline` (a call failed: `offline_reason`
    says which and why; nothing more is sent) or `disabled` (`tracking.enabled=false`).
    """

    def __init__(self, config: TrackingConfig, run_name: str, output_dir: Path, run_uid: str | None = None) -> None:
        self.config = config
        self.run_name = run_name
        self.output_dir = output_dir
        self.resumed = run_uid is not None
        self.run_uid = run_uid or uuid.uuid4().hex
        self.run_id: str | None = None
        self.experiment_id: str | None = None
        self.mode = "online" if config.enabled else "disabled"
        self.offline_reason: str | None = None
        self.start_time_ms = int(time.time() * 1000)
        self._client: Any = None
        self._params: dict[str, str] = {}
        self._tags: dict[str, str] = {}
        self._metrics: dict[str, float] = {}
        self._artifacts: list[Path] = []

    def _send(self, what: str, call: Callable[[], object]) -> None:
        if self.mode != "online":
            return
        retries = logging.getLogger("urllib3.connectionpool")
        level = retries.level
        retries.setLevel(logging.ERROR)  # each retry would log a warning; the run ends with one line instead
        try:
            call()
        except tracking_failures() as error:
            self.mode = "offline"
            self.offline_reason = f"while {what} ({failure_gist(error)})"
            log.debug("MLflow at %s failed %s; logging continues into %s/%s", self.config.uri, self.offline_reason, self.output_dir, pending.DIRNAME)
        finally:
            retries.setLevel(level)

    def lost(self, what: str, gist: str) -> None:
        """Record a failure a caller met talking to MLflow itself (the trace export): the run goes
        offline as if `_send` had failed, so nothing more is sent and the rest goes to `mlflow_pending/`."""
        if self.mode != "online":
            return
        self.mode = "offline"
        self.offline_reason = f"while {what} ({gist})"

    def _open_run_id(self) -> str:
        """The MLflow run's id, for the calls `_send` makes: those run only while online, which after
        `open` means the run was created (a failure to create it turns the tracker offline)."""
        if self.run_id is None:
            raise RuntimeError("an MLflow call was sent before the run was opened")
        return self.run_id

    def open(self) -> None:
        if self.mode == "disabled":
            return
        self._client = client_for(self.config)
        import mlflow

        mlflow.set_tracking_uri(self.config.uri)  # as before: code after a run reads it from the fluent API

        def start() -> None:
            experiment = self.experiment_id = experiment_id(self._client, self.config.experiment)
            earlier = find_run(self._client, experiment, self.run_uid) if self.resumed else None
            if earlier is not None:  # an attempt stopped before its summary: carry on in its run
                self.run_id = earlier.info.run_id
                self._client.update_run(self.run_id, status="RUNNING")
                return
            self.run_id = create_run(self._client, experiment, self.run_name, self.run_uid, self.config.sweep, self.start_time_ms)
            log.info("MLflow run %s in experiment %r at %s", self.run_id, self.config.experiment, self.config.uri)

        self._send("opening the run", start)

    def log_params(self, params: Mapping[str, Any]) -> None:
        values = {key: str(value) for key, value in params.items()}
        self._params.update(values)
        self._send("logging params", lambda: log_values(self._client, self._open_run_id(), values, {}, {}))

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        values = {key: str(value) for key, value in tags.items() if value is not None}
        self._tags.update(values)
        self._send("setting tags", lambda: log_values(self._client, self._open_run_id(), {}, values, {}))

    def log_metrics(self, metrics: Mapping[str, Any]) -> None:
        values = numeric_metrics(metrics)
        self._metrics.update(values)
        self._send("logging metrics", lambda: log_values(self._client, self._open_run_id(), {}, {}, values))

    def log_artifacts(self, paths: list[Path]) -> None:
        self._artifacts.extend(paths)
        for path in paths:  # `_send` calls at once, so the lambda reads this iteration's path
            self._send(f"uploading {path.name}", lambda: self._client.log_artifact(self._open_run_id(), str(path)))

    def close(self, status: pending.RunStatus) -> None:
        """End the run with `status`; when offline, write everything to `mlflow_pending/`."""
        self._send("ending the run", lambda: self._client.set_terminated(self._open_run_id(), status))
        if self.mode == "online":
            pending.discard(self.output_dir, self.run_uid)  # an earlier attempt's record: this one reached MLflow
        if self.mode != "offline":
            return
        record = pending.PendingRun(
            run_uid=self.run_uid,
            tracking_uri=self.config.uri,
            experiment=self.config.experiment,
            run_name=self.run_name,
            sweep=self.config.sweep,
            run_id=self.run_id,
            reason=self.offline_reason or "",
            status=status,
            start_time_ms=self.start_time_ms,
            end_time_ms=int(time.time() * 1000),
            params=self._params,
            tags={**self._tags, RUN_UID_TAG: self.run_uid},
            metrics=self._metrics,
            artifacts=[pending.record_artifact(self.output_dir, path) for path in self._artifacts if path.exists()],
        )
        pending.write(self.output_dir, record)

    def notice(self, traces_not_logged: int = 0) -> str | None:
        """The one line a run ends with when MLflow missed it, naming the command that uploads it
        (and how many traces MLflow did not get: `harness.sync` does not replay traces)."""
        if self.mode != "offline":
            return None
        traces = f"; {traces_not_logged} traces were not logged (harness.sync does not upload traces)" if traces_not_logged else ""
        return (
            f"mlflow: {self.config.uri} failed {self.offline_reason}{traces}; params, tags, metrics and artifacts are kept in "
            f"{self.output_dir / pending.DIRNAME} - upload them with: python -m harness.sync {self.output_dir}"
        )


@contextmanager
def tracked_run(config: TrackingConfig, run_name: str, output_dir: Path, run_uid: str | None = None) -> Iterator[TrackedRun]:
    """An MLflow run that ends FINISHED on success, FAILED when the body raises, KILLED when interrupted.

    `run_uid` names an earlier attempt of the same run to continue (its MLflow run is reopened)."""
    tracked = TrackedRun(config, run_name, output_dir, run_uid)
    tracked.open()
    try:
        yield tracked
    except Exception:
        tracked.close("FAILED")
        raise
    except BaseException:
        tracked.close("KILLED")
        raise
    tracked.close("FINISHED")
