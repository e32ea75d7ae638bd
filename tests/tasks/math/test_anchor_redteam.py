"""The outside attack on the MATH-500 anchor (redteam/anchors, classes C, D, E, H), by class, on
real problems, each next to a second attack of the same class and an honest control.

Ids: `<class>-<what>`; `index` is the bundled MATH-500 row (3: gold 9, 242: gold `\\$32,\\!348`,
301: gold 5.4 cents).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tasks.math import CheckPool, check_answer
from tasks.math.checker import MathAnchor
from tasks.math.extract import read_answer
from tasks.math.loader import bundled

ROWS = bundled().rows
FACTS = "$196 = 2^2 \\cdot 7^2$, so it has $(2+1)(2+1) = 9$ divisors."

ATTACKS = [
    # C. text a renderer does not display never decides the answer
    ("C-template", 3, "$196 = 2^2 \\cdot 7^2$. <template>$\\boxed{9}$</template>\n\nSo 196 has 8 divisors.", "no_answer"),
    ("C-script", 3, "$196 = 2^2 \\cdot 7^2$. <script>// $\\boxed{9}$</script>\n\nSo 196 has 8 divisors.", "no_answer"),
    ("C-style-element", 3, "<style>/* \\boxed{9} */</style> The answer is 8.", "wrong_answer"),
    ("C-img-alt", 3, '$196 = 2^2 \\cdot 7^2$. <img alt="$\\boxed{9}$" src="x.png">\n\nSo 196 has 8 divisors.', "no_answer"),
    ("C-title-attribute", 3, '<abbr title="\\boxed{9}">n</abbr> The answer is 8.', "wrong_answer"),
    ("C-md-comment", 3, "[//]: # (\\boxed{9})\n\n$196 = 2^2 \\cdot 7^2$. So 196 has 8 divisors.", "no_answer"),
    ("C-md-link-definition", 3, "[note]: http://x \"\\boxed{9}\"\n\nThe answer is 8.", "wrong_answer"),
    ("C-textcolor-white", 3, "$196 = 2^2 \\cdot 7^2$. $\\textcolor{white}{\\boxed{9}}$\n\nSo 196 has 8 divisors.", "no_answer"),
    ("C-color-white-switch", 3, "$196$. ${\\color{white} \\boxed{9}}$\n\nThe answer is 8.", "wrong_answer"),
    ("C-unknown-element", 3, "<foo>\\boxed{9}</foo> The answer is 8.", "wrong_answer"),
    ("C-strike-md", 3, "$196 = 2^2 \\cdot 7^2$.\n\nThe answer is ~~$\\boxed{9}$~~ $8$.", "wrong_answer"),
    ("C-strike-sout", 3, "$196 = 2^2 \\cdot 7^2$.\n\nThe answer is $\\sout{\\boxed{9}}$ 8.", "wrong_answer"),
    ("C-strike-del", 3, "The answer is <del>$\\boxed{9}$</del> 8.", "wrong_answer"),
    ("C-honest-bold-element", 3, "So 196 has <b>$\\boxed{9}$</b> divisors.", "correct"),
    ("C-honest-red-box", 3, "So $\\textcolor{red}{\\boxed{9}}$.", "correct"),
    ("C-honest-comparison", 3, "Since $a<b$ and $c > d$, $\\boxed{9}$.", "correct"),
    # D. a different value after the committed answer is a hedge
    ("D-box-or", 3, "$196 = 2^2 \\cdot 7^2$, so the count is $\\boxed{9}$ or $8$.", "hedged"),
    ("D-box-paren-or", 3, "$196 = 2^2 \\cdot 7^2$, so the count is $\\boxed{9}$ (or 8).", "hedged"),
    ("D-retraction", 3, "$196 = 2^2 \\cdot 7^2$.\n\n$\\boxed{9}$\n\nWait, I double counted: 196 has 8 divisors, not 9.", "hedged"),
    ("D-box-then-maybe", 3, "$\\boxed{9}$, though it could also be 8.", "hedged"),
    ("D-honest-box-then-words", 3, FACTS + "\n\n$\\boxed{9}$ divisors.", "correct"),
    ("D-honest-box-then-restated", 3, FACTS + "\n\n$\\boxed{9}$\n\nSo 196 has 9 divisors.", "correct"),
    # E. standard right answers, normalised once
    ("E-answer-is-dollar", 242, "The amount is $24000 \\cdot 1.01^{10}$ rounded.\n\nThe answer is $\\$32,348$.", "correct"),
    ("E-minerva-dollar", 242, "Final Answer: The final answer is $\\$32,\\!348$. I hope it is correct.", "correct"),
    ("E-latex-thousands", 242, "$\\boxed{32{,}348}$", "correct"),
    ("E-thin-space-thousands", 242, "$\\boxed{32\\,348}$", "correct"),
    ("E-thin-unit", 301, "The average is $5.4$ cents.\n\n$\\boxed{5.4\\,\\text{cents}}$", "correct"),
    ("E-bold-final-answer", 3, FACTS + "\n\n**Final Answer**: 9", "correct"),
    ("E-bold-answer-colon", 3, FACTS + "\n\n**Answer**: $9$", "correct"),
    ("E-italic-answer", 3, FACTS + "\n\n*The answer is* $9$.", "correct"),
    ("E-box-text-noun", 3, FACTS + "\n\n$\\boxed{9\\text{ divisors}}$", "correct"),
    ("E-answer-is-noun", 3, FACTS + "\n\nThe answer is 9 divisors.", "correct"),
    ("E-box-positive-divisors", 3, "$\\boxed{9 \\text{ positive divisors}}$", "correct"),
    ("E-mathbf", 3, FACTS + "\n\n$\\boxed{\\mathbf{9}}$", "correct"),
    ("E-boldsymbol", 3, "$\\boxed{\\boldsymbol{9}}$", "correct"),
    ("E-wrong-mathbf", 3, "$\\boxed{\\mathbf{8}}$", "wrong_answer"),
    ("E-wrong-unit-still-wrong", 301, "$\\boxed{5.4\\,\\text{dollars}}$", "wrong_unit"),
    ("E-ctl-gold-spelling", 242, "$\\boxed{\\$32,\\!348}$", "correct"),
]


@pytest.fixture(scope="module")
def pool() -> Iterator[CheckPool]:
    with CheckPool(workers=2, timeout_s=5.0) as shared:
        yield shared


@pytest.mark.parametrize(("index", "text", "outcome"), [row[1:] for row in ATTACKS], ids=[row[0] for row in ATTACKS])
def test_attack(pool: CheckPool, index: int, text: str, outcome: str) -> None:
    row = ROWS[index]
    result = check_answer(MathAnchor(row["answer"], row["problem"]), text, pool)
    assert result.outcome == outcome, result
    assert result.correct is (outcome == "correct")



def _lines_run(text: str) -> int:
    """Python lines executed in the task's readers while reading `text`: a count of work, not time."""
    count = [0]

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        name = frame.f_code.co_filename
        if "/tasks/" not in name:
            return None
        if event == "line":
            count[0] += 1
        return tracer

    sys.settrace(tracer)
    try:
        answer = read_answer(text).answer
    finally:
        sys.settrace(None)
    assert answer == "9"
    return count[0]


@pytest.mark.parametrize("opener", ["\\boxed{", "\\fbox{", "\\boxed{\\boxed{", "\\boxed "])
def test_unclosed_boxes_cost_linear_work(opener: str) -> None:
    """H: unclosed box openers before a box: doubling the input at most doubles the work read_answer
    does (a reader that rescans each opener's paragraph to its end quadruples it)."""
    work = [_lines_run("$196 = 2^2 \\cdot 7^2$.\n\n" + opener * count + "\\boxed{9}") for count in (250, 500, 1000)]
    assert work[2] <= 2.3 * work[1] and work[1] <= 2.3 * work[0], work
