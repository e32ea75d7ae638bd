"""`python -m harness.review RUN list|show|label|decline|stats` on a real τ-bench run, against hand counts.

Labels are written the way the MLflow UI writes them (`mlflow.log_feedback`, source HUMAN) and by the
command itself; `stats` must count them exactly, and a rerun on the same pool must find them again
by the candidates' content hashes.
"""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import pytest
from mlflow.entities import AssessmentSource, AssessmentSourceType
from mlflow.tracking import MlflowClient

from harness.pipeline import run
from harness.review.cli import main
from harness.review.queue import HACK
from tests.support.runs import rows

OVERRIDES = ("task=tau_airline", "judge=none", "limit=1", "review.unflagged_items=0")


def _review(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_show_label_decline_and_stats_match_hand_counts(make_config, capsys: pytest.CaptureFixture[str]) -> None:
    first = run(make_config(*OVERRIDES, run="first"))
    record = json.loads((first.output_dir / "review.json").read_text())
    items = record["items"]
    assert len(items) >= 4, "τ-bench task 0's four trials are all flagged by the policy rules"
    verdicts = {row["candidate_id"]: row["shield"]["verdict"] for row in rows(first.output_dir)}
    assert [verdicts[item["candidate_id"]] for item in items[:4]] == ["violation"] * 4

    code, out, _ = _review(capsys, str(first.output_dir), "list")
    assert code == 0 and len(out.splitlines()) == 1 + len(items) and out.count("pending") == len(items)

    code, out, _ = _review(capsys, str(first.output_dir), "show", "1")
    assert code == 0 and "shield: violation" in out and items[0]["candidate_id"] in out
    violation = rows(first.output_dir)[[r["candidate_id"] for r in rows(first.output_dir)].index(items[0]["candidate_id"])]["shield"]["violations"][0]
    assert f"{violation['kind']} at event {violation['event_index']}" in out

    # item 1: a hack (through the API, as the UI writes it); item 2: not a hack (the command); item 3 declined; item 4 pending
    human = AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id="alice")
    mlflow.log_feedback(trace_id=items[0]["trace_id"], name=HACK, value=True, source=human)
    code, out, _ = _review(capsys, str(first.output_dir), "label", "2", "--hack", "no", "--kind", "not a hack", "--note", "policy allows it", "--reviewer", "bob")
    assert code == 0 and "not a hack" in out
    assert _review(capsys, str(first.output_dir), "decline", "3")[0] == 0

    code, out, _ = _review(capsys, "stats", str(first.output_dir), "--json")
    stats = json.loads(out)
    # reviewed: items 1 (hack) and 2 (no hack), both shield violations -> precision 1/2, recall 1/1
    assert (stats["review.reviewed"], stats["review.declined"], stats["review.pending"]) == (2, 1, len(items) - 3)
    assert stats["review.human_hacks"] == 1
    assert stats["review.shield_precision"] == pytest.approx(0.5) and stats["review.shield_recall"] == pytest.approx(1.0)
    logged = MlflowClient(mlflow.get_tracking_uri()).get_run(first.mlflow_run_id).data.metrics
    assert logged["review.shield_precision"] == pytest.approx(0.5) and logged["review.reviewed"] == 2  # harness.compare reads these

    for argv, message in (
        (["label", "99", "--hack", "yes"], "item 99: the run has items 1 to"),
        (["label", "1", "--hack", "yes", "--kind", "telepathy"], "--kind 'telepathy' is not an option"),
    ):
        code, _, err = _review(capsys, str(first.output_dir), *argv)
        assert code == 2 and err.startswith("error: ") and message in err and len(err.splitlines()) == 1

    code, out, _ = _review(capsys, str(first.output_dir), "show", "2")
    assert "human: hack=False kind=not a hack note='policy allows it' by bob" in out

    # a rerun on the same pool: new traces and a new queue, the same candidates, the labels found again
    second = run(make_config(*OVERRIDES, run="second"))
    rerun = json.loads((second.output_dir / "review.json").read_text())
    assert rerun["queue_id"] != record["queue_id"] and [i["content_hash"] for i in rerun["items"]] == [i["content_hash"] for i in items]
    stats = json.loads(_review(capsys, str(second.output_dir), "stats", "--json")[1])
    assert (stats["review.reviewed"], stats["review.declined"], stats["review.pending"]) == (2, 0, len(items) - 2)  # declining is per queue


def test_a_run_without_a_review_record_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _review(capsys, str(tmp_path), "list")
    assert code == 2 and "no review record" in err and len(err.splitlines()) == 1
