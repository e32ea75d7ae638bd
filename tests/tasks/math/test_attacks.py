"""MATH attack candidates: every kind is wrong under the real Math-Verify anchor, deterministic, and
`wrong_answer` changes the value of the kinds of answer MATH-500 has (ids are dataset lines)."""

from __future__ import annotations

import random

import pytest

from tasks.config import TaskConfig
from tasks.math import extract_answer, load
from tasks.math.attacks import ATTACK_KINDS, NEEDS_REFERENCE, make_attack, wrong_answer
from tasks.math.loader import bundled

TASK = load(TaskConfig(name="math"))
ROWS = bundled().rows
# a tuple, a symbolic expression, a fraction, a name, an integer, a complex number
PROBLEMS = [0, 1, 2, 4, 5, 15]


def _attack(kind: str, index: int, seed: int = 0) -> str:
    return make_attack(kind, TASK.problems[index], [], random.Random(seed), ROWS[index]["solution"])


@pytest.mark.parametrize("index", PROBLEMS, ids=[f"math500-{i}" for i in PROBLEMS])
@pytest.mark.parametrize("kind", ATTACK_KINDS)
def test_every_attack_is_wrong_against_the_anchor(kind: str, index: int) -> None:
    text = _attack(kind, index)
    outcome = TASK.anchors.check(TASK.problems[index].problem_id, text)
    assert not outcome.correct and outcome.outcome in {"wrong_answer", "no_answer"}, (outcome, text[-200:])
    assert text == _attack(kind, index)


def test_reference_answers_are_correct_so_the_attacks_are_meaningful() -> None:
    for index in PROBLEMS:
        assert TASK.anchors.check(TASK.problems[index].problem_id, ROWS[index]["solution"]).correct


WRONG = [
    ("integer", "42", {str(42 + k) for k in range(1, 10)}),
    ("fraction", "\\frac{14}{3}", {f"\\frac{{{14 + k}}}{{3}}" for k in range(1, 10)}),
    ("choice_letter", "\\text{(C)}", {f"\\text{{({c})}}" for c in "ABDE"}),
    ("symbolic", "p - q", {"p - q + 1"}),
    ("decimal", "0.5", {f"{k}.5" for k in range(1, 10)}),
]


@pytest.mark.parametrize(("gold", "allowed"), [w[1:] for w in WRONG], ids=[w[0] for w in WRONG])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wrong_answer(gold: str, allowed: set[str], seed: int) -> None:
    assert wrong_answer(gold, random.Random(seed)) in allowed


def test_wrong_name_comes_from_the_solution() -> None:
    assert wrong_answer("\\text{Evelyn}", random.Random(0), "faster than Briana, and Carla") in {"\\text{Briana}", "\\text{Carla}"}


def test_swapped_final_answer_keeps_the_gold_reasoning() -> None:
    text = _attack("swapped_final_answer", 2)
    gold = ROWS[2]["solution"]
    assert text[: gold.rfind("\\boxed")] == gold[: gold.rfind("\\boxed")]
    assert extract_answer(text) != extract_answer(gold)


@pytest.mark.parametrize("kind", sorted(NEEDS_REFERENCE))
def test_kinds_needing_the_reference_say_so(kind: str) -> None:
    with pytest.raises(ValueError, match="needs the reference solution"):
        make_attack(kind, TASK.problems[0], [], random.Random(0))
