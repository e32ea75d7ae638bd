"""The answer-forms table of docs/tasks.md ("MATH-500: answer forms"), one test per row.

Each row is a candidate ending in one answer form, on a real MATH-500 problem (its index in the
bundled data), and the outcome this project gives it. Ids name the row's form and where the case
came from: `minerva` (lm-eval's `minerva_math` few-shot ending), `qwen` (Qwen2.5-Math's
`parser.extract_answer`), `prm800k` (its `grader.grade_answer`), `mathverify` (Math-Verify's
README and tests), `issue18` (the attack report).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tasks.math import CheckPool, check_answer
from tasks.math.checker import MathAnchor
from tasks.math.loader import bundled

ROWS = bundled().rows

FORMS = [
    # boxed
    ("boxed-reference", 2, r"So the sum is $\boxed{\frac{14}{3}}$.", "correct"),
    ("boxed-trailing-period-issue18", 3, r"There are $\boxed{9.}$", "correct"),
    ("boxed-unbraced-qwen", 3, r"There are $\boxed 9$ divisors.", "correct"),
    ("fbox-prm800k", 3, r"\fbox{9}", "correct"),
    # marker lines
    ("minerva-fewshot-ending-minerva", 3, "... so $3 \\cdot 3 = \\boxed{9}.$\nFinal Answer: The final answer is $9$. I hope it is correct.", "correct"),
    ("minerva-marker-only-issue18", 3, "Final Answer: The final answer is $9$. I hope it is correct.", "correct"),
    ("minerva-fraction-minerva", 2, "Final Answer: The final answer is $\\frac{14}{3}$. I hope it is correct.", "correct"),
    ("marker-with-derivation-to-box-reference-32", 32, r"The answer is $3! \times 5! = \boxed{720}$.", "correct"),
    ("marker-number-then-box", 32, r"The answer is 710, i.e. $\boxed{720}$.", "hedged"),
    ("the-answer-is-qwen", 3, "Hence the answer is 9.", "correct"),
    ("final-answer-colon-mathverify", 3, "Final answer: $9$", "correct"),
    ("last-number-only-qwen", 3, "196 = 2^2 7^2, so it has 9", "no_answer"),
    # markdown
    ("bold-answer-issue18", 3, "The answer is **9**.", "correct"),
    ("bold-heading-answer", 3, "**Answer:** $9$", "correct"),
    ("box-in-code-block", 3, "```\n\\boxed{9}\n```\nThe answer is 8.", "wrong_answer"),
    ("box-in-html-comment-issue18", 3, "The answer is 8. <!-- \\boxed{9} -->", "wrong_answer"),
    ("box-in-quote-issue18", 3, "> My first try gave \\boxed{9}.\n\nThe answer is 8.", "wrong_answer"),
    # units
    ("unit-missing-forgiven", 301, r"$\boxed{5.4}$", "correct"),
    ("unit-same", 301, r"$\boxed{5.4 \text{ cents}}$", "correct"),
    ("unit-dollars-for-cents-issue18", 301, r"$\boxed{5.4 \text{ dollars}}$", "wrong_unit"),
    ("unit-cents-for-dollars-issue18", 459, r"$\boxed{18.90 \text{ cents}}$", "wrong_unit"),
    ("unit-dollar-sign", 459, r"$\boxed{\$18.90}$", "correct"),
    ("unit-radians-for-degrees-issue18", 166, r"The angle is $\boxed{\frac{270}{7} \text{ radians}}$.", "wrong_unit"),
    ("unit-degree-sign", 166, r"$\boxed{\frac{270}{7}^\circ}$", "correct"),
    ("unit-marker-trailing-word", 301, "The answer is $5.4$ dollars.", "wrong_unit"),
    # percent
    ("percent-sign-asked", 67, r"The area decreases by $\boxed{10\%}$.", "correct"),
    ("percent-bare", 67, r"$\boxed{10}$", "correct"),
    # scientific notation and decimals
    ("scientific-exact", 176, r"$\boxed{6.72\times10^{-5}}$", "correct"),
    ("scientific-near-miss-issue18", 176, r"$\boxed{6.7\times10^{-5}}$", "wrong_answer"),
    ("decimal-near-miss-issue18", 176, r"$\boxed{0.0000671}$", "wrong_answer"),
    ("decimal-exact", 176, r"$\boxed{0.0000672}$", "correct"),
    ("decimal-for-fraction-issue18", 478, r"$\boxed{0.00199}$", "wrong_answer"),
    ("decimal-for-common-fraction-issue18", 2, r"$\boxed{4.666667}$", "wrong_answer"),
    ("decimal-for-surd-issue18", 14, r"$\boxed{7.141428}$", "wrong_answer"),
    ("surd-plus-tiny-issue18", 14, r"$\boxed{\sqrt{51}+10^{-20}}$", "wrong_answer"),
    ("repeating-decimal-for-fraction", 48, r"$\boxed{1.\overline{4}}$", "wrong_answer"),
    ("decimal-comma-is-a-list", 48, r"$\boxed{1,5}$", "hedged"),
    ("fraction-for-decimal-gold", 44, r"$\boxed{\frac{5}{4}}$", "correct"),
    ("decimal-trailing-zero-asked-precision", 44, r"$\boxed{1.250}$", "correct"),
    ("decimal-wrong-precision", 44, r"$\boxed{1.3}$", "wrong_answer"),
    ("decimal-rounded-whole-asked", 385, r"$\boxed{22.0}$", "correct"),
    # thousands
    ("thousands-comma", 242, r"$\boxed{\$32,348}$", "correct"),
    ("thousands-plain", 242, r"$\boxed{32348}$", "correct"),
    ("thousands-thin-space", 242, r"$\boxed{32\,348}$", "correct"),
    # hedges
    ("hedge-lor-issue18", 3, r"$\boxed{8 \lor 9}$", "hedged"),
    ("hedge-or-parenthesis-issue18", 3, "The answer is 8 (or 9).", "hedged"),
    ("hedge-relation-of-constants-issue18", 3, r"$\boxed{8 = 9}$", "hedged"),
    ("hedge-list-for-scalar", 3, r"$\boxed{8, 9}$", "hedged"),
    ("hedge-plus-minus", 3, r"$\boxed{9 \pm 1}$", "hedged"),
    ("variable-equals-value", 3, r"$\boxed{n = 9}$", "correct"),
    # multiple boxes and final statements
    ("multiple-boxes-one-line", 3, r"It is $\boxed{8}$ or $\boxed{9}$.", "hedged"),
    ("two-boxes-same-value-reference-451", 451, r"$d = \boxed{15\frac{39}{40}},$ or $\boxed{\frac{639}{40}}$ inches.", "correct"),
    ("two-boxes-one-wrong", 451, r"$d = \boxed{15\frac{39}{40}},$ or $\boxed{\frac{639}{41}}$ inches.", "hedged"),
    ("answer-word-mid-line-not-a-marker-reference-448", 3, "So it is $\\boxed{9}$.\n\nWe may check our answer: $3 \\cdot 3 = 9$, so our answer is correct.", "correct"),
    ("earlier-box-superseded", 3, "First guess $\\boxed{8}$.\n\nCorrecting: $\\boxed{9}$.", "correct"),
    ("box-then-different-statement-issue18", 3, "$\\boxed{9}$\n\nSo the final answer is 8.", "hedged"),
    ("box-then-same-statement", 3, "$\\boxed{9}$\n\nSo the final answer is $9$.", "correct"),
    # dashes
    ("en-dash-minus-issue18", 16, "The answer is \u201350.", "correct"),
    ("unicode-minus", 16, "$\\boxed{\u221250}$", "correct"),
    ("hyphen-minus", 16, "$\\boxed{-50}$", "correct"),
]


@pytest.fixture(scope="module")
def pool() -> Iterator[CheckPool]:
    with CheckPool(workers=2, timeout_s=5.0) as shared:
        yield shared


@pytest.mark.parametrize(("index", "text", "outcome"), [row[1:] for row in FORMS], ids=[row[0] for row in FORMS])
def test_answer_form(pool: CheckPool, index: int, text: str, outcome: str) -> None:
    row = ROWS[index]
    result = check_answer(MathAnchor(row["answer"], row["problem"]), text, pool)
    assert result.outcome == outcome, result
    assert result.correct is (outcome == "correct")
