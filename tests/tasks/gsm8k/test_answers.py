"""GSM8K answer extraction and exact comparison (rules in tasks/gsm8k/answers.py and docs/tasks.md)."""

from fractions import Fraction

import pytest

from tasks.gsm8k.answers import answers_equal, canonical, extract_answer, parse_number


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("She makes $18 a day.\n#### 18", "18", id="gold-marker"),
        pytest.param("so 9 * 2 = <<9*2=18>>18\nA: 18", "18", id="model-solution-marker"),
        pytest.param("The answer is 42.", "42", id="the-answer-is"),
        pytest.param("the ANSWER IS 7 apples", "7", id="marker-any-case-with-unit"),
        pytest.param("#### 70,000", "70000", id="thousands-commas"),
        pytest.param("A: $1,250.50", "1250.5", id="currency-and-decimals"),
        pytest.param("A: 18.0", "18", id="trailing-point-zero"),
        pytest.param("A: 3/4", "0.75", id="fraction-terminating"),
        pytest.param("A: 1/3", "1/3", id="fraction-repeating"),
        pytest.param("A: 50%", "50", id="percent-sign-dropped"),
        pytest.param("The answer is -5", "-5", id="negative"),
        pytest.param("It costs 12 - 4 = 8 dollars", "8", id="no-marker-last-number"),
        pytest.param("ages 5-7 years", "7", id="hyphen-is-not-a-sign"),
        pytest.param("A: 12 then 13 is wrong\nnext line 99", "12", id="first-number-after-last-marker"),
        pytest.param("#### 5\nA: 6", "6", id="last-marker-wins"),
        pytest.param("no numbers here", None, id="no-answer"),
        pytest.param("A: none\nwe had 3 apples", "3", id="marker-without-number-falls-back"),
        pytest.param("A: €20", "20", id="euro"),
    ],
)
def test_extract_answer(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        pytest.param("18", "18", True, id="same"),
        pytest.param("0.5", "1/2", True, id="decimal-vs-fraction"),
        pytest.param("0.1", "0.10000000000000001", False, id="no-float-equality"),
        pytest.param("18", None, False, id="missing-never-equal"),
        pytest.param(None, None, False, id="both-missing"),
    ],
)
def test_answers_equal(left: str | None, right: str | None, equal: bool) -> None:
    assert answers_equal(left, right) is equal


def test_canonical_is_exact() -> None:
    assert canonical(Fraction(1, 8)) == "0.125"
    assert canonical(Fraction(-7, 1)) == "-7"
    assert parse_number("36/2 apples") == Fraction(18)
