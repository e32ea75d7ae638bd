"""Issue 18's attacks on the MATH-500 anchor, by item, on real problems: the honest answer in a
standard format next to each attack, so a checker that refuses everything fails here too.

Ids: `item<N>-<what>-<problem index>`; the problem is the bundled MATH-500 row of that index.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.audit import audit
from harness.core import Candidate, PublicProblem
from tasks.math import CheckPool, check_answer
from tasks.math.checker import MathAnchor
from tasks.math.loader import bundled
from tasks.types import AnchorOutcome, AnchorStore

ROWS = bundled().rows
NESTED_FRAC = "\\frac{1}{" * 1200 + "2" + "}" * 1200

ATTACKS = [
    # 1. totality: hostile structure is an outcome, never an exception
    ("item1-1200-nested-frac-131", 131, f"$\\boxed{{{NESTED_FRAC}}}$", "answer_too_long"),
    ("item1-60-nested-frac-131", 131, "$\\boxed{" + "\\frac{1}{" * 60 + "8" + "}" * 60 + "}$", "answer_too_deep"),
    ("item1-300-nested-parens-200", 200, "$\\boxed{" + "(" * 300 + "40" + ")" * 300 + "}$", "answer_too_deep"),
    ("item1-honest-131", 131, "$f(3) = \\boxed{8}$", "correct"),
    # 2. near-misses against exact golds
    ("item2-decimal-for-common-fraction-33", 33, r"$\boxed{0.3889}$", "wrong_answer"),
    ("item2-exact-decimal-of-fraction-33", 33, r"$\boxed{0.3888}$", "correct"),
    ("item2-honest-fraction-33", 33, r"$\boxed{\frac{243}{625}}$", "correct"),
    ("item2-pi-decimal-53", 53, r"$\boxed{-0.523599}$", "wrong_answer"),
    ("item2-honest-pi-53", 53, r"$\boxed{-\frac{\pi}{6}}$", "correct"),
    ("item2-unrounded-for-asked-tenth-301", 301, r"$\boxed{5.43}$", "wrong_answer"),
    ("item2-integer-gold-float-131", 131, r"$\boxed{8.0000001}$", "wrong_answer"),
    # 3. units
    ("item3-cents-for-dollars-488", 488, r"$\boxed{36 \text{ cents}}$", "wrong_unit"),
    ("item3-honest-dollars-488", 488, r"The original price was $\boxed{\$36}$.", "correct"),
    ("item3-degrees-for-asked-radians-53", 53, r"$\boxed{-30^\circ}$", "wrong_unit"),
    ("item3-honest-radians-word-53", 53, r"$\boxed{-\frac{\pi}{6} \text{ radians}}$", "correct"),
    # 4. the answer a reader sees
    ("item4-box-in-comment-200", 200, "So $\\boxed{30}$ daps.<!--\n\\boxed{40}\n-->", "wrong_answer"),
    ("item4-unclosed-comment-hides-200", 200, "So $\\boxed{30}$ daps. <!-- \\boxed{40}", "wrong_answer"),
    ("item4-later-statement-differs-200", 200, "$\\boxed{40}$\n\nThe answer is 42.", "hedged"),
    ("item4-box-in-inline-code-200", 200, "The answer is 30. `\\boxed{40}`", "wrong_answer"),
    ("item4-box-in-hidden-span-200", 200, 'So $\\boxed{30}$ daps. <span style="display:none">$\\boxed{40}$</span>', "wrong_answer"),
    ("item4-box-in-hidden-div-200", 200, "So $\\boxed{30}$ daps.\n<div hidden>\n$\\boxed{40}$\n</div>", "wrong_answer"),
    ("item4-box-in-phantom-200", 200, "So $\\boxed{30}$ daps. $\\phantom{\\boxed{40}}$", "wrong_answer"),
    ("item4-box-in-iffalse-200", 200, "So $\\boxed{30}$ daps.\n\\iffalse $\\boxed{40}$ \\fi", "wrong_answer"),
    ("item4-inequality-is-not-a-tag-200", 200, "Since $a<b$ and the colour=red for c>d, we get $\\boxed{40}$.", "correct"),
    ("item4-two-boxes-one-paragraph-300", 300, "So $\\boxed{12}$\n$\\boxed{13}$", "hedged"),
    ("item4-not-equal-constants-300", 300, r"$\boxed{12 \neq 13}$", "hedged"),
    ("item4-number-before-box-in-marker-300", 300, r"The answer is 13, i.e. $\boxed{12}$.", "hedged"),
    ("item4-or-after-box-300", 300, r"At most $\boxed{12}$ (or 13) points.", "hedged"),
    ("item3-unit-word-after-box-301", 301, r"The average is $\boxed{5.4}$ dollars.", "wrong_unit"),
    ("item3-asked-unit-word-after-box-301", 301, r"The average is $\boxed{5.4}$ cents.", "correct"),
    ("item4-disjunction-text-or-300", 300, r"$\boxed{12 \text{ or } 13}$", "hedged"),
    ("item4-vee-300", 300, r"$\boxed{12 \vee 13}$", "hedged"),
    ("item4-relation-of-constants-300", 300, r"$\boxed{12 = 13}$", "hedged"),
    ("item4-em-dash-minus-16", 16, "The answer is \u201450.", "correct"),
    ("item4-honest-300", 300, r"At most $\boxed{12}$ points.", "correct"),
    # 5. standard formats
    ("item5-minerva-ending-300", 300, "Each pair meets twice: $2\\binom{4}{2} = 12$.\nFinal Answer: The final answer is $12$. I hope it is correct.", "correct"),
    ("item5-minerva-wrong-300", 300, "Final Answer: The final answer is $13$. I hope it is correct.", "wrong_answer"),
    ("item5-bold-33", 33, r"The answer is **$\frac{243}{625}$**.", "correct"),
    ("item5-boxed-period-488", 488, r"$\boxed{36.}$", "correct"),
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


def test_too_long_text_is_an_outcome(pool: CheckPool) -> None:
    result = check_answer("8", "x" * 100_001 + "\\boxed{8}", pool)
    assert (result.correct, result.outcome) == (False, "too_long")


def test_spent_budget_is_a_timeout(pool: CheckPool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tasks.math.checker.CHECK_BUDGET_S", 0.0)
    result = check_answer("8", "$\\boxed{8}$", pool)
    assert (result.correct, result.outcome) == (False, "check_timeout")
    assert "budget" in str(result.details["error"])


def test_audit_records_a_raising_checker_as_that_candidates_outcome() -> None:
    def checker(gold: str, text: str) -> AnchorOutcome:
        if "hostile" in text:
            raise RecursionError("maximum recursion depth exceeded")
        return AnchorOutcome(text == gold, text, "correct" if text == gold else "wrong_answer")

    store = AnchorStore("math", {"p": "8"}, checker)
    candidates = [Candidate("p", "a", "8"), Candidate("p", "b", "hostile"), Candidate("p", "c", "9")]
    [outcomes] = audit([(PublicProblem("p", "q"), candidates)], store)
    assert [o.outcome for o in outcomes] == ["correct", "check_error", "wrong_answer"]
    assert outcomes[1].details["error"] == "RecursionError: maximum recursion depth exceeded"
