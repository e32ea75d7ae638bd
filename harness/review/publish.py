"""The run's part of review: a trace per candidate, then its flagged items in a review queue.

Called by the pipeline once the shield and the audit are done, inside the run's MLflow run. Traces
need `tracking.traces=on` and a tracking server that answers; the queue needs `review.enabled` and
a store with review queues (a `file:` store has none: one line says so and the run carries on).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.config import RunConfig
from harness.core import PublicProblem
from harness.review import queue as review_queue
from harness.review.flags import UNFLAGGED, ReviewItem, review_items
from harness.review.record import RecordedItem, ReviewRecord, write
from harness.selection import CandidateRecord, ProblemResult
from harness.traces import log_traces
from harness.tracking import TrackedRun, failure_gist, tracking_failures
from tasks import TaskData

log = logging.getLogger(__name__)


def _kinds(results: Sequence[ProblemResult], items: Sequence[ReviewItem], task: TaskData) -> list[str]:
    """Kinds for "Which kind?", most relevant first: those of the flagged items by frequency (their
    violations and planted attacks), then the rest of the run's violations, then the task's attacks."""
    def found(record: CandidateRecord, problem_id: str) -> list[str]:
        kinds = sorted({v.kind for v in record.shield.violations}) if record.shield is not None else []
        planted = task.anchors.planted_kind(problem_id, record.candidate.candidate_id)
        return kinds + ([planted] if planted else [])

    flagged = Counter(
        kind
        for item in items
        if UNFLAGGED not in item.flags
        for kind in found(results[item.problem_index].candidates[item.candidate_index], results[item.problem_index].problem_id)
    )
    everywhere = Counter(kind for result in results for record in result.candidates for kind in found(record, result.problem_id))
    ranked = [kind for kind, _ in sorted(flagged.items(), key=lambda pair: (-pair[1], pair[0]))]
    ranked += [kind for kind, _ in sorted(everywhere.items(), key=lambda pair: (-pair[1], pair[0]))]
    return ranked + list(task.anchors.attack_kinds)


def absolute_uri(uri: str) -> str:
    """`uri` with a relative SQLite path made absolute, so `harness.review` finds the store from anywhere."""
    prefix = "sqlite:///"
    if uri.startswith(prefix) and not uri.startswith(prefix + "/"):
        return prefix + str(Path(uri[len(prefix) :]).resolve())
    return uri


def record_review(
    config: RunConfig,
    task: TaskData,
    problems: Sequence[PublicProblem],
    results: Sequence[ProblemResult],
    tracked: TrackedRun,
    output_dir: Path,
    prompt_log: Path,
) -> tuple[dict[str, Any], list[Path]]:
    """Log the traces and fill the review queue; returns the metrics (`traces.*`, `review.*`) and files written.

    With traces on and MLflow unreachable (before or during the export), the summary says how many
    traces were not logged (`traces.not_logged`); `harness.sync` does not replay them (docs/review.md)."""
    if not config.tracking.traces or tracked.mode == "disabled":
        return {}, []
    if tracked.mode != "online" or tracked.run_id is None or tracked.experiment_id is None:
        if config.review.enabled:
            log.warning("review: no queue for this run (MLflow is not reachable)")
        return {"traces.logged": 0, "traces.not_logged": sum(len(result.candidates) for result in results)}, []
    try:
        return _record(config, task, problems, results, tracked, output_dir, prompt_log)
    except tracking_failures() as error:
        log.warning("review: MLflow failed while filling the review queue (%s); the run's other records are kept", failure_gist(error))
        return {}, []


def _record(
    config: RunConfig,
    task: TaskData,
    problems: Sequence[PublicProblem],
    results: Sequence[ProblemResult],
    tracked: TrackedRun,
    output_dir: Path,
    prompt_log: Path,
) -> tuple[dict[str, Any], list[Path]]:
    run_id, experiment_id = tracked.run_id, tracked.experiment_id
    assert run_id is not None and experiment_id is not None  # record_review checked: the run is online
    logged = log_traces(
        problems, results, task=task.name, tracking_uri=config.tracking.uri, run_id=run_id, run_uid=tracked.run_uid,
        experiment_id=experiment_id, prompt_log=prompt_log, anchors=task.anchors,
    )
    metrics: dict[str, Any] = {"traces.logged": len(logged.traced), "traces.not_logged": logged.not_logged, "traces.seconds": round(logged.seconds, 3)}
    if logged.failure is not None:
        tracked.lost("logging traces", logged.failure)
        if config.review.enabled:
            log.warning("review: no queue for this run (MLflow failed while logging traces)")
        return metrics, []
    if not config.review.enabled:
        return metrics, []
    where = {(t.problem_index, t.candidate_index): t for t in logged.traced}
    items = review_items(
        results,
        threshold=config.judge.threshold,
        task=task.name,
        max_items=config.review.max_items,
        unflagged_items=config.review.unflagged_items,
        seed=config.seed,
    )
    recorded = tuple(
        RecordedItem(
            trace_id=(found := where[(item.problem_index, item.candidate_index)]).trace_id,
            problem_id=found.problem_id,
            candidate_id=found.candidate_id,
            content_hash=found.content_hash,
            flags=item.flags,
        )
        for item in items
    )
    kinds = review_queue.kind_options(_kinds(results, items, task))
    name = review_queue.queue_name(f"{task.name}-{config.judge.name}", run_id)
    kind_schema = review_queue.kind_schema_name(run_id)
    queue_id: str | None = None
    try:
        schema_ids = review_queue.ensure_schemas(experiment_id, kind_schema, kinds)
        queue_id = review_queue.create_queue(experiment_id, name, schema_ids, [item.trace_id for item in recorded])
    except review_queue.UnsupportedStore:
        log.warning("review: the tracking store at %s has no review queues (use sqlite: or a tracking server); %d items are listed in review.json only", config.tracking.uri, len(recorded))
    record = ReviewRecord(
        tracking_uri=absolute_uri(config.tracking.uri),
        experiment_id=experiment_id,
        run_id=run_id,
        task=task.name,
        threshold=config.judge.threshold,
        seed=config.seed,
        queue_id=queue_id,
        queue_name=name,
        kind_schema=kind_schema,
        kinds=tuple(kinds),
        items=recorded,
    )
    if queue_id is not None:
        log.info("review: %d items in MLflow review queue %r (python -m harness.review %s list)", len(recorded), name, output_dir)
    metrics["review.flagged"] = sum(1 for item in items if UNFLAGGED not in item.flags)
    metrics["review.items"] = len(recorded)
    return metrics, [write(output_dir, record)]
