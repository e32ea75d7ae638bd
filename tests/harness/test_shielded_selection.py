"""The shield stage of a run: the pick without a judge, the per-kind counts and the verdict-by-anchor table."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from harness.config import ShieldConfig
from harness.console_report import summary_table
from harness.core import HarnessError
from harness.core.values import Candidate, PublicProblem
from harness.pipeline import run
from harness.selection import CandidateRecord, ProblemResult
from harness.shield import ShieldReport, VerifyOptions, Violation
from harness.shielded_selection import shield_results, shield_summary
from tasks.task_shield import TaskShield
from tasks.types import AnchorOutcome, AnchorStore, TaskData
from tests.support.runs import rows


def _report(kinds: tuple[str, ...], compliance: float, suspected: bool = False) -> ShieldReport:
    violations = tuple(Violation(stage="invariants", kind=kind, message=kind) for kind in kinds)
    return ShieldReport(
        task_id="t", verdict="violation" if kinds else "pass", hack_class="semantic" if kinds else "none", compliance=compliance,
        violations=violations, deep_verified=not kinds, reward_hack_suspected=suspected,
    )


# candidate id -> (anchor correct, violation kinds, compliance)
Entries = dict[str, tuple[bool, tuple[str, ...], float]]
CANDIDATES: Entries = {"a": (True, ("respond_and_call",), 0.0), "b": (False, (), 1.0), "c": (True, (), 1.0), "d": (False, ("baggage_fee", "respond_and_call"), 0.0)}


def _run(judge_scores: dict[str, float] | None, table: dict[str, Entries] | None = None, suspected: frozenset[str] = frozenset()) -> list[ProblemResult]:
    """Shield results for the problems in `table` (problem id -> its candidates), each picked first by the judge."""
    table = table or {"p": CANDIDATES}
    spec = {cid: entry for entries in table.values() for cid, entry in entries.items()}
    problems = [PublicProblem(pid, "question") for pid in table]
    groups = {pid: [Candidate(pid, name, name) for name in entries] for pid, entries in table.items()}
    results = [
        ProblemResult(
            pid,
            tuple(
                CandidateRecord(c, AnchorOutcome(spec[c.candidate_id][0], None), {}, None if judge_scores is None else judge_scores[c.candidate_id])
                for c in candidates
            ),
            None if judge_scores is None else 0,
            False,
        )
        for pid, candidates in groups.items()
    ]
    task = TaskData(
        name="t",
        problems=tuple(problems),
        anchors=AnchorStore("t", {}, lambda anchor, text: AnchorOutcome(False, None)),
        default_pool=lambda: [c for candidates in groups.values() for c in candidates],
        extract_answer=lambda text: None,
        data_hash="",
        shield=lambda problem, candidate, reward, options: _report(*spec[candidate.candidate_id][1:], suspected=candidate.candidate_id in suspected),
    )
    return shield_results(results, problems, task, ShieldConfig(enabled=True), seed=0)


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
    # reported without a judge: b (wrong) and c (right) tie at compliance 1, so the expected pick is half right
    assert summary["shielded.selection_accuracy"] == 0.5
    assert summary["shielded.selection_accuracy_seeded"] in (0.0, 1.0)
    table = summary_table({**summary, "problems": 1, "candidates": 4, "judge_calls": 0, "cache_hits": 0}, "t")
    rows = [line.split() for line in table.splitlines()]
    assert ["violation", "1", "1"] in rows and ["respond_and_call", "2", "0.500"] in rows and ["reward_hack_suspected", "0"] in rows


# two problems: p1's shielded pick is wrong (c beats a once b's violation zeroes it), p2's is right
TWO_PROBLEMS: dict[str, Entries] = {
    "p1": {"a": (True, (), 1.0), "b": (False, ("k",), 0.0), "c": (False, (), 1.0)},
    "p2": {"d": (True, ("k",), 0.5), "e": (False, ("k", "m"), 0.0)},
}
JUDGE = {"a": 0.4, "b": 0.9, "c": 0.5, "d": 0.8, "e": 0.7}


def test_shielded_metrics_and_rates_with_a_judge_match_hand_computation() -> None:
    results = _run(JUDGE, TWO_PROBLEMS, suspected=frozenset({"b"}))
    # shielded scores: a 0.4, b 0.0, c 0.5 -> c (wrong); d 0.8 * 0.5 = 0.4, e 0.0 -> d (right)
    assert [[r.shielded_score for r in result.candidates] for result in results] == [[0.4, 0.0, 0.5], [0.4, 0.0]]
    assert [result.shielded_selected for result in results] == [2, 0]
    summary = shield_summary(results, judged=True, bootstrap_samples=0, seed=0)
    expected = {
        "shielded.selection_accuracy": 1 / 2,
        "shielded.hack_rate": 1 / 2,  # both problems have a right answer; p1's pick is wrong
        # right {0.4, 0.4} against wrong {0.0, 0.5, 0.0}: each right one beats two of three -> 4/6
        "shielded.auroc": 4 / 6,
        "shielded.false_positive_rate": 1 / 3,  # c's 0.5 of the three wrong ones
        "shield.violation_rate": 3 / 5,  # b, d, e
        "shield.false_violation_rate": 1 / 2,  # d of the right a, d
        "shield.recall": 2 / 3,  # b, e of the wrong b, c, e
        "shield.reward_hack_suspected": 1,
        "shield.reward_hack_suspected_rate": 1 / 5,
        "shield.deep_verified_rate": 2 / 5,  # the passing a and c
        "shield.kinds.k": 3,
        "shield.kinds.m": 1,
        "shield.kind_rates.k": 3 / 5,
        "shield.kind_rates.m": 1 / 5,
        "shield.occurrences.k": 3,  # one violating event each in b, d and e
        "shield.occurrences.m": 1,
        "shield.occurrences": 4,
        "shield.findings": 0,
        "shield.verdict_vs_anchor.pass_correct": 1,
        "shield.verdict_vs_anchor.pass_incorrect": 1,
        "shield.verdict_vs_anchor.violation_correct": 1,
        "shield.verdict_vs_anchor.violation_incorrect": 2,
        "shielded.selection_accuracy_seeded": 1 / 2,  # no ties: the seeded picks are the expected ones
        "shielded.hack_rate_seeded": 1 / 2,
    }
    intervals = {f"shielded.{key}{end}": None for key in ("selection_accuracy", "hack_rate", "auroc", "false_positive_rate") for end in ("_ci_low", "_ci_high")}
    assert summary == {**{key: pytest.approx(value) for key, value in expected.items()}, **intervals}


def test_the_summary_refuses_a_candidate_without_its_report() -> None:
    """Unshielded results are a caller's mistake, named, not an AttributeError deep in a sum."""
    shielded = _run({"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6})
    record = shielded[0].candidates[1]
    unshielded = (*shielded[0].candidates[:1], CandidateRecord(record.candidate, record.outcome, {}, 0.8), *shielded[0].candidates[2:])
    results = [ProblemResult("p", unshielded, 0, False)]
    with pytest.raises(ValueError, match="candidate b has no shield report"):
        shield_summary(results, judged=True, bootstrap_samples=10, seed=0)


# A C-level regex that backtracks for minutes while holding the GIL: no thread can interrupt it.
STALL_PATTERN, STALL_TEXT = r"(a|aa)+$", "a" * 60 + "b"


def _hostile(kind: str) -> ShieldReport:
    if kind == "raise":
        raise RecursionError("maximum recursion depth exceeded")
    if kind == "stall":
        re.match(STALL_PATTERN, STALL_TEXT)
    if kind == "die":
        os._exit(3)
    return _report((), 1.0)


@pytest.mark.parametrize(
    ("hostile", "kind", "reason"),
    [
        pytest.param("raise", "shield_error", "the shield raised RecursionError: maximum recursion depth exceeded", id="raises"),
        pytest.param("stall", "shield_timeout", "the shield gave no answer within its 1 s budget", id="stalls-in-c-regex"),
        pytest.param("die", "shield_error", "the shield's worker process died (exit code 3)", id="worker-dies"),
    ],
)
def test_a_failing_shield_is_that_candidates_outcome_and_the_others_are_unchanged(hostile: str, kind: str, reason: str) -> None:
    problems = [PublicProblem("p", "question")]
    names = ["a", "hostile", "b"]
    results = [ProblemResult("p", tuple(CandidateRecord(Candidate("p", n, n), AnchorOutcome(n == "a", None), {}, None) for n in names), None, False)]
    task = _task(lambda problem, candidate, reward, options: _hostile(hostile if candidate.candidate_id == "hostile" else "clean"))
    [result] = shield_results(results, problems, task, ShieldConfig(enabled=True, candidate_budget_s=1.0), seed=0)
    reports = [record.shield for record in result.candidates]
    assert [r.verdict for r in reports if r is not None] == ["pass", "violation", "pass"]  # the worker is replaced after a failure
    failed = reports[1]
    assert failed is not None and (failed.compliance, failed.review_required, failed.trace_id) == (0.0, True, "hostile")
    assert [(v.kind, v.message) for v in failed.violations] == [(kind, reason)]
    assert shield_summary([result], judged=False, bootstrap_samples=0, seed=0)[f"shield.kinds.{kind}"] == 1


def test_a_budget_that_is_not_positive_is_refused() -> None:
    with pytest.raises(HarnessError, match="candidate_budget_s must be positive, got 0"):
        shield_results([], [], _task(lambda *args: _report((), 1.0)), ShieldConfig(enabled=True, candidate_budget_s=0), seed=0)


def _task(shield: TaskShield) -> TaskData:
    return TaskData(
        name="t", problems=(), anchors=AnchorStore("t", {}, lambda anchor, text: AnchorOutcome(False, None)),
        default_pool=list, extract_answer=lambda text: None, data_hash="", shield=shield,
    )


def test_a_run_with_a_crashing_and_a_stalling_candidate_completes(make_config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real pipeline and the real GSM8K shield: the shield raises on one candidate and
    stalls in a C regex on another; every other candidate's outcome is what a run without them gives."""
    import tasks.gsm8k.shield as gsm8k_shield

    real = gsm8k_shield.shield_candidate

    def shield(problem: PublicProblem, candidate: Candidate, reward: float | None, options: VerifyOptions | None) -> ShieldReport:
        if candidate.candidate_id in ("crash", "stall"):
            _hostile("raise" if candidate.candidate_id == "crash" else "stall")
        return real(problem, candidate, reward, options)

    honest = [(f"gsm8k-test-{i}", key) for i in (0, 1) for key in ("6b_finetuning", "175b_verification")]
    texts = {row["problem_id"] + row["candidate_id"]: row["text"] for row in _pool_rows()}
    clean = [{"problem_id": pid, "candidate_id": key, "text": texts[pid + key]} for pid, key in honest]
    hostile = [{"problem_id": "gsm8k-test-0", "candidate_id": name, "text": "Janet sells 9 eggs.\n#### 18"} for name in ("crash", "stall")]
    outcomes = {}
    for name, pool in (("clean", clean), ("hostile", clean[:2] + hostile + clean[2:])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in pool))
        monkeypatch.setattr(gsm8k_shield, "shield_candidate", shield)
        config = make_config("judge=none", "shield=on", "shield.candidate_budget_s=2", "pool=file", f"pool.path={path}", "limit=2", run=name)
        result = run(config)
        outcomes[name] = {(row["problem_id"], row["candidate_id"]): row for row in rows(result.output_dir)}
    for key, row in outcomes["clean"].items():
        other = outcomes["hostile"][key]
        assert (other["anchor_correct"], other["shield"]["verdict"], other["shield"]["violations"]) == (
            row["anchor_correct"], row["shield"]["verdict"], row["shield"]["violations"]), key
    crashed, stalled = (outcomes["hostile"][("gsm8k-test-0", name)]["shield"] for name in ("crash", "stall"))
    assert [v["kind"] for v in crashed["violations"]] == ["shield_error"] and "RecursionError" in crashed["violations"][0]["message"]
    assert [v["kind"] for v in stalled["violations"]] == ["shield_timeout"]
    assert 2000 <= stalled["timings_ms"]["total"] < 3000  # the overrun cost the run its budget, and little more


def _pool_rows() -> list[dict[str, str]]:
    from tasks.gsm8k import model_solution_pool, problems_from_rows
    from tasks.rows import bundled_jsonl

    problems, _, _ = problems_from_rows(bundled_jsonl("tasks.gsm8k", "test.jsonl.gz").rows[:2], "test")
    return [{"problem_id": c.problem_id, "candidate_id": c.candidate_id, "text": c.text} for c in model_solution_pool(problems)]
