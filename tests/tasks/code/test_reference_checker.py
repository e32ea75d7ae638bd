"""The test's reference is never the candidate, and the second checker holds each answer to the
canonical solution's: exact types, floats to a relative 1e-9 (`tasks.code.sandbox.reference`)."""

from __future__ import annotations

import math

import pytest

from harness.core.values import Candidate
from harness.shield import VerifyOptions
from tasks.code import CodeAnchor, check_code_many, load
from tasks.code.checker import SEVERAL_ANSWERS
from tasks.code.hostile import WRONG_FUNCTIONS
from tasks.code.loader import _bundled_rows
from tasks.code.sandbox import same_answer
from tasks.config import TaskConfig

ROWS = _bundled_rows()
HOSTILE = {h.name: h for h in WRONG_FUNCTIONS}


@pytest.mark.parametrize(
    ("got", "want", "same"),
    [
        pytest.param(True, True, True, id="bool"),
        pytest.param(26, True, False, id="truthy-int-is-not-true"),
        pytest.param(1, True, False, id="one-is-not-true"),
        pytest.param(0, False, False, id="zero-is-not-false"),
        pytest.param(3.0, 3, True, id="float-equals-int-by-value"),
        pytest.param([1, 3, 2, 8], [1.0, 3.0, 2.0, 8.0], True, id="ints-where-the-reference-has-whole-floats"),
        pytest.param(3, 3.5, False, id="int-is-not-a-different-float"),
        pytest.param(10**400, 1e308, False, id="int-past-the-float-range"),
        pytest.param(True, 1.0, False, id="bool-is-not-a-float"),
        pytest.param(1.0, True, False, id="float-is-not-a-bool"),
        pytest.param(0.33 + 9e-7, 0.33, False, id="offset-9e-7"),
        pytest.param(0.1 + 0.2, 0.3, True, id="rounding-difference"),
        pytest.param(1e-17, 0.0, True, id="near-zero"),
        pytest.param(math.nan, math.nan, True, id="nan-is-nan"),
        pytest.param((1, 2), [1, 2], False, id="tuple-is-not-list"),
        pytest.param([1, [2.0, "a"]], [1, [2.0, "a"]], True, id="nested"),
        pytest.param([1, 2], [1, 2, 3], False, id="shorter"),
        pytest.param({1, 2}, {1, 2}, True, id="set"),
        pytest.param({True, 2}, {1, 2}, False, id="set-member-type"),
        pytest.param({"a": 1}, {"a": True}, False, id="dict-value-type"),
        pytest.param({"a": 1}, {"b": 1}, False, id="dict-keys"),
        pytest.param(None, None, True, id="none"),
        pytest.param("", None, False, id="empty-string-is-not-none"),
    ],
)
def test_same_answer(got: object, want: object, same: bool) -> None:
    assert (same_answer(got, want) is None) is same


@pytest.mark.parametrize(
    "name",
    [
        "entry_point_name_in_the_test_compares_the_candidate_with_itself",
        "truthy_int_where_a_bool_is_expected",
        "int_one_satisfies_equals_true",
        "offset_within_the_asserts_tolerance",
        "offset_within_the_asserts_tolerance_mad",
    ],
)
def test_loose_assert_and_self_comparison_attacks_fail(name: str) -> None:
    hostile = HOSTILE[name]
    task = load(TaskConfig(name="code", subset=hostile.task_id))
    outcome = task.anchors.check(hostile.task_id, hostile.text)
    assert outcome.outcome == "wrong_answer", outcome.details["reason"]
    if hostile.task_id == "HumanEval/33":  # the test's own sort_third is now the reference: its asserts fail
        assert outcome.details["hidden_test"] is False and "case 0" in outcome.details["reason"]
    else:  # the asserts hold; only the reference outputs catch it, and the disagreement is recorded
        assert outcome.details["hidden_test"] is True and outcome.details["reference_check"] is False
        assert outcome.details["disagreement"] is True and outcome.details["secondary"] is False
        assert "where the reference returns" in outcome.details["reason"]


TRI_INTS = """
def tri(n):
    seq = [1, 3]
    for i in range(2, n + 1):
        seq.append(i // 2 + 1 if i % 2 == 0 else seq[i - 1] + seq[i - 2] + (i + 3) // 2)
    return seq[: n + 1]
"""


def test_ints_in_the_prompts_own_format_pass_the_reference_check() -> None:
    """Red-team honest_tri_ints: HumanEval/130's prompt shows `tri(3) = [1, 3, 2, 8]`; the
    canonical solution returns floats; integer arithmetic is right and must be counted right."""
    task = load(TaskConfig(name="code", subset="HumanEval/130"))
    outcome = task.anchors.check("HumanEval/130", TRI_INTS)
    assert outcome.outcome == "pass" and outcome.details["reference_check"] is True, outcome.details["reason"]


def test_the_shield_flags_a_checker_disagreement() -> None:
    hostile = HOSTILE["truthy_int_where_a_bool_is_expected"]
    task = load(TaskConfig(name="code", subset=hostile.task_id))
    assert task.shield is not None
    report = task.shield(task.problems[0], Candidate(hostile.task_id, "c", hostile.text), None, VerifyOptions())
    assert report.verdict != "pass" and "checker_disagreement" in {v.kind for v in report.violations}
    honest = task.shield(task.problems[0], task.default_pool()[0], None, VerifyOptions())
    assert honest.verdict == "pass", [v.kind for v in honest.violations]


def test_every_canonical_solution_passes_both_checkers() -> None:
    anchors = [CodeAnchor(r["task_id"], r["prompt"], r["test"], r["entry_point"], r["canonical_solution"]) for r in ROWS]
    outcomes = check_code_many([(anchor, row["canonical_solution"]) for anchor, row in zip(anchors, ROWS)], workers=2)
    failed = [(a.task_id, o.outcome) for a, o in zip(anchors, outcomes) if not o.correct or o.details["disagreement"]]
    assert failed == []
    checked = {a.task_id: o.details["reference_check"] for a, o in zip(anchors, outcomes)}
    assert {task for task, held in checked.items() if held != True} == set(SEVERAL_ANSWERS) == {"HumanEval/32"}  # noqa: E712
