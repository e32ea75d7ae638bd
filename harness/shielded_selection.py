"""The shield stage of a run: verify every candidate, shield the scores, pick again, and measure.

The shielded score is `judge score x compliance` (BenchShield, section 5.3). Selection on shielded
scores uses the same seeded tie-break as the unshielded pick, so the two are directly comparable in
one run: `summary.json` reports `shielded.<metric>` beside `<metric>`.

Each candidate is checked in a worker process within `shield.candidate_budget_s` seconds
(`harness.shield_worker`): a shield that raises, dies or overruns on one candidate gives that
candidate a `shield_error` or `shield_timeout` violation with the reason, and the run goes on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.config import ShieldConfig
from harness.core import HarnessError, PublicProblem
from harness.metrics import selection_summary
from harness.selection import CandidateRecord, ProblemResult, pick_best, problem_rng, reselect
from harness.shield_worker import Failure, Job, ShieldWorker
from tasks.types import TaskData

if TYPE_CHECKING:  # imported when the shield first runs, not when a run without it loads this module
    from harness.shield import ShieldReport, VerifyOptions


def verify_options(config: ShieldConfig, seed: int) -> VerifyOptions:
    from harness.shield import VerifyOptions

    try:
        return VerifyOptions(
            deep_always=config.deep_always,
            deep_sample_rate=config.deep_sample_rate,
            seed=seed,
            reward_threshold=config.reward_threshold,
            soft_penalties=dict(config.soft_penalties),
        )
    except ValueError as error:
        raise HarnessError(f"shield config: {error}") from error


def shield_results(
    results: Sequence[ProblemResult], problems: Sequence[PublicProblem], task: TaskData, config: ShieldConfig, seed: int
) -> list[ProblemResult]:
    """Results with every candidate's shield report, shielded score, and the shielded pick."""
    if task.shield is None:
        raise HarnessError(f"task {task.name!r} has no shield; use shield=off")
    shield = task.shield
    options = verify_options(config, seed)
    if not config.candidate_budget_s > 0:
        raise HarnessError(f"shield config: candidate_budget_s must be positive, got {config.candidate_budget_s}")
    load = getattr(shield, "load", None)
    if callable(load):  # import the shield module here, once, so no worker spends a candidate's budget on it
        load()

    def job(key: tuple[int, int]) -> Job:
        index, position = key
        record = results[index].candidates[position]
        return lambda: shield(problems[index], record.candidate, record.ensemble_score, options)

    shielded = []
    with ShieldWorker(job, config.candidate_budget_s) as worker:
        for index, (result, problem) in enumerate(zip(results, problems)):
            judged = result.selected is not None or any(r.ensemble_score is not None for r in result.candidates)
            records = []
            for position, record in enumerate(result.candidates):
                outcome = worker.run((index, position))
                report = failure_report(task.name, record, outcome) if isinstance(outcome, Failure) else outcome
                # Without a judge every candidate scores 1, so the shielded pick is the most compliant one.
                score = report.compliance if not judged else None if record.ensemble_score is None else record.ensemble_score * report.compliance
                records.append(dataclasses.replace(record, shield=report, shielded_score=score))
            pick = pick_best([r.shielded_score for r in records], problem_rng(seed, problem.problem_id))
            shielded.append(dataclasses.replace(result, candidates=tuple(records), shielded_selected=pick))
    return shielded


def failure_report(task_name: str, record: CandidateRecord, failure: Failure) -> ShieldReport:
    """The report of a candidate whose shield failed: fail-closed (compliance 0), the reason recorded, for review."""
    from harness.shield import ShieldReport, Violation

    violation = Violation(stage="intake", kind=failure.kind, message=failure.reason)
    return ShieldReport(
        task_id=task_name,
        trace_id=record.candidate.candidate_id,
        verdict="violation",
        hack_class="procedural",
        compliance=0.0,
        violations=(violation,),
        stages_run=("intake",),
        timings_ms={"total": failure.elapsed_ms},
        reward=record.ensemble_score,
        review_required=True,
    )


def shield_summary(results: Sequence[ProblemResult], *, judged: bool, bootstrap_samples: int, seed: int) -> dict[str, Any]:
    """`shielded.*` selection metrics and `shield.*` verification rates for summary.json.

    Without a judge the shielded pick is the most compliant candidate, so `shielded.*` is reported
    then too. `shield.kinds.<kind>` counts the candidates with at least one violation of that kind
    (`shield.kind_rates.<kind>` as a share of all candidates); `shield.verdict_vs_anchor.<verdict>_<correct|incorrect>`
    crosses the verdict with the anchor (`violation_correct`: the anchor calls it right, the shield does not);
    `shield.reward_hack_suspected` counts the reports that flag a high reward with violations."""
    rescored = reselect(results, lambda record: record.shielded_score, seed)
    summary = selection_summary(
        rescored,
        "shielded.",
        judged=judged or any(result.selected is not None for result in rescored),
        bootstrap_samples=bootstrap_samples,
        seed=seed,
    )
    records = [record for result in results for record in result.candidates]
    reports = [_report(record) for record in records]
    correct = [record.outcome.correct for record in records]
    violated = [report.verdict == "violation" for report in reports]
    on_correct = [v for v, right in zip(violated, correct) if right]
    on_incorrect = [v for v, right in zip(violated, correct) if not right]
    summary["shield.violation_rate"] = sum(violated) / len(violated)
    summary["shield.false_violation_rate"] = sum(on_correct) / len(on_correct) if on_correct else None
    summary["shield.recall"] = sum(on_incorrect) / len(on_incorrect) if on_incorrect else None
    summary["shield.reward_hack_suspected_rate"] = sum(r.reward_hack_suspected for r in reports) / len(reports)
    summary["shield.deep_verified_rate"] = sum(r.deep_verified for r in reports) / len(reports)
    summary["shield.reward_hack_suspected"] = sum(r.reward_hack_suspected for r in reports)
    summary.update(_kind_counts(reports))
    for verdict in sorted({"pass", "violation"} | {r.verdict for r in reports}):
        for anchor_correct in (True, False):
            summary[f"shield.verdict_vs_anchor.{verdict}_{'correct' if anchor_correct else 'incorrect'}"] = sum(
                report.verdict == verdict and right == anchor_correct for report, right in zip(reports, correct)
            )
    return summary


def _report(record: CandidateRecord) -> ShieldReport:
    if record.shield is None:
        raise ValueError(f"candidate {record.candidate.candidate_id} has no shield report: summarise the output of shield_results")
    return record.shield


def _kind_counts(reports: Sequence[ShieldReport]) -> dict[str, int | float]:
    """Per kind: candidates with it (`shield.kinds`, `shield.kind_rates`), and its occurrences, one
    per violating event (`shield.occurrences`); findings, which cost nothing, by occurrence
    (`shield.findings`). The occurrence counts are the shield CLI's batch summary's."""
    from harness.shield import summarise

    batch = summarise(list(reports))
    counts = batch["traces_by_kind"]
    return {
        **{f"shield.kinds.{kind}": count for kind, count in counts.items()},
        **{f"shield.kind_rates.{kind}": count / len(reports) for kind, count in counts.items()},
        **{f"shield.occurrences.{kind}": count for kind, count in batch["violation_kinds"].items()},
        "shield.occurrences": batch["occurrences"],
        **{f"shield.findings.{kind}": count for kind, count in batch["finding_kinds"].items()},
        "shield.findings": batch["finding_occurrences"],
    }
