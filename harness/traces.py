"""One MLflow trace per candidate: what each judge was asked and said, what the shield found, what the audit found.

A trace is the record a reviewer reads in the MLflow UI (docs/review.md). Its root span holds the
problem and the candidate; one `judge.<member>` span per judge call (protocol, template hash,
prompt, output, score); one `shield.<stage>` span per stage the shield ran, each violation a span
event (kind, node, expression, values, the offending event's index); and one `audit` span, the
auditor's record (anchor correctness, the task's outcome, the planted attack kind). Assessments sit
on the trace: each judge's score as `Feedback` from `LLM_JUDGE`, the shield's verdict and compliance
and the anchor's correctness from `CODE`.

Anchors stay sealed: the audit span carries the checker's outcome (right or wrong, the answer read
from the candidate), never the ground truth, and nothing an anchor produced enters a judge's span.

Traces are linked to the run (`mlflow.sourceRun`) and tagged with the candidate's content hash, so
a human label given on one run's trace is found again for the same candidate in a rerun on the same
pool. They are built in memory in this process (`harness.trace_build`) and written to the store in
batches (`harness.trace_export`); only traces the store acknowledged count as logged.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core import PublicProblem
from harness.selection import CandidateRecord, ProblemResult
from harness.trace_build import TraceBuilder
from harness.trace_export import TraceWriter
from tasks import AnchorStore

log = logging.getLogger(__name__)

CANDIDATE_HASH_TAG = "harness.candidate_hash"
RUN_UID_TAG = "harness.run_uid"
PROBLEM_TAG = "harness.problem_id"
CANDIDATE_TAG = "harness.candidate_id"
TASK_TAG = "harness.task"
SHIELD_SOURCE = "harness.shield"
AUDIT_SOURCE = "harness.audit"
MAX_TEXT_CHARS = 20_000  # a span input or output longer than this is cut (the run's files keep it whole)


def candidate_hash(problem_id: str, text: str) -> str:
    """The candidate's identity across runs: the SHA-256 of its problem id and its text."""
    return hashlib.sha256(f"{problem_id}\n{text}".encode()).hexdigest()


@dataclass(frozen=True)
class TracedCandidate:
    """Where one candidate's trace is: its position in the run's results and its MLflow trace id."""

    problem_index: int
    candidate_index: int
    problem_id: str
    candidate_id: str
    content_hash: str
    trace_id: str


@dataclass(frozen=True)
class TraceLog:
    """What logging a run's traces came to: the traces the store acknowledged, out of `candidates`;
    `failure` is why the rest were not logged (the store's first error), None when all were."""

    traced: tuple[TracedCandidate, ...]
    candidates: int
    seconds: float
    failure: str | None

    @property
    def not_logged(self) -> int:
        return self.candidates - len(self.traced)


def read_prompts(prompt_log: Path) -> dict[tuple[str, str, str], str]:
    """The prompt each judge was sent, by (judge, problem id, candidate id), from the run's prompts.jsonl."""
    prompts: dict[tuple[str, str, str], str] = {}
    if not prompt_log.exists():
        return prompts
    with prompt_log.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            prompts[(row["judge"], row["problem_id"], row["candidate_id"])] = row["prompt"]
    return prompts


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"... [{len(text) - MAX_TEXT_CHARS} more characters in the run's files]"


def _judge_spans(trace: TraceBuilder, record: CandidateRecord, problem_id: str, prompts: Mapping[tuple[str, str, str], str]) -> None:
    from mlflow.entities import AssessmentError, AssessmentSource, AssessmentSourceType, SpanType

    for member, verdict in record.verdicts.items():
        with trace.span(f"judge.{member}", span_type=SpanType.LLM) as span:
            span.set_inputs({"prompt": _cut(prompts.get((member, problem_id, record.candidate.candidate_id)))})
            span.set_outputs({"output": _cut(verdict.raw_text), "score": verdict.score})
            span.set_attributes(
                {
                    "member": member,
                    "protocol": verdict.protocol,
                    "template_hash": verdict.template_hash,
                    "score": verdict.score,
                    "status": verdict.status,
                    "reason": verdict.reason,
                    "cached": verdict.cached,
                }
            )
            trace.feedback(
                f"judge.{member}",
                verdict.score,
                error=None if verdict.score is not None else AssessmentError(error_code="UNSCORED", error_message=verdict.reason or "unscored"),
                source=AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id=member),
                rationale=_cut(verdict.raw_text),
                metadata={"protocol": verdict.protocol, "template_hash": verdict.template_hash},
                span=span,
            )


def _violation_event(violation: Any) -> Any:
    from mlflow.entities import SpanEvent

    attributes = {
        "kind": violation.kind,
        "message": violation.message,
        "node": violation.node or "",
        "expression": violation.expression or "",
        "values": json.dumps(violation.values, default=str, sort_keys=True),
        "event_index": -1 if violation.event_index is None else violation.event_index,
    }
    if violation.source_index is not None:
        attributes["source_index"] = violation.source_index
    return SpanEvent(name=violation.kind, attributes=attributes)  # type: ignore[abstract]  # MLflow's entity stub marks from_proto abstract


def _shield_spans(trace: TraceBuilder, record: CandidateRecord) -> None:
    from mlflow.entities import AssessmentSource, AssessmentSourceType

    report = record.shield
    if report is None:
        return
    with trace.span("shield") as shield:
        shield.set_attributes(
            {
                "verdict": report.verdict,
                "compliance": report.compliance,
                "hack_class": report.hack_class,
                "reward_hack_suspected": report.reward_hack_suspected,
                "reward_divergence": report.reward_divergence,
                "deep_verified": report.deep_verified,
            }
        )
        shield.set_outputs({"verdict": report.verdict, "compliance": report.compliance, "violations": len(report.violations)})
        for stage in report.stages_run:
            with trace.span(f"shield.{stage}", parent=shield) as span:
                found = [v for v in report.violations if v.stage == stage]
                span.set_attributes({"stage": stage, "timing_ms": report.timings_ms.get(stage, 0.0), "violations": len(found)})
                span.set_outputs({"violations": [v.model_dump(mode="json") for v in found]})
                for violation in found:
                    span.add_event(_violation_event(violation))
        code = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id=SHIELD_SOURCE)
        trace.feedback(
            "shield.verdict",
            report.verdict,
            source=code,
            rationale="; ".join(f"{v.kind}: {v.message}" for v in report.violations[:20]) or None,
            span=shield,
        )
        trace.feedback("shield.compliance", report.compliance, source=code, span=shield)


def _audit_span(trace: TraceBuilder, record: CandidateRecord, attack: str | None) -> None:
    """The auditor's record: what the checker found, never the anchor it checked against."""
    from mlflow.entities import AssessmentSource, AssessmentSourceType

    outcome = record.outcome
    with trace.span("audit") as span:
        found = {
            "anchor_correct": outcome.correct,
            "outcome": outcome.outcome,
            "extracted_answer": outcome.extracted_answer,
            "attack": attack,
            "checker_disagreement": bool(outcome.details.get("disagreement")),
        }
        span.set_outputs(found)
        span.set_attributes({key: value for key, value in found.items() if value is not None})
        trace.feedback(
            "anchor.correct",
            outcome.correct,
            source=AssessmentSource(source_type=AssessmentSourceType.CODE, source_id=AUDIT_SOURCE),
            span=span,
        )


def _evidence(record: CandidateRecord, result: ProblemResult, index: int) -> dict[str, Any]:
    """The root span's output, what the MLflow UI lists beside each item: the judges' scores, the
    pick, and the shield's verdict with each violation and the event it happened at."""
    report = record.shield
    evidence: dict[str, Any] = {
        "judges": {member: verdict.score for member, verdict in record.verdicts.items()},
        "ensemble_score": record.ensemble_score,
        "selected": result.selected == index,
    }
    if report is not None:
        evidence["shield"] = report.verdict
        evidence["compliance"] = report.compliance
        evidence["violations"] = [
            f"{v.kind} at {'event ' + str(v.event_index) if v.event_index is not None else 'the whole trace'}: {v.message}"[:300]
            for v in report.violations[:10]
        ]
        evidence["shielded_selected"] = result.shielded_selected == index
    return evidence


def _build_one(
    problem: PublicProblem,
    result: ProblemResult,
    index: int,
    *,
    task: str,
    run_id: str,
    run_uid: str,
    experiment_id: str,
    prompts: Mapping[tuple[str, str, str], str],
    anchors: AnchorStore[Any],
) -> Any:
    """The candidate's trace, built in memory (an `mlflow.entities.Trace`, not yet written)."""
    record = result.candidates[index]
    candidate = record.candidate
    tags = {
        CANDIDATE_HASH_TAG: candidate_hash(problem.problem_id, candidate.text),
        RUN_UID_TAG: run_uid,
        PROBLEM_TAG: problem.problem_id,
        CANDIDATE_TAG: candidate.candidate_id,
        TASK_TAG: task,
    }
    trace = TraceBuilder(f"{problem.problem_id} / {candidate.candidate_id}", experiment_id=experiment_id, run_id=run_id, tags=tags, span_type="CHAIN")
    trace.root.set_inputs({"problem": _cut(problem.question), "candidate": _cut(candidate.text)})
    trace.root.set_outputs(_evidence(record, result, index))
    _judge_spans(trace, record, problem.problem_id, prompts)
    _shield_spans(trace, record)
    _audit_span(trace, record, anchors.planted_kind(result.problem_id, candidate.candidate_id))
    return trace.finish()


def log_traces(
    problems: Sequence[PublicProblem],
    results: Sequence[ProblemResult],
    *,
    task: str,
    tracking_uri: str,
    run_id: str,
    run_uid: str,
    experiment_id: str,
    prompt_log: Path,
    anchors: AnchorStore[Any],
) -> TraceLog:
    """Build a trace for every candidate of `results` and write them in batches; stops at the store's first failure."""
    started = time.perf_counter()
    prompts = read_prompts(prompt_log)
    writer = TraceWriter(tracking_uri, experiment_id)
    built: dict[str, TracedCandidate] = {}
    for problem_index, (problem, result) in enumerate(zip(problems, results)):
        for index, record in enumerate(result.candidates):
            if writer.failure is not None:
                break
            trace = _build_one(
                problem, result, index, task=task, run_id=run_id, run_uid=run_uid, experiment_id=experiment_id, prompts=prompts, anchors=anchors
            )
            candidate = record.candidate
            built[trace.info.trace_id] = TracedCandidate(
                problem_index, index, problem.problem_id, candidate.candidate_id, candidate_hash(problem.problem_id, candidate.text), trace.info.trace_id
            )
            writer.add(trace)
    writer.close()
    seconds = time.perf_counter() - started
    traced = tuple(built[trace_id] for trace_id in writer.logged)
    candidates = sum(len(result.candidates) for result in results)
    if writer.failure is None:
        log.info("MLflow: %d traces logged in %.1f s", len(traced), seconds)
    return TraceLog(traced=traced, candidates=candidates, seconds=seconds, failure=writer.failure)
