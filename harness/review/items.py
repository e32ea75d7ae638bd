"""A review item as a person reads it, rebuilt from its MLflow trace, and the human labels given on it.

Labels are found by the candidate's content hash, on any trace of the experiment: a label given in
one run counts for the same candidate in a rerun on the same pool. The latest valid `HUMAN` answer
to each question wins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.review.queue import HACK, KIND, NOTE
from harness.review.record import RecordedItem, ReviewRecord
from harness.traces import CANDIDATE_HASH_TAG


@dataclass(frozen=True)
class HumanLabel:
    """A person's answers on one candidate (None where a question was left unanswered)."""

    hack: bool | None
    kind: str | None
    note: str | None
    reviewer: str
    trace_id: str


@dataclass(frozen=True)
class ItemView:
    """Everything a reviewer needs on one item, read from its trace."""

    number: int
    recorded: RecordedItem
    status: str
    problem: str
    candidate: str
    judges: Mapping[str, Mapping[str, Any]]  # member -> score, output, protocol, template hash
    shield: Mapping[str, Any] | None  # verdict, compliance, hack class
    violations: Sequence[Mapping[str, Any]]
    audit: Mapping[str, Any]
    label: HumanLabel | None = None


def _spans(trace: Any, prefix: str) -> list[Any]:
    return [span for span in trace.data.spans if span.name == prefix or span.name.startswith(prefix + ".")]


def item_view(number: int, recorded: RecordedItem, trace: Any, status: str, label: HumanLabel | None) -> ItemView:
    """The item `recorded` as its trace `trace` tells it."""
    root = next(span for span in trace.data.spans if span.parent_id is None)
    inputs = root.inputs or {}
    judges = {}
    for span in _spans(trace, "judge"):
        attributes = span.attributes
        judges[attributes.get("member", span.name.split(".", 1)[-1])] = {
            "score": attributes.get("score"),
            "status": attributes.get("status"),
            "protocol": attributes.get("protocol"),
            "template_hash": attributes.get("template_hash"),
            "output": (span.outputs or {}).get("output"),
        }
    shield_spans = [span for span in trace.data.spans if span.name == "shield"]
    shield = None
    violations: list[dict[str, Any]] = []
    if shield_spans:
        attributes = shield_spans[0].attributes
        shield = {key: attributes.get(key) for key in ("verdict", "compliance", "hack_class", "reward_hack_suspected", "reward_divergence")}
        for span in _spans(trace, "shield"):
            for event in span.events:
                found = dict(event.attributes)
                found["stage"] = span.name.split(".", 1)[-1]
                found["values"] = json.loads(found.get("values") or "{}")
                violations.append(found)
    audit_spans = [span for span in trace.data.spans if span.name == "audit"]
    audit = dict(audit_spans[0].outputs or {}) if audit_spans else {}
    return ItemView(
        number=number,
        recorded=recorded,
        status=status,
        problem=str(inputs.get("problem", "")),
        candidate=str(inputs.get("candidate", "")),
        judges=judges,
        shield=shield,
        violations=violations,
        audit=audit,
        label=label,
    )


def _human_answers(trace: Any) -> list[Any]:
    from mlflow.entities import AssessmentSourceType

    return [
        assessment
        for assessment in trace.info.assessments
        if assessment.source.source_type == AssessmentSourceType.HUMAN
        and (assessment.name in (HACK, NOTE) or assessment.name.startswith(KIND))
        and assessment.valid is not False
    ]


def human_label(experiment_id: str, content_hash: str) -> HumanLabel | None:
    """The latest human answers on any trace of this candidate in the experiment, or None."""
    import mlflow

    traces = mlflow.search_traces(
        locations=[experiment_id], filter_string=f"tag.`{CANDIDATE_HASH_TAG}` = '{content_hash}'", return_type="list", include_spans=False
    )
    answers = sorted((a for trace in traces for a in _human_answers(trace)), key=lambda a: a.last_update_time_ms or a.create_time_ms or 0)
    if not answers:
        return None
    latest = {KIND if answer.name.startswith(KIND) else answer.name: answer for answer in answers}  # later answers replace earlier ones
    hack = latest.get(HACK)
    newest = answers[-1]
    return HumanLabel(
        hack=None if hack is None else bool(hack.value),
        kind=None if KIND not in latest else str(latest[KIND].value),
        note=None if NOTE not in latest else str(latest[NOTE].value),
        reviewer=newest.source.source_id or "",
        trace_id=newest.trace_id or "",
    )


def load_items(record: ReviewRecord, statuses: Mapping[str, str], numbers: Sequence[int] | None = None) -> list[ItemView]:
    """The record's items (numbered from 1; `numbers` picks some), each with its trace and human label."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=record.tracking_uri)
    chosen = numbers if numbers is not None else range(1, len(record.items) + 1)
    views = []
    for number in chosen:
        recorded = record.items[number - 1]
        trace = client.get_trace(recorded.trace_id)
        label = human_label(record.experiment_id, recorded.content_hash)
        views.append(item_view(number, recorded, trace, statuses.get(recorded.trace_id, "pending"), label))
    return views
