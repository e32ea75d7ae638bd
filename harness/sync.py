"""`python -m harness.sync <run_dir>...`: upload runs that MLflow missed.

A run whose tracking server was unreachable keeps what it would have logged in
`<run_dir>/mlflow_pending/run.json` (see `harness.pending`). This uploads it to the recorded
tracking URI (or `--tracking-uri`): into the run the server already has for it (created before a
midway outage, found by its `harness.run_uid` tag), else into a new run under the same sweep parent.
The run is marked `harness.synced` last, so syncing again finds it and changes nothing. A sweep
directory syncs every run directory below it that has a record.

Artifacts are uploaded only when each file still has the SHA-256 the run recorded: a file edited
since the run is refused (exit 2), never uploaded as if the run had written it.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from harness import pending
from harness.config import TrackingConfig
from harness.core import HarnessError, file_sha256
from harness.tracking import (
    SYNCED_TAG,
    client_for,
    create_run,
    experiment_id,
    failure_gist,
    find_run,
    log_values,
    tracking_failures,
)


def _checked_artifacts(run_dir: Path, record: pending.PendingRun) -> list[Path]:
    paths = []
    for artifact in record.artifacts:
        path = run_dir / artifact.path
        if not path.is_file():
            raise HarnessError(f"{path}: recorded as an artifact of the run, now missing")
        if file_sha256(path) != artifact.sha256:
            raise HarnessError(f"{path}: changed since the run (SHA-256 differs from {pending.DIRNAME}/{pending.FILENAME}); not uploading it")
        paths.append(path)
    return paths


def sync_run(run_dir: Path, tracking_uri: str | None = None) -> tuple[str, bool]:
    """Upload one run directory's record; returns the MLflow run id and whether anything was sent."""
    record = pending.read(run_dir)
    artifacts = _checked_artifacts(run_dir, record)
    config = replace(TrackingConfig(), uri=tracking_uri or record.tracking_uri, experiment=record.experiment)
    client = client_for(config)
    try:
        experiment = experiment_id(client, record.experiment)
        existing = find_run(client, experiment, record.run_uid)
        if existing is not None and SYNCED_TAG in existing.data.tags:
            return existing.info.run_id, False
        run_id = existing.info.run_id if existing is not None else create_run(
            client, experiment, record.run_name, record.run_uid, record.sweep, record.start_time_ms
        )
        log_values(client, run_id, record.params, record.tags, record.metrics)
        for path in artifacts:
            client.log_artifact(run_id, str(path))
        client.set_tag(run_id, SYNCED_TAG, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        client.set_terminated(run_id, record.status, end_time=record.end_time_ms)
    except tracking_failures() as error:
        raise HarnessError(f"cannot upload {run_dir} to MLflow at {config.uri}: {failure_gist(error)}", exit_code=1) from error
    return run_id, True


def _run_dirs(path: Path) -> list[Path]:
    """The run directory itself, or every run directory with a record below a sweep directory."""
    if (path / pending.DIRNAME / pending.FILENAME).exists():
        return [path]
    below = sorted(record.parent.parent for record in path.glob(f"**/{pending.DIRNAME}/{pending.FILENAME}"))
    return below or [path]  # nothing below: let `pending.read` say what is missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.sync", description=__doc__.splitlines()[0])
    parser.add_argument("run_dirs", nargs="+", type=Path, help="run directories (or sweep directories holding them)")
    parser.add_argument("--tracking-uri", help="upload here instead of the tracking URI the run recorded")
    args = parser.parse_args(argv)
    try:
        for run_dir in [found for path in args.run_dirs for found in _run_dirs(path)]:
            run_id, sent = sync_run(run_dir, args.tracking_uri)
            print(f"{run_dir}: {'uploaded as' if sent else 'already uploaded as'} MLflow run {run_id}")
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
