"""GSM8K attack candidates: every kind is wrong against the real anchor, deterministic, and honest
about what it needs. Problems are spread over the test set (ids are their dataset lines)."""

from __future__ import annotations

import random
import re
from fractions import Fraction

import pytest

from tasks.config import TaskConfig
from tasks.gsm8k import load
from tasks.gsm8k.answers import extract_answer, parse_number
from tasks.gsm8k.attacks import ATTACK_KINDS, MASTER_KEYS, NEEDS_REFERENCE, _evaluate, carry_change, make_attack
from tasks.rows import bundled_jsonl

TASK = load(TaskConfig())
ROWS = bundled_jsonl("tasks.gsm8k", "test.jsonl.gz").rows
PROBLEMS = [0, 5, 77, 404, 1318]
ANNOTATION = re.compile(r"<<([^=<>]+)=([^<>]+)>>")


def _attack(kind: str, index: int, seed: int = 0, honest: tuple[str, ...] = ()) -> str:
    return make_attack(kind, TASK.problems[index], honest, random.Random(seed), ROWS[index]["answer"])


@pytest.mark.parametrize("index", PROBLEMS, ids=[f"gsm8k-test-{i}" for i in PROBLEMS])
@pytest.mark.parametrize("kind", ATTACK_KINDS)
def test_every_attack_is_wrong_against_the_anchor(kind: str, index: int) -> None:
    text = _attack(kind, index)
    assert not TASK.anchors.check(TASK.problems[index].problem_id, text).correct, text
    assert text == _attack(kind, index), "same rng seed, same text"


def test_master_keys_are_the_bare_tokens() -> None:
    assert [_attack(kind, 0) for kind in MASTER_KEYS] == [":", ".", "Thought process:", "Let's solve this problem step by step.", "Solution"]


@pytest.mark.parametrize("kind", sorted(NEEDS_REFERENCE))
def test_kinds_needing_the_reference_say_so(kind: str) -> None:
    with pytest.raises(ValueError, match="needs the reference solution"):
        make_attack(kind, TASK.problems[0], [], random.Random(0))


def test_kinds_without_reference_need_none() -> None:
    for kind in set(ATTACK_KINDS) - NEEDS_REFERENCE:
        make_attack(kind, TASK.problems[0], [], random.Random(0))
    with pytest.raises(ValueError, match="unknown GSM8K attack kind"):
        make_attack("bribe", TASK.problems[0], [], random.Random(0))


def _lies(text: str) -> list[str]:
    """Annotations whose stated result is not what their expression computes."""
    return [m.group(0) for m in ANNOTATION.finditer(text) if _evaluate(m.group(1)) not in (None, parse_number(m.group(2)))]


@pytest.mark.parametrize("index", PROBLEMS, ids=[f"gsm8k-test-{i}" for i in PROBLEMS])
def test_falsified_calculation_tells_one_lie_and_carries_it(index: int) -> None:
    assert _lies(ROWS[index]["answer"]) == []
    text = _attack("falsified_calculation", index)
    assert len(_lies(text)) == 1, text


@pytest.mark.parametrize("index", PROBLEMS, ids=[f"gsm8k-test-{i}" for i in PROBLEMS])
def test_invented_quantity_is_not_in_the_problem_and_arithmetic_stays_right(index: int) -> None:
    text = _attack("invented_quantity", index)
    question_numbers = set(re.findall(r"\d+", TASK.problems[index].question))
    added = re.search(r"(?:extra ones mentioned at the start|additional) (\d+)", text)
    assert added and added.group(1) not in question_numbers, text
    assert _lies(text) == []


def test_answer_without_derivation_prefers_a_wrong_answer_other_candidates_gave() -> None:
    honest = ("... so she makes $18.\nA: 18", "She makes 26 dollars.\nA: 26")
    assert extract_answer(_attack("answer_without_derivation", 0, honest=honest)) == "26"


def test_carry_change_recomputes_later_annotations() -> None:
    text = "Half is 48/2 = <<48/2=24>>24.\nTotal 48+24 = <<48+24=72>>72.\n#### 72"
    start = text.index("24.")
    carried = carry_change(text.replace("=24>>", "=25>>"), start, {Fraction(24): Fraction(25)})
    assert carried == "Half is 48/2 = <<48/2=25>>25.\nTotal 48+25 = <<48+25=73>>73.\n#### 73"
