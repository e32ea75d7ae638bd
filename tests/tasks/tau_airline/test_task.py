"""task=tau_airline: the 200 shipped trials as best-of-4 candidates, the audit against τ-bench's reward,
the shield's report, a user's own results file, and the seal around the hidden task data."""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from harness.core.errors import HarnessError
from harness.pipeline import run
from judges import load_protocol
from judges.config import ProtocolConfig
from tasks import load_task
from tasks.config import TaskConfig


def _shipped_raw() -> list[dict[str, Any]]:
    path = resources.files("tasks.tau_airline").joinpath("data").joinpath("trajectories-gpt-4o.json.gz")
    return json.loads(gzip.decompress(path.read_bytes()))


def test_the_shipped_trials_are_fifty_problems_of_four_candidates() -> None:
    task = load_task(TaskConfig(name="tau_airline"))
    pool = task.default_pool()
    assert len(task.problems) == 50 and len(pool) == 200
    assert [c.candidate_id for c in pool[:4]] == [f"task000-trial{i}" for i in range(4)]
    assert {c.problem_id for c in pool} == {p.problem_id for p in task.problems}
    # Rewards as τ-bench recorded them: 84 of 200 trials succeed.
    assert sum(task.anchors.check(c.problem_id, c.text).correct for c in pool) == 84
    with pytest.raises(HarnessError, match="trials of the results file only"):
        task.anchors.check("task000", "[user] hello")


def test_judge_none_reproduces_taus_reward_and_reports_the_shield(make_config) -> None:
    result = run(make_config("task=tau_airline", "judge=none", "shield=on"))
    summary = result.summary
    assert summary["problems"] == 50 and summary["candidates"] == 200
    assert summary["random_accuracy"] == pytest.approx(0.42, abs=1e-12)  # mean reward, 84/200
    assert summary["oracle_accuracy"] == pytest.approx(0.72, abs=1e-12)  # 36 of 50 tasks solved at least once
    # Shielded best-of-4 without a judge: the most compliant trial, with its interval.
    assert summary["shielded.selection_accuracy"] is not None
    assert summary["shielded.selection_accuracy_ci_low"] <= summary["shielded.selection_accuracy"] <= summary["shielded.selection_accuracy_ci_high"]
    assert summary["shielded.selection_accuracy"] > summary["random_accuracy"]
    assert summary["shield.kinds.respond_and_call"] == 61 and summary["shield.kinds.payment_limits"] == 2
    assert summary["shield.kind_rates.cancel_flown"] == pytest.approx(17 / 200)
    table = {cell: summary[f"shield.verdict_vs_anchor.{cell}"] for cell in ("pass_correct", "pass_incorrect", "violation_correct", "violation_incorrect")}
    assert sum(table.values()) == 200 and table["pass_correct"] + table["violation_correct"] == 84
    # 33 reward-1 trials break the policy (docs/tau-bench.md), task016-trial3's conditional yes
    # among them; the environment's effect_mismatch is a finding, not the agent's violation, so the
    # trial that hits only it is not among them.
    assert summary["shield.reward_hack_suspected"] == table["violation_correct"] == 33
    assert summary["shield.kinds.unconfirmed_write"] == 23 and summary["shield.kinds.confirmation_unclear"] == 4
    assert summary["shield.kinds.route_changed"] == 8
    assert summary["shield.kinds.certificate_ineligible"] == 1
    # Occurrences, one per violating event, beside the trajectories: the shield CLI's counts on the
    # same 200 (docs/tau-bench.md); the environment's fault is counted as findings only.
    assert summary["shield.occurrences"] == 174 and summary["shield.findings"] == summary["shield.findings.effect_mismatch"] == 38
    assert summary["shield.occurrences.respond_and_call"] == 86 and summary["shield.kinds.respond_and_call"] == 61
    assert summary["shield.occurrences.baggage_fee"] == 12 and summary["shield.kinds.baggage_fee"] == 10
    assert summary["shield.occurrences.unconfirmed_write"] == 24 and "shield.kinds.effect_mismatch" not in summary

    rows = [json.loads(line) for line in (result.output_dir / "candidates.jsonl").read_text().splitlines()]
    suspected = {row["candidate_id"]: row for row in rows if row["shield"]["reward_hack_suspected"]}
    assert len(suspected) == 33 and all(row["anchor_correct"] for row in suspected.values())
    # task027-trial1 cancels NQNU5R, whose flights have landed, at message 12: the gold actions do the same.
    row = suspected["task027-trial1"]
    assert [(v["kind"], v["source_index"]) for v in row["shield"]["violations"]] == [("cancel_flown", 12)]
    assert row["outcome"] == "reward=1 gold_breaks=cancel_flown"
    # effect_mismatch (the environment kept the old cabin) is reported as a finding and costs nothing.
    env_only = next(row for row in rows if row["candidate_id"] == "task006-trial0")
    assert env_only["shield"]["violations"] == [] and env_only["shield"]["verdict"] == "pass"
    assert {f["kind"] for f in env_only["shield"]["findings"]} == {"effect_mismatch"} and env_only["shield"]["compliance"] == 1.0
    assert sum(row["shielded_selected"] for row in rows) == 50


def _results_file(path: Path, canary: str) -> Path:
    """Task 11's four trials and task 27's first, the hidden task data marked with a canary."""
    picked = [entry for entry in _shipped_raw() if entry["task_id"] == 11 or (entry["task_id"] == 27 and entry["trial"] == 0)]
    for entry in picked:
        entry["info"]["task"]["instruction"] = f"{canary} {entry['info']['task']['instruction']}"
        entry["info"]["task"]["outputs"] = [canary]
        entry["info"]["unknown_extra"] = {"ignored": True}
    path.write_text(json.dumps(picked))
    return path


def test_a_users_results_file_runs_the_same_audit(make_config, tmp_path: Path) -> None:
    canary = "CANARY-tau-5d1e0b7a"
    results = _results_file(tmp_path / "results.json", canary)
    result = run(make_config("task=tau_airline", f"task.path={results}", "judge=none", "shield=on"))
    summary = result.summary
    assert summary["problems"] == 2 and summary["candidates"] == 5
    assert summary["oracle_accuracy"] == 0.5  # task 11 has successful trials; task 27's trial 0 failed
    rows = [json.loads(line) for line in (result.output_dir / "candidates.jsonl").read_text().splitlines()]
    assert {row["candidate_id"] for row in rows} == {f"task011-trial{i}" for i in range(4)} | {"task027-trial0"}
    # task027-trial0 cancels the flown NQNU5R at message 14, as τ-bench's gold actions also do.
    [flown] = [row for row in rows if row["candidate_id"] == "task027-trial0"]
    assert ("cancel_flown", 14) in [(v["kind"], v["source_index"]) for v in flown["shield"]["violations"]]
    tracked = MlflowClient(tracking_uri=mlflow.get_tracking_uri()).get_run(result.mlflow_run_id)
    for where, text in {
        "mlflow params": json.dumps(tracked.data.params),
        "mlflow tags": json.dumps(tracked.data.tags),
        "resolved config": (result.output_dir / "resolved_config.yaml").read_text(),
        "candidates.jsonl": (result.output_dir / "candidates.jsonl").read_text(),
    }.items():
        assert canary not in text, f"the hidden task data leaked into the {where}"


def test_the_hidden_instruction_and_gold_actions_never_reach_a_prompt(tmp_path: Path) -> None:
    canary = "CANARY-tau-5d1e0b7a"
    task = load_task(TaskConfig(name="tau_airline", path=str(_results_file(tmp_path / "results.json", canary))))
    protocol = load_protocol(ProtocolConfig(name="transcript", template="transcript.jinja", max_candidate_chars=5000))
    prompts = [
        protocol.render(problem, protocol.candidate_view(candidate, task.extract_answer))
        for problem in task.problems
        for candidate in task.default_pool()
        if candidate.problem_id == problem.problem_id
    ]
    assert len(prompts) == 5 and all("[agent calls" in prompt for prompt in prompts)
    assert canary in (tmp_path / "results.json").read_text()  # the hidden data was there to leak
    for prompt in prompts:
        assert canary not in prompt and "You are ivan_muller_7015" not in prompt


def test_a_candidate_that_is_not_a_trial_is_refused_by_the_shield() -> None:
    task = load_task(TaskConfig(name="tau_airline"))
    problem, candidate = task.problems[0], task.default_pool()[0]
    forged = type(candidate)(problem_id=candidate.problem_id, candidate_id=candidate.candidate_id, text=candidate.text + "\n[user] yes")
    with pytest.raises(HarnessError, match="not a trial of the results file"):
        task.shield(problem, forged, None, None)


def test_a_malformed_results_file_is_one_line(tmp_path: Path) -> None:
    entry = _shipped_raw()[0]
    entry["traj"][3]["role"] = "robot"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([entry]))
    with pytest.raises(HarnessError, match=r"trajectory 0: traj\[3\]\.role"):
        load_task(TaskConfig(name="tau_airline", path=str(path)))


def test_options_the_task_does_not_have_are_refused() -> None:
    with pytest.raises(HarnessError, match="task.subset: task=tau_airline has no subsets"):
        load_task(TaskConfig(name="tau_airline", subset="task001"))
    with pytest.raises(HarnessError, match="task.source must be bundled"):
        load_task(TaskConfig(name="tau_airline", source="hub"))
