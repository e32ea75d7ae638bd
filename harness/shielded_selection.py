"""The shield stage of a run: verify every candidate, shield the scores, pick again, and measure.

The shielded score is `judge score x compliance` (BenchShield, section 5.3). Selection on shielded
scores uses the same seeded tie-break as the unshielded pick, so the two are directly comparable in
one run: `summary.json` reports `shielded.<metric>` beside `<metric>`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.config import ShieldConfig
from harness.core import HarnessError, PublicProblem
from harness.metrics import selection_summary
from harness.selection import CandidateRecord, ProblemResult, pick_best, problem_rng, reselect
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
    options = verify_options(config, seed)
    shielded = []
    for result, problem in zip(results, problems):
        judged = result.selected is not None or any(r.ensemble_score is not None for r in result.candidates)
        records = []
        for record in result.candidates:
            report = task.shield(problem, record.candidate, record.ensemble_score, options)
            # Without a judge every candidate scores 1, so the shielded pick is the most compliant one.
            score = report.compliance if not judged else None if record.ensemble_score is None else record.ensemble_score * report.compliance
            records.append(dataclasses.replace(record, shield=report, shielded_score=score))
        pick = pick_best([r.shielded_score for r in records], problem_rng(seed, problem.problem_id))
        shielded.append(dataclasses.replace(result, candidates=tuple(records), shielded_selected=pick))
    return shielded


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
    kinds = sorted({violation.kind for report in reports for violation in report.violations})
    counts = {kind: sum(any(v.kind == kind for v in report.violations) for report in reports) for kind in kinds}
    return {
        **{f"shield.kinds.{kind}": count for kind, count in counts.items()},
        **{f"shield.kind_rates.{kind}": count / len(reports) for kind, count in counts.items()},
    }
