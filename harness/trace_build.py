"""One MLflow trace assembled in memory, so that many can be written to the store in one batch.

MLflow's fluent API (`mlflow.start_span`) hands every finished span to its exporter, which writes
each span and then the trace in their own store transactions (one HTTP request each on a server).
A `TraceBuilder` makes the same objects without exporting anything: MLflow's own span entity
(`LiveSpan`, which encodes inputs, outputs, attributes and events exactly as the fluent API does)
over a span of a private OpenTelemetry tracer that has no processor, and a `TraceInfo` with the
metadata and tags MLflow's span processor gives a trace (schema version, source run, the process's
environment metadata, the trace name, the request and response previews, the size statistics).
Assessments are attached to the trace info, as `mlflow.log_feedback` does for a trace in progress,
so they are stored with it. `harness.trace_export` writes the finished traces.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any


@functools.cache
def _tracer() -> Any:
    """An OpenTelemetry tracer of its own: no span processor, so a span it ends goes nowhere. Its
    resource is empty: MLflow's store keeps a span's resource attributes as trace tags, and the
    fluent API's spans carry none."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    return TracerProvider(resource=Resource.get_empty()).get_tracer("harness.traces")


@functools.cache
def _environment_metadata() -> dict[str, str]:
    """What MLflow's span processor records of the process on every trace (user, source, git), resolved once."""
    from mlflow.tracing.utils.environment import resolve_env_metadata

    return dict(resolve_env_metadata())


class TraceBuilder:
    """A trace in the making: a root span, child spans under it, and assessments.

    Use `span` for each child (a context manager that ends the span), `feedback` for an assessment,
    then `finish` once: it ends the root and returns the `mlflow.entities.Trace`.
    """

    def __init__(self, name: str, *, experiment_id: str, run_id: str, tags: Mapping[str, str], span_type: str) -> None:
        from mlflow.entities import LiveSpan
        from mlflow.tracing.constant import SpanAttributeKey
        from mlflow.tracing.utils import generate_trace_id_v3
        from opentelemetry.context import Context

        otel_root = _tracer().start_span(name, context=Context())  # an empty context: never a child of an active span
        self.trace_id: str = generate_trace_id_v3(otel_root)
        self.root = LiveSpan(otel_root, self.trace_id, span_type)
        self._otel = {self.root.span_id: otel_root}  # each LiveSpan's OpenTelemetry span, by span id
        self.root.set_attribute(SpanAttributeKey.EXPERIMENT_ID, experiment_id)
        self._experiment_id = experiment_id
        self._run_id = run_id
        self._name = name
        self._tags = dict(tags)
        self._spans: list[Any] = [self.root]
        self._assessments: list[Any] = []

    @contextmanager
    def span(self, name: str, *, span_type: str = "UNKNOWN", parent: Any = None) -> Iterator[Any]:
        """A child of `parent` (default: the root), ended when the block exits."""
        from mlflow.entities import LiveSpan
        from opentelemetry import trace

        above = self._otel[(parent or self.root).span_id]
        otel_span = _tracer().start_span(name, context=trace.set_span_in_context(above))
        span = LiveSpan(otel_span, self.trace_id, span_type)
        self._otel[span.span_id] = otel_span
        self._spans.append(span)
        try:
            yield span
        finally:
            span.end()

    def feedback(self, name: str, value: Any, *, source: Any, span: Any, rationale: str | None = None,
                 metadata: Mapping[str, str] | None = None, error: Any = None) -> None:
        """A `Feedback` assessment on `span` of this trace (what `mlflow.log_feedback` builds)."""
        from mlflow.entities import Feedback

        assessment = Feedback(name=name, value=value, error=error, source=source, rationale=rationale,
                              metadata=dict(metadata) if metadata else None, span_id=span.span_id)
        assessment.trace_id = self.trace_id
        self._assessments.append(assessment)

    def finish(self) -> Any:
        """End the root span and return the trace: its info as MLflow's span processor fills it, its spans immutable."""
        from mlflow.entities import Trace, TraceData, TraceInfo, TraceLocation, TraceState
        from mlflow.tracing.constant import TRACE_SCHEMA_VERSION, TRACE_SCHEMA_VERSION_KEY, SpanAttributeKey, TraceMetadataKey, TraceTagKey
        from mlflow.tracing.utils import add_size_stats_to_trace_metadata
        from mlflow.tracing.utils.truncation import set_request_response_preview

        self.root.end()
        start_ns, end_ns = self.root.start_time_ns, self.root.end_time_ns or time.time_ns()
        root_attributes = self._otel[self.root.span_id].attributes or {}  # JSON text, as MLflow's processor reads them
        metadata = {
            **_environment_metadata(),
            TRACE_SCHEMA_VERSION_KEY: str(TRACE_SCHEMA_VERSION),
            TraceMetadataKey.SOURCE_RUN: self._run_id,
            TraceMetadataKey.INPUTS: _metadata_preview(root_attributes.get(SpanAttributeKey.INPUTS)),
            TraceMetadataKey.OUTPUTS: _metadata_preview(root_attributes.get(SpanAttributeKey.OUTPUTS)),
        }
        info = TraceInfo(
            trace_id=self.trace_id,
            trace_location=TraceLocation.from_experiment_id(self._experiment_id),
            request_time=start_ns // 1_000_000,
            execution_duration=(end_ns - start_ns) // 1_000_000,
            state=TraceState.OK,
            trace_metadata=metadata,
            tags={**self._tags, TraceTagKey.TRACE_NAME: self._name},
            assessments=list(self._assessments),
        )
        data = TraceData(spans=[span.to_immutable_span() for span in self._spans])
        set_request_response_preview(info, data)
        trace = Trace(info, data)
        add_size_stats_to_trace_metadata(trace)
        return trace


def _metadata_preview(text: Any) -> str:
    """The root span's inputs or outputs (JSON text) as the trace's metadata holds them, cut as MLflow's processor cuts them."""
    from mlflow.tracing.constant import MAX_CHARS_IN_TRACE_INFO_METADATA, TRUNCATION_SUFFIX

    if not text:
        return ""
    text = str(text)
    if len(text) > MAX_CHARS_IN_TRACE_INFO_METADATA:
        text = text[: MAX_CHARS_IN_TRACE_INFO_METADATA - len(TRUNCATION_SUFFIX)] + TRUNCATION_SUFFIX
    return text
