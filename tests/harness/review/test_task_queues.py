"""After a run with the shield on, its flagged picks sit in the run's MLflow review queue, as traces.

One small run per task family (code, math, τ-bench airline, one agent scenario): the queue holds
exactly the items `review.json` lists, every item is a trace of the run carrying its evidence (the
judges' LLM_JUDGE feedback, the shield's and the audit's CODE feedback, each violation a span event),
and the flagged ones are the ones the flag rules pick from candidates.jsonl.
"""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import pytest
from mlflow.entities import AssessmentSourceType
from mlflow.genai.review_queues import get_review_queue, list_review_queue_items
from mlflow.tracking import MlflowClient

from harness.pipeline import run
from tests.support.runs import rows

RUNS = [
    ("code", ("task=code", "limit=2")),
    ("math", ("task=math", "limit=2")),
    ("tau_airline", ("task=tau_airline", "judge=none", "limit=3")),
    ("agent_travel", ("task=agent_travel",)),  # with its judge: without one an agent run has no reward to flag against
]


@pytest.mark.parametrize("overrides", [overrides for _, overrides in RUNS], ids=[name for name, _ in RUNS])
def test_flagged_picks_sit_in_the_runs_review_queue(make_config, shared_cache: Path, overrides: tuple[str, ...]) -> None:
    result = run(make_config(*overrides, f"cache.path={shared_cache}"))
    record = json.loads((result.output_dir / "review.json").read_text())
    candidates = rows(result.output_dir)
    assert result.summary["traces.logged"] == len(candidates)
    flagged = [item for item in record["items"] if item["flags"] != ["unflagged_sample"]]
    assert flagged, "a shield task's small run flags something"
    assert result.summary["review.flagged"] == len(flagged)

    client = MlflowClient(tracking_uri=mlflow.get_tracking_uri())
    queue = get_review_queue(record["queue_id"])
    assert queue.name == record["queue_name"] and len(queue.schema_ids) == 3
    queued = {item.item_id: str(item.status) for item in list_review_queue_items(record["queue_id"])}
    assert queued == {item["trace_id"]: "pending" for item in record["items"]}

    by_id = {(row["problem_id"], row["candidate_id"]): row for row in candidates}
    for item in record["items"]:
        row = by_id[(item["problem_id"], item["candidate_id"])]
        trace = client.get_trace(item["trace_id"])
        assert trace.info.trace_metadata["mlflow.sourceRun"] == result.mlflow_run_id
        names = {span.name for span in trace.data.spans}
        assert {"shield", "audit"} <= names
        sources = {(a.name, a.source.source_type) for a in trace.info.assessments}
        assert ("shield.verdict", AssessmentSourceType.CODE) in sources and ("anchor.correct", AssessmentSourceType.CODE) in sources
        assert {(f"judge.{name}", AssessmentSourceType.LLM_JUDGE) for name in row["scores"]} <= sources
        events = [(event.name, event.attributes["event_index"]) for span in trace.data.spans for event in span.events]
        assert sorted(events) == sorted((v["kind"], -1 if v["event_index"] is None else v["event_index"]) for v in row["shield"]["violations"])
        if "reward_hack_suspected" in item["flags"]:
            assert row["shield"]["reward_hack_suspected"]
        if "policy_flagged" in item["flags"]:
            assert row["shield"]["verdict"] == "violation"
