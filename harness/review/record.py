"""`review.json` in the run directory: where the run's traces and review queue are, and why each item is there.

`python -m harness.review RUN ...` reads it to find the queue without searching MLflow; it names no
anchor (the flags are the shield's and the judges' findings, the audit's are on the traces).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.core import HarnessError

FILENAME = "review.json"


class RecordedItem(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    trace_id: str
    problem_id: str
    candidate_id: str
    content_hash: str = Field(pattern=r"^[0-9a-f]{64}$")  # goes into an MLflow search filter: hex only
    flags: tuple[str, ...]


class ReviewRecord(BaseModel):
    """The run's review: its MLflow coordinates, its queue (None when the store has none) and items."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tracking_uri: str
    experiment_id: str
    run_id: str
    task: str
    threshold: float
    seed: int
    queue_id: str | None
    queue_name: str
    kind_schema: str  # the name of this run's "Which kind?" question
    kinds: tuple[str, ...]
    items: tuple[RecordedItem, ...]


def write(output_dir: Path, record: ReviewRecord) -> Path:
    path = output_dir / FILENAME
    path.write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def read(run_dir: Path) -> ReviewRecord:
    """The run's review record; a run without one (review off, or not a run directory) is bad input."""
    path = run_dir / FILENAME
    if not path.is_file():
        raise HarnessError(f"{path}: no review record; run with review=on (and tracking.traces=on) to flag items for review")
    try:
        return ReviewRecord.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise HarnessError(f"{path}: not a review record ({first})") from error
