"""Equivalence checks, both checkers, timeouts in worker processes, and calls from non-main threads."""

import threading
from collections.abc import Iterator

import pytest

from tasks.math import CheckPool, check_answer
from tasks.math.normalise import parse_answer, sympy_equivalent


@pytest.fixture(scope="module")
def pool() -> Iterator[CheckPool]:
    with CheckPool(workers=2, timeout_s=4.0) as shared:
        yield shared


EQUIVALENT = [
    ("fraction_vs_decimal", r"\frac{1}{2}", r"\boxed{0.5}"),
    ("dfrac_vs_frac", r"\frac{3}{4}", r"\boxed{\dfrac{3}{4}}"),
    ("frac_shorthand", r"\frac{1}{2}", r"\boxed{\frac12}"),
    ("half_open_interval", r"(1,2]", r"\boxed{(1, 2]}"),
    ("infinite_interval", r"[2,\infty)", r"\boxed{[2, \infty)}"),
    ("degrees", r"90^\circ", r"\boxed{90}"),
    ("text_answer", r"\text{Evelyn}", r"\boxed{\text{Evelyn}}"),
    ("sqrt_over_int", r"\frac{\sqrt{21}}{5}", r"\boxed{\sqrt{21}/5}"),
    ("pi_multiple", r"2\pi", r"\boxed{2 \pi}"),
    ("tuple", r"(6,31,-1)", r"The answer is $(6, 31, -1)$."),
    ("thousands_separator", "1,000", r"\boxed{1000}"),
]
DIFFERENT = [
    ("wrong_number", "3", r"\boxed{4}"),
    ("wrong_fraction", r"\frac{1}{2}", r"\boxed{\frac{1}{3}}"),
    ("open_vs_closed", r"(1,2]", r"\boxed{[1, 2]}"),
    ("wrong_sqrt", r"\sqrt{51}", r"\boxed{\sqrt{15}}"),
    ("pi_vs_number", r"2\pi", r"\boxed{6.28}"),
    ("wrong_text", r"\text{Evelyn}", r"\boxed{\text{Bob}}"),
]


@pytest.mark.parametrize(("gold", "text"), [c[1:] for c in EQUIVALENT], ids=[c[0] for c in EQUIVALENT])
def test_equivalent_answers_are_correct(pool: CheckPool, gold: str, text: str) -> None:
    outcome = check_answer(gold, text, pool)
    assert (outcome.correct, outcome.outcome) == (True, "correct")
    assert outcome.details["secondary"] is True and outcome.details["disagreement"] is False


@pytest.mark.parametrize(("gold", "text"), [c[1:] for c in DIFFERENT], ids=[c[0] for c in DIFFERENT])
def test_different_answers_are_wrong(pool: CheckPool, gold: str, text: str) -> None:
    outcome = check_answer(gold, text, pool)
    assert (outcome.correct, outcome.outcome) == (False, "wrong_answer")


def test_no_marked_answer_is_never_correct(pool: CheckPool) -> None:
    outcome = check_answer("42", "the result is clearly 42", pool)
    assert (outcome.correct, outcome.extracted_answer, outcome.outcome) == (False, None, "no_answer")


SECOND_OPINION = [
    ("frac_equals_decimal", r"\frac{1}{4}", "0.25", True),
    ("sqrt_root_degree", r"\sqrt[3]{8}", "2", True),
    ("interval_open_ends_differ", "(1,2]", "[1,2)", False),
    ("tuple_order_matters", "(1,2,3)", "(3,2,1)", False),
    ("open_interval_to_infinity", r"(2,\infty)", r"(2, \infty)", True),
    ("code_injection_unparsed_as_math", r"\frac{1}{2}", "__import__('os').getcwd()", False),
]


@pytest.mark.parametrize(("gold", "answer", "expected"), [c[1:] for c in SECOND_OPINION], ids=[c[0] for c in SECOND_OPINION])
def test_sympy_second_opinion(gold: str, answer: str, expected: bool) -> None:
    assert sympy_equivalent(gold, answer) is expected


def test_hostile_text_never_reaches_eval() -> None:
    # The whitelist turns Python-looking input into plain words, compared as text, never evaluated.
    assert isinstance(parse_answer("__import__('os').system('true')"), str)


DISAGREEMENTS = [
    # (gold, candidate, Math-Verify, SymPy, deciding rule, verdict)
    ("decimal_for_third", r"\frac{1}{3}", r"\boxed{0.333333}", True, False, "exact_decimal", False),
    ("surd_plus_tiny", r"\sqrt{51}", r"\boxed{\sqrt{51}+10^{-20}}", True, False, "stricter_verdict", False),
]


@pytest.mark.parametrize(
    ("gold", "text", "math_verify", "sympy", "rule", "verdict"), [c[1:] for c in DISAGREEMENTS], ids=[c[0] for c in DISAGREEMENTS]
)
def test_disagreement_is_decided_by_a_stated_rule_and_reported(
    pool: CheckPool, gold: str, text: str, math_verify: bool, sympy: bool, rule: str, verdict: bool
) -> None:
    # Math-Verify rounds to 6 decimal places; the SymPy check reads decimals exactly; neither alone decides.
    outcome = check_answer(gold, text, pool)
    assert outcome.correct is verdict and outcome.details["rule"] == rule and outcome.details["disagreement"] is True
    assert outcome.details["checker_disagreement"] == {
        "math_verify": math_verify, "sympy": sympy, "rule": rule, "verdict": verdict, "answer": outcome.extracted_answer,
    }


def test_pathological_expression_is_capped_and_reported() -> None:
    with CheckPool(workers=1, timeout_s=1.5) as short:
        outcome = check_answer("2", r"\boxed{9^{9^{9^{9^{9}}}}}", short)
        assert (outcome.correct, outcome.outcome) == (False, "check_timeout")
        # The overrunning worker was replaced: the pool still answers.
        assert check_answer("2", r"\boxed{2}", short).outcome == "correct"


def test_check_from_a_non_main_thread(pool: CheckPool) -> None:
    results = []
    thread = threading.Thread(target=lambda: results.append(check_answer(r"\frac{2}{4}", r"\boxed{\frac12}", pool)))
    thread.start()
    thread.join(timeout=60)
    assert [outcome.outcome for outcome in results] == ["correct"]
