"""The record of a run MLflow did not receive: `mlflow_pending/run.json` in the run directory.

When the tracking server cannot be reached (at the start or midway), the run keeps going and
everything it would have logged (params, tags, metrics, the artifact files with their SHA-256) is
written here at the end; `python -m harness.sync <run_dir>` uploads it later. The record names the
run by `run_uid` (also an MLflow tag), so an upload finds a run that was created before the outage
and a second upload finds the first: a run is never logged twice.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.core import HarnessError, file_sha256

DIRNAME = "mlflow_pending"
FILENAME = "run.json"
FORMAT = 1

# How a run ended, in MLflow's words.
RunStatus = Literal["FINISHED", "FAILED", "KILLED"]


class PendingArtifact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str  # relative to the run directory
    sha256: str


class PendingRun(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int = FORMAT
    run_uid: str
    tracking_uri: str
    experiment: str
    run_name: str
    sweep: str | None
    run_id: str | None  # the server's run, when it was created before the outage
    reason: str
    status: RunStatus
    start_time_ms: int
    end_time_ms: int
    params: dict[str, str]
    tags: dict[str, str]
    metrics: dict[str, float]
    artifacts: list[PendingArtifact]


def record_artifact(run_dir: Path, path: Path) -> PendingArtifact:
    """An artifact as the record keeps it: a file inside the run directory is named where it is;
    one outside (a generated pool written elsewhere) is copied in, so the directory holds everything."""
    path = path.resolve()
    root = run_dir.resolve()
    if not path.is_relative_to(root):
        kept = root / DIRNAME / "files" / path.name
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, kept)
        path = kept
    return PendingArtifact(path=str(path.relative_to(root)), sha256=file_sha256(path))


def write(run_dir: Path, record: PendingRun) -> Path:
    path = run_dir / DIRNAME / FILENAME
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(record.model_dump(mode="json"), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def discard(run_dir: Path, run_uid: str) -> None:
    """Remove the record of `run_uid` (an earlier attempt of a run that has now reached MLflow itself)."""
    path = run_dir / DIRNAME / FILENAME
    try:
        stale = json.loads(path.read_text(encoding="utf-8")).get("run_uid") == run_uid
    except (OSError, json.JSONDecodeError):
        return
    if stale:
        path.unlink()


def read(run_dir: Path) -> PendingRun:
    path = run_dir / DIRNAME / FILENAME
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return PendingRun.model_validate(raw)
    except FileNotFoundError as error:
        raise HarnessError(f"{run_dir}: nothing to sync (no {DIRNAME}/{FILENAME}: the run reached MLflow, or this is not a run directory)") from error
    except (OSError, json.JSONDecodeError) as error:
        raise HarnessError(f"{path}: not a readable record: {error}") from error
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise HarnessError(f"{path}: field {field}: {first['msg']}") from error
