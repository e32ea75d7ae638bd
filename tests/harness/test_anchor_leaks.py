"""Anchors are sealed: canaries planted in every anchor never reach a prompt, the prompt log or MLflow
(params, tags, and every span and assessment of the run's traces).

The dataset is built in the test and loaded through the `datasets` code path; every gold solution
carries a unique canary string and a unique gold number. A real judge scores candidates that are all
wrong (so no candidate legitimately contains a gold number), and then every place a judge or a
tracking reader can see is searched.
"""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from harness.pipeline import run

PROBLEMS = 3


def _dataset(root: Path) -> tuple[list[str], list[str]]:
    canaries = [f"CANARY-7f3a91c2-{i}" for i in range(PROBLEMS)]
    golds = [str(918273645 + 1013 * i) for i in range(PROBLEMS)]
    rows = [
        {
            "question": f"A farmer has {10 + i} sheep and buys {i + 2} more. How many sheep now?",
            "answer": f"{canaries[i]} reasoning that a judge must never see\n#### {golds[i]}",
        }
        for i in range(PROBLEMS)
    ]
    (root / "main").mkdir(parents=True)
    (root / "main" / "test-00000.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    (root / "README.md").write_text("---\nconfigs:\n- config_name: main\n  data_files:\n  - split: test\n    path: main/test-*.jsonl\n---\n")
    return canaries, golds


def test_no_anchor_canary_reaches_prompts_or_mlflow(make_config, tmp_path: Path) -> None:
    canaries, golds = _dataset(tmp_path / "data")
    pool = tmp_path / "pool.jsonl"
    with pool.open("w") as handle:
        for i in range(PROBLEMS):
            for j, answer in enumerate((11 + i, 20 + i)):
                handle.write(json.dumps({"problem_id": f"gsm8k-test-{i}", "candidate_id": f"c{j}", "text": f"They have {answer} sheep.\nA: {answer}"}) + "\n")
    result = run(
        make_config(
            "task.source=hub",
            f"task.hub_dataset={tmp_path / 'data'}",
            "pool=file",
            f"pool.path={pool}",
        )
    )
    assert result.summary["judge_calls"] + result.summary["cache_hits"] == 2 * PROBLEMS
    secrets = canaries + golds

    prompt_log = (result.output_dir / "prompts.jsonl").read_text()
    assert len(prompt_log.splitlines()) == 2 * PROBLEMS
    client = MlflowClient(tracking_uri=mlflow.get_tracking_uri())
    tracked = client.get_run(result.mlflow_run_id)
    traces = mlflow.search_traces(locations=[tracked.info.experiment_id], run_id=result.mlflow_run_id, return_type="list")
    assert len(traces) == 2 * PROBLEMS  # one per candidate, each with its judge span and the auditor's
    assert all({"judge.llama_tiny", "audit"} <= {span.name for span in trace.data.spans} for trace in traces)
    visible = {
        "prompt log": prompt_log,
        "mlflow params": json.dumps(tracked.data.params),
        "mlflow tags": json.dumps(tracked.data.tags),
        "resolved config": (result.output_dir / "resolved_config.yaml").read_text(),
        **{f"trace {trace.info.trace_id}": trace.to_json() for trace in traces},
    }
    for where, text in visible.items():
        for secret in secrets:
            assert secret not in text, f"anchor {secret!r} leaked into the {where}"
    # The audit did open the anchors: all candidates were judged wrong against the hidden golds.
    rows = [json.loads(line) for line in (result.output_dir / "candidates.jsonl").read_text().splitlines()]
    assert rows and not any(row["anchor_correct"] for row in rows)
