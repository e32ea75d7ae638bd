"""Traces built in memory and written in batches are ordinary MLflow traces; a batch is one span
request to a tracking server; a server lost between batches leaves `logged` holding exactly what it
stored, with one failure line and no urllib3 retry warnings."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import mlflow
import pytest
from mlflow.entities import AssessmentSource, AssessmentSourceType, SpanType
from mlflow.tracking import MlflowClient

from harness.trace_build import TraceBuilder
from harness.trace_export import TraceWriter

JUDGE = AssessmentSource(source_type=AssessmentSourceType.LLM_JUDGE, source_id="judge-a")
CODE = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id="harness.audit")
TAGS = {"harness.problem_id": "p1", "harness.candidate_id": "c1"}


@pytest.fixture(autouse=True)
def _bounded_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `harness.tracking.client_for` sets for a run (tracking.request_retries=2, request_timeout_s=30)."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "1")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")


def _built(experiment_id: str, run_id: str, name: str = "p1 / c1") -> object:
    trace = TraceBuilder(name, experiment_id=experiment_id, run_id=run_id, tags=TAGS, span_type="CHAIN")
    trace.root.set_inputs({"problem": "2+2?", "candidate": "4"})
    trace.root.set_outputs({"judges": {"judge-a": 0.9}})
    with trace.span("judge.judge-a", span_type=SpanType.LLM) as span:
        span.set_inputs({"prompt": "Is 4 right?"})
        span.set_outputs({"output": "Yes", "score": 0.9})
        span.set_attributes({"member": "judge-a", "score": 0.9})
        trace.feedback("judge.judge-a", 0.9, source=JUDGE, rationale="Yes", metadata={"protocol": "p"}, span=span)
    with trace.span("audit") as span:
        span.set_outputs({"anchor_correct": True})
        trace.feedback("anchor.correct", True, source=CODE, span=span)
    return trace.finish()


def _fluent(experiment_id: str, run_id: str) -> str:
    """The same trace through MLflow's fluent API, as harness.traces wrote it before batching."""
    from mlflow.entities.trace_location import MlflowExperimentLocation

    with mlflow.start_span(name="p1 / c1", span_type="CHAIN", trace_destination=MlflowExperimentLocation(experiment_id=experiment_id), run_id=run_id) as root:
        root.set_inputs({"problem": "2+2?", "candidate": "4"})
        root.set_outputs({"judges": {"judge-a": 0.9}})
        mlflow.update_current_trace(tags=TAGS)
        with mlflow.start_span(name="judge.judge-a", span_type=SpanType.LLM) as span:
            span.set_inputs({"prompt": "Is 4 right?"})
            span.set_outputs({"output": "Yes", "score": 0.9})
            span.set_attributes({"member": "judge-a", "score": 0.9})
            mlflow.log_feedback(trace_id=span.trace_id, name="judge.judge-a", value=0.9, source=JUDGE, rationale="Yes", metadata={"protocol": "p"}, span_id=span.span_id)
        with mlflow.start_span(name="audit") as span:
            span.set_outputs({"anchor_correct": True})
            mlflow.log_feedback(trace_id=span.trace_id, name="anchor.correct", value=True, source=CODE, span_id=span.span_id)
        trace_id = root.trace_id
    mlflow.flush_trace_async_logging()
    return trace_id


def _shape(trace: object) -> dict[str, object]:
    """What a reader of a trace relies on, without ids and times."""
    info, spans = trace.info, trace.data.spans  # type: ignore[attr-defined]
    varying = {"mlflow.trace.sizeBytes", "mlflow.trace.sizeStats"}
    return {
        "metadata": {key: value for key, value in info.trace_metadata.items() if key not in varying},
        "tags": {key: value for key, value in info.tags.items() if key != "mlflow.artifactLocation"},
        "state": info.state,
        "previews": (info.request_preview, info.response_preview),
        "assessments": sorted((a.name, a.source.source_type, a.source.source_id, a.value, a.rationale, a.metadata) for a in info.assessments),
        "assessment_spans": sorted((a.name, next(s.name for s in spans if s.span_id == a.span_id)) for a in info.assessments),
        "spans": sorted((s.name, s.span_type, s.parent_id is None, s.status.status_code, repr(s.inputs), repr(s.outputs),
                         sorted((k, repr(v)) for k, v in s.attributes.items() if k not in {"mlflow.traceRequestId"})) for s in spans),
    }


def test_a_built_trace_reads_back_as_the_fluent_api_writes_it(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
    mlflow.set_tracking_uri(uri)
    client = MlflowClient(uri)
    experiment = client.create_experiment("shape", artifact_location=str(tmp_path / "artifacts"))
    run_id = client.create_run(experiment).info.run_id
    writer = TraceWriter(uri, experiment)
    writer.add(built := _built(experiment, run_id))
    writer.close()
    assert writer.logged == [built.info.trace_id] and writer.failure is None  # type: ignore[attr-defined]
    fluent = client.get_trace(_fluent(experiment, run_id))
    ours = client.get_trace(built.info.trace_id)  # type: ignore[attr-defined]
    assert _shape(ours) == _shape(fluent)
    found = mlflow.search_traces(locations=[experiment], run_id=run_id, filter_string="tags.`harness.problem_id` = 'p1'", return_type="list")
    assert sorted(t.info.trace_id for t in found) == sorted([ours.info.trace_id, fluent.info.trace_id])


def test_a_batch_is_one_span_request_to_a_server(mlflow_server) -> None:
    mlflow_server.start()
    client = MlflowClient(mlflow_server.url)
    experiment = client.create_experiment("batched-export")
    run_id = client.create_run(experiment).info.run_id
    before = mlflow_server.log.read_text().count("POST /v1/traces ")
    writer = TraceWriter(mlflow_server.url, experiment, batch_traces=10)
    traces = [_built(experiment, run_id, f"p{i} / c1") for i in range(25)]
    for trace in traces:
        writer.add(trace)
    writer.close()
    assert writer.failure is None and writer.logged == [t.info.trace_id for t in traces]  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10  # the server's access log line may trail its response
    while mlflow_server.log.read_text().count("POST /v1/traces ") - before < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert mlflow_server.log.read_text().count("POST /v1/traces ") - before == 3  # 25 traces x 3 spans: 3 span requests (10, 10, 5 traces)
    mlflow.set_tracking_uri(mlflow_server.url)
    stored = mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list")
    assert len(stored) == 25
    assert all(sorted(s.name for s in t.data.spans) == sorted(["audit", "judge.judge-a", t.info.tags["mlflow.traceName"]]) for t in stored)
    assert all(sorted(a.name for a in t.info.assessments) == ["anchor.correct", "judge.judge-a"] for t in stored)


def test_a_server_lost_between_batches_keeps_count_of_what_it_stored(mlflow_server, caplog: pytest.LogCaptureFixture) -> None:
    mlflow_server.start()
    client = MlflowClient(mlflow_server.url)
    experiment = client.create_experiment("export-outage")
    run_id = client.create_run(experiment).info.run_id
    writer = TraceWriter(mlflow_server.url, experiment, batch_traces=5)
    first = [_built(experiment, run_id, f"p{i} / c1") for i in range(5)]
    for trace in first:
        writer.add(trace)  # the fifth fills the batch: written now
    mlflow_server.stop(crash=True)
    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        for i in range(5, 12):
            writer.add(_built(experiment, run_id, f"p{i} / c1"))
        writer.close()
    assert time.monotonic() - started < 20  # refused connections, 2 retries: seconds, not minutes
    assert writer.logged == [t.info.trace_id for t in first]  # type: ignore[attr-defined]
    assert writer.failure is not None and "Connection refused" in writer.failure
    assert not [r for r in caplog.records if r.name.startswith("urllib3")]
    mlflow_server.start()
    mlflow.set_tracking_uri(mlflow_server.url)
    stored = mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list")
    assert sorted(t.info.trace_id for t in stored) == sorted(writer.logged)


def test_a_file_store_gets_each_traces_spans_as_its_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `file:` store has no span logging: the writer falls back to the trace's artifact, batch after batch."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = f"file://{tmp_path / 'mlruns'}"
    client = MlflowClient(uri)
    experiment = client.create_experiment("file-store")
    run_id = client.create_run(experiment).info.run_id
    writer = TraceWriter(uri, experiment, batch_traces=2)
    for i in range(3):
        writer.add(_built(experiment, run_id, f"p{i} / c1"))
    writer.close()
    assert writer.failure is None and len(writer.logged) == 3
    mlflow.set_tracking_uri(uri)
    stored = mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list")
    assert sorted(sorted(s.name for s in t.data.spans) for t in stored) == [["audit", "judge.judge-a", f"p{i} / c1"] for i in range(3)]
    assert all(len(t.info.assessments) == 2 for t in stored)
