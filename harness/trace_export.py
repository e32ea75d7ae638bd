"""Writing finished traces to the tracking store in batches, and counting only what it acknowledged.

Per batch of `BATCH_TRACES` traces: one `start_trace` per trace (its info, tags, metadata and
assessments: one SQL transaction, or one HTTP request on a tracking server), then ONE `log_spans`
call with every span of the batch (one transaction; one OTLP request to a server). The trace
infos go first so that the store creates each trace from its full info in one insert; spans that
arrive first make MLflow's SQL store create a bare trace and later merge the info into it row by
row, which is what made MLflow's own exporter slow here (docs/review.md, "Cost").

A store without span logging (a `file:` store, or a server backed by one) gets each trace's spans
as the trace's artifact instead, as MLflow's exporter does.

The first failure (the server gone, a refused write) stops the export: the traces not yet written
are dropped, `failure` says why in one line, and `logged` holds exactly the traces whose info and
spans the store acknowledged. urllib3's per-retry warnings are silenced while writing: the retries
are bounded by the tracking client's settings (`tracking.request_retries`, `request_timeout_s`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.tracking import failure_gist, tracking_failures

log = logging.getLogger(__name__)

BATCH_TRACES = 100  # traces per log_spans call: a GSM8K batch is ~300 spans, a shielded one ~900 (a few MB to a server)
_NO_SPAN_LOGGING = "REST OTLP span logging is not supported"  # a server whose store has no spans table


@contextmanager
def _quiet_retries() -> Iterator[None]:
    """urllib3 logs a warning per retry; a failed export ends in one line instead."""
    retries = logging.getLogger("urllib3.connectionpool")
    level = retries.level
    retries.setLevel(logging.ERROR)
    try:
        yield
    finally:
        retries.setLevel(level)


class TraceWriter:
    """Buffers finished traces (`add`) and writes them a batch at a time; `close` writes the rest."""

    def __init__(self, tracking_uri: str, experiment_id: str, batch_traces: int = BATCH_TRACES) -> None:
        from mlflow.tracing.client import TracingClient

        self._client = TracingClient(tracking_uri)
        self._experiment_id = experiment_id
        self._batch_traces = batch_traces
        self._pending: list[Any] = []
        self._spans_in_store = True
        self.logged: list[str] = []
        self.failure: str | None = None

    def add(self, trace: Any) -> None:
        if self.failure is not None:
            return
        self._pending.append(trace)
        if len(self._pending) >= self._batch_traces:
            self.flush()

    def flush(self) -> None:
        batch, self._pending = self._pending, []
        if not batch or self.failure is not None:
            return
        with _quiet_retries():
            try:
                self._write(batch)
            except tracking_failures() as error:
                self.failure = failure_gist(error)
                log.debug("MLflow trace export stopped after %d traces: %s", len(self.logged), error)
                return
        self.logged.extend(trace.info.trace_id for trace in batch)

    def close(self) -> None:
        self.flush()

    def _write(self, batch: list[Any]) -> None:
        from mlflow.exceptions import RestException

        infos = [self._client.start_trace(trace.info) for trace in batch]
        if self._spans_in_store:
            try:
                self._client.log_spans(self._experiment_id, [span for trace in batch for span in trace.data.spans])
                return
            except NotImplementedError:
                self._spans_in_store = False
            except RestException as error:
                if _NO_SPAN_LOGGING not in error.message:
                    raise
                self._spans_in_store = False
        for info, trace in zip(infos, batch):  # MLflow's exporter does the same for such a store
            self._client._upload_trace_data(info, trace.data)
