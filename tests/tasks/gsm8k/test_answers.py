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
        pytest.param("ages 5-7 years", None, id="hyphen-is-not-a-sign-and-a-range-is-a-hedge"),
        pytest.param("It took 12-4 = 8 days", "8", id="hyphen-between-numbers-is-not-a-sign"),
        pytest.param("A: 12 then 13 is wrong\nnext line 99", None, id="a-second-value-after-the-marker-is-a-hedge"),
        pytest.param("#### 5\nA: 6", None, id="two-markers-that-disagree-are-a-hedge"),
        pytest.param("The answer is 6.\nA: 6", "6", id="two-markers-that-agree"),
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


# The answer forms of docs/tasks.md ("GSM8K answer forms"), one row each: (text, gold, what is read).
# "hedged" rows are wrong whatever the gold, and carry outcome "hedged".
FORMS = [
    ("lm-eval-strict", "Janet sells 9 eggs for $2 each.\n#### 18", "18", "18"),
    ("lm-eval-strict-commas", "#### 70,000", "70000", "70000"),
    ("lm-eval-cot", "Janet sells 16 - 3 - 4 = 9 eggs. 9 * 2 = 18. The answer is 18.", "18", "18"),
    ("flexible-last-number", "Janet sells 9 eggs for 2 dollars each, so she makes 18 dollars", "18", "18"),
    ("minerva-final-answer", "Final Answer: The final answer is 18. I hope it is correct.", "18", "18"),
    ("markdown-bold", "The answer is **18**.", "18", "18"),
    ("markdown-bold-marker", "**Answer:** 18", "18", "18"),
    ("boxed", "So she makes $\\boxed{18}$ dollars.", "18", "18"),
    ("currency-decimals", "The answer is $18.00", "18", "18"),
    ("percent", "The answer is 18%.", "18", "18"),
    ("unit-word", "The answer is 18 dollars.", "18", "18"),
    ("worked-statement", "The answer is 9 * 2 = 18 dollars.", "18", "18"),
    ("space-thousands", "The answer is 70 000.", "70000", "70000"),
    ("no-break-space-thousands", "The answer is 70\u00a0000.", "70000", "70000"),
    ("scale-word", "The answer is 70 thousand dollars.", "70000", "70000"),
    ("k-suffix", "#### 70k", "70000", "70000"),
    ("en-dash-minus", "The answer is \u201318.", "-18", "-18"),
    ("minus-sign", "#### \u221218", "-18", "-18"),
    ("fullwidth-digits", "The answer is \uff11\uff18.", "18", "18"),
    ("fraction", "The answer is 3/4.", "0.75", "0.75"),
    ("working-in-parentheses", "The answer is 540 (3 * 3 * 60) meters.", "540", "540"),
    ("hedge-parenthesis-or", "The answer is 18 (or 20).", "18", "hedged"),
    ("hedge-or", "The answer is 18 or 20.", "20", "hedged"),
    ("hedge-range-hyphen", "The answer is 18-20.", "18", "hedged"),
    ("hedge-range-to", "The answer is 18 to 20 dollars.", "18", "hedged"),
    ("hedge-between", "The answer is between 18 and 20.", "18", "hedged"),
    ("hedge-plus-minus", "The answer is 18 \u00b1 2.", "18", "hedged"),
    ("hedge-relation", "The answer is 18 = 20.", "20", "hedged"),
    ("hedge-two-markers", "The answer is 18.\n#### 20", "20", "hedged"),
    ("hedge-without-marker", "So she makes 18 or 20 dollars.", "20", "hedged"),
    ("decimal-comma-is-a-list", "The answer is 1,5.", "1.5", "hedged"),
    ("dot-thousands-is-a-decimal", "The answer is 70.000", "70000", "70"),
]


@pytest.mark.parametrize(("text", "gold", "read"), [row[1:] for row in FORMS], ids=[row[0] for row in FORMS])
def test_answer_forms(text: str, gold: str, read: str) -> None:
    from tasks.gsm8k import check

    outcome = check(gold, text)
    if read == "hedged":
        assert (outcome.correct, outcome.extracted_answer, outcome.outcome) == (False, None, "hedged")
        assert len(outcome.details["offered"]) >= 2
    else:
        assert outcome.extracted_answer == read
        assert outcome.correct is (read == gold)


# Each just under the one cap every GSM8K reader has (numbers.MAX_TEXT_CHARS), and one over it.
HOSTILE_ANSWERS = [
    ("a-thousand-markers", "The answer is 18. " * 1_100, "18"),
    ("four-thousand-hashes", "#### " * 3_900, None),
    ("a-digit-run-too-long-to-be-a-number", "#### " + "9" * 19_000, None),
    ("an-or-chain", "The answer is " + "18 or " * 3_000 + "20", None),
    ("unclosed-boxes", "\\boxed{" * 2_500 + "18", "18"),
    ("over-the-cap", "The answer is 18. " * 20_000, None),
]
@pytest.mark.parametrize(("text", "read"), [row[1:] for row in HOSTILE_ANSWERS], ids=[row[0] for row in HOSTILE_ANSWERS])
def test_hostile_answers_get_a_reading_and_the_hedge_report_is_bounded(text: str, read: str | None) -> None:
    from tasks.gsm8k import check

    outcome = check("18", text)
    assert outcome.extracted_answer == read
    assert len(outcome.details.get("offered", ())) <= 10


# The red team's anchor attacks (and a second attack of each class), gold 18 unless given: every one
# must be wrong ("hedged" or unreadable), and every honest spelling right.
STEPS = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = 18 dollars every day.\n"
ATTACKS = [
    # A: the whole final statement is read, never a prefix.
    ("not-18-it-is-20", "The answer is not 18, it is 20."),
    ("less-than", "The answer is less than 18."),
    ("plus", "The answer is 18 + 2."),
    ("superscript", "The answer is 18\u00b2."),
    ("hundred", "The answer is 18 hundred dollars."),
    ("and", "The answer is 18 and 20."),
    ("through", "The answer is 18 through 20."),
    ("about", "The answer is about 18."),
    ("times-word", "#### 18 times 2"),
    # B: an unknown character touching a digit, or a number split, is never read as its prefix.
    ("latex-thousands", "The answer is $\\boxed{18{,}000}$."),
    ("latex-thin-space", "The answer is $\\boxed{18\\,000}$."),
    ("fullwidth-decimal", "The answer is \uff11\uff18\uff0e\uff15."),
    ("arabic-decimal", "The answer is \u0661\u0668\u066b\u0665."),
    ("zero-width-space-in-digits", "The answer is 18\u200b5."),
    ("soft-hyphen-in-digits", "#### 18\u00ad5"),
    ("sixty-one-decimals", "The answer is 18." + "0" * 60 + "1"),
    ("subscript", "The answer is 18\u2085."),
    ("unknown-latex", "The answer is $18\\sqrt{2}$."),
    # D: a value after the committed answer is a hedge.
    ("later-correction", "The answer is 18.\n\nCorrection: I misread the problem; the correct answer is 20."),
    ("later-words", "The answer is 18.\n\nActually no, the answer is twenty."),
    ("later-digits", "#### 18\nOn second thought it is 20."),
    # C: only what a renderer shows is read (tasks/visible.py); the visible text says 20.
    ("html-comment", "She makes 20 dollars.\n<!-- #### 18 -->"),
    ("code-comment", "She makes 20 dollars.\n```python\n# The answer is 18\n```"),
    ("hidden-span", "She makes 20 dollars.\n<span style=\"display:none\">The answer is 18.</span>"),
]


@pytest.mark.parametrize("text", [row[1] for row in ATTACKS], ids=[row[0] for row in ATTACKS])
def test_attacks_on_the_final_statement_are_wrong(text: str) -> None:
    from tasks.gsm8k import check

    assert check("18", STEPS + text).correct is False


HONEST = [
    ("display-on-next-line", "Janet sells 9 eggs.\nThe answer is:\n$$9 \\times 2 = 18$$", "18"),
    ("latex-thousands", "The answer is $\\boxed{18{,}000}$.", "18000"),
    ("latex-thin-space", "The answer is $18\\,000$.", "18000"),
    ("scientific", "The answer is $1.8 \\times 10^4$.", "18000"),
    ("fullwidth-decimal", "The answer is \uff11\uff18\uff0e\uff15.", "18.5"),
    ("arabic-decimal", "The answer is \u0661\u0668\u066b\u0665.", "18.5"),
    ("zero-width-space-is-not-shown", "The answer is 18\u200b5.", "185"),
    ("sixty-decimals-exactly", "The answer is 18." + "0" * 59 + "1", "18." + "0" * 59 + "1"),
    ("text-unit", "The answer is $18\\text{ dollars}$.", "18"),
    ("minerva-ending", "Final Answer: The final answer is $18$. I hope it is correct.", "18"),
    ("later-text-without-a-value", "#### 18\nThat is what she makes.", "18"),
]


@pytest.mark.parametrize(("text", "gold"), [row[1:] for row in HONEST], ids=[row[0] for row in HONEST])
def test_honest_spellings_are_right(text: str, gold: str) -> None:
    from tasks.gsm8k import check

    outcome = check(gold, text)
    assert outcome.correct is True, outcome


def test_over_the_cap_is_too_long() -> None:
    from tasks.gsm8k import check
    from tasks.gsm8k.numbers import MAX_TEXT_CHARS

    assert check("18", "#### 18" + " " * MAX_TEXT_CHARS).outcome == "too_long"
    assert check("18", "#### 18" + " " * (MAX_TEXT_CHARS - 7)).correct is True


def test_the_work_of_a_reading_grows_linearly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Doubling the markers doubles the statements read (each bounded by STATEMENT_CHARS), no more."""
    from tasks.gsm8k import answers

    calls: list[int] = []
    real = answers._statement
    monkeypatch.setattr(answers, "_statement", lambda text: calls.append(len(text)) or real(text))
    counts = []
    for markers in (400, 800):
        calls.clear()
        answers.read_answer("The answer is 1 + 1 " * markers)
        counts.append((len(calls), max(calls)))
    assert counts == [(400, 6), (800, 6)]
