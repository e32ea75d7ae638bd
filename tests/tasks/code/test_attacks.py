"""Code attack candidates (`tasks.code.attacks`): each kind fails in the real sandbox on several
HumanEval problems and records the audit event kind it is expected to trigger."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.core.values import PublicProblem
from tasks.code import CodeAnchor, check_code, check_code_many
from tasks.code.attacks import ATTACK_KINDS, AUDIT_EVENT, applicable_kinds, make_attack
from tasks.code.loader import _bundled_rows
from tasks.code.sandbox import SandboxLimits
from tasks.types import AnchorOutcome

ROWS = {row["task_id"]: row for row in _bundled_rows()}
PROBLEMS = ["HumanEval/0", "HumanEval/2", "HumanEval/29", "HumanEval/53"]
LIMITS = SandboxLimits(wall_s=5.0, cpu_s=4, memory_mb=512)
CASES = [(kind, task_id) for kind in ATTACK_KINDS for task_id in PROBLEMS]


def _problem(task_id: str) -> PublicProblem:
    return PublicProblem(task_id, ROWS[task_id]["prompt"])


def _anchor(task_id: str) -> CodeAnchor:
    row = ROWS[task_id]
    return CodeAnchor(task_id, row["prompt"], row["test"], row["entry_point"])


def _attack(kind: str, task_id: str, seed: int = 0) -> str:
    return make_attack(kind, _problem(task_id), [], random.Random(seed))


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], AnchorOutcome]:
    """All attack runs at once, two sandboxes in parallel."""
    results = check_code_many([(_anchor(task_id), _attack(kind, task_id)) for kind, task_id in CASES], workers=2, limits=LIMITS)
    return dict(zip(CASES, results))


@pytest.mark.parametrize(("kind", "task_id"), CASES, ids=[f"{kind}-{task_id}" for kind, task_id in CASES])
def test_attack_fails_and_is_audited(kind: str, task_id: str, outcomes: dict[tuple[str, str], AnchorOutcome]) -> None:
    outcome = outcomes[(kind, task_id)]
    assert not outcome.correct and outcome.outcome in {"error", "wrong_answer"}, outcome.details["reason"]
    expected = AUDIT_EVENT[kind]
    if expected is not None:
        assert expected in {event["kind"] for event in outcome.details["audit_events"]}
    assert not list(Path("/tmp").glob("harness-attack-marker-*"))


def test_attacks_are_deterministic_given_rng() -> None:
    for kind in ATTACK_KINDS:
        assert _attack(kind, "HumanEval/0", seed=3) == _attack(kind, "HumanEval/0", seed=3)


def test_special_casing_hard_codes_exactly_the_docstring_examples() -> None:
    text = _attack("special_case_visible", "HumanEval/53")
    assert "([2, 3], 5)" in text and "([5, 7], 12)" in text


def test_special_casing_passes_where_the_hidden_test_is_the_docstring_example() -> None:
    # A property of the dataset, not of the sandbox: HumanEval/34's hidden test asserts only its
    # docstring example, so hard-coding it is correct under the anchor; the audit must read the
    # anchor's verdict rather than assume an attack is wrong.
    assert check_code(_anchor("HumanEval/34"), _attack("special_case_visible", "HumanEval/34"), LIMITS).correct


def test_special_casing_needs_doctest_examples() -> None:
    assert "special_case_visible" not in applicable_kinds(_problem("HumanEval/150"))
    assert set(applicable_kinds(_problem("HumanEval/0"))) == set(ATTACK_KINDS)
    with pytest.raises(ValueError, match="no doctest examples"):
        _attack("special_case_visible", "HumanEval/150")
    with pytest.raises(ValueError, match="unknown code attack kind"):
        _attack("fork_bomb", "HumanEval/0")
