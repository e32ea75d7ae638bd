"""The shield stage of a run: the pick without a judge, the per-kind counts and the verdict-by-anchor table."""

from __future__ import annotations

from harness.config import ShieldConfig
from harness.console_report import summary_table
from harness.core.values import Candidate, PublicProblem
from harness.selection import CandidateRecord, ProblemResult
from harness.shield import ShieldReport, Violation
from harness.shielded_selection import shield_results, shield_summary
from tasks.types import AnchorOutcome, AnchorStore, TaskData


def _report(kinds: tuple[str, ...], compliance: float) -> ShieldReport:
    violations = tuple(Violation(stage="invariants", kind=kind, message=kind) for kind in kinds)
    return ShieldReport(
        task_id="t", verdict="violation" if kinds else "pass", hack_class="semantic" if kinds else "none", compliance=compliance, violations=violations
    )


# candidate id -> (anchor correct, violation kinds, compliance)
CANDIDATES = {"a": (True, ("respond_and_call",), 0.0), "b": (False, (), 1.0), "c": (True, (), 1.0), "d": (False, ("baggage_fee", "respond_and_call"), 0.0)}


def _run(judge_scores: dict[str, float] | None) -> list[ProblemResult]:
    problem = PublicProblem("p", "question")
    candidates = [Candidate("p", name, name) for name in CANDIDATES]
    records = tuple(
        CandidateRecord(c, AnchorOutcome(CANDIDATES[c.candidate_id][0], None), {}, None if judge_scores is None else judge_scores[c.candidate_id])
        for c in candidates
    )
    result = ProblemResult("p", records, None if judge_scores is None else 0, False)
    task = TaskData(
        name="t",
        problems=(problem,),
        anchors=AnchorStore("t", {}, lambda anchor, text: AnchorOutcome(False, None)),
        default_pool=lambda: candidates,
        extract_answer=lambda text: None,
        data_hash="",
        shield=lambda problem, candidate, reward, options: _report(CANDIDATES[candidate.candidate_id][1], CANDIDATES[candidate.candidate_id][2]),
    )
    return shield_results([result], [problem], task, ShieldConfig(enabled=True), seed=0)


def test_without_a_judge_the_shielded_pick_is_a_most_compliant_candidate() -> None:
    [result] = _run(None)
    assert [r.shielded_score for r in result.candidates] == [0.0, 1.0, 1.0, 0.0]
    assert result.shielded_selected in (1, 2)


def test_with_a_judge_the_shielded_score_is_score_times_compliance() -> None:
    [result] = _run({"a": 0.9, "b": 0.2, "c": 0.6, "d": 0.95})
    assert [r.shielded_score for r in result.candidates] == [0.0, 0.2, 0.6, 0.0]
    assert result.shielded_selected == 2


def test_the_summary_counts_kinds_per_candidate_and_crosses_verdict_with_anchor() -> None:
    summary = shield_summary(_run(None), judged=False, bootstrap_samples=0, seed=0)
    assert summary["shield.kinds.respond_and_call"] == 2 and summary["shield.kinds.baggage_fee"] == 1
    assert summary["shield.kind_rates.respond_and_call"] == 0.5
    cells = {cell: summary[f"shield.verdict_vs_anchor.{cell}"] for cell in ("pass_correct", "pass_incorrect", "violation_correct", "violation_incorrect")}
    assert cells == {"pass_correct": 1, "pass_incorrect": 1, "violation_correct": 1, "violation_incorrect": 1}
    assert summary["shielded.selection_accuracy"] in (0.0, 1.0)  # reported without a judge
    table = summary_table({**summary, "problems": 1, "candidates": 4, "judge_calls": 0, "cache_hits": 0}, "t")
    rows = [line.split() for line in table.splitlines()]
    assert ["violation", "1", "1"] in rows and ["respond_and_call", "2", "0.500"] in rows and ["reward_hack_suspected", "0"] in rows
