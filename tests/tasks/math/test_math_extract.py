"""Answer extraction: last balanced box wins, marked final answers are read, nothing else is."""

import pytest

from tasks.math import extract_answer

CASES = [
    ("single_box", r"so the total is $\boxed{42}$.", "42"),
    ("last_box_wins", r"first \boxed{1} then \boxed{\frac{1}{2}}", r"\frac{1}{2}"),
    ("nested_braces", r"\boxed{\frac{\sqrt{3}}{2^{10}}}", r"\frac{\sqrt{3}}{2^{10}}"),
    ("fbox", r"\fbox{7}", "7"),
    ("unbraced_box", r"\boxed 7", "7"),
    ("unclosed_box_ignored", r"The answer is 5. \boxed{6", "5"),
    ("the_answer_is", "Adding up, the answer is $12$.", "12"),
    ("final_answer_colon", "Work...\nFinal answer: (1, 2]", "(1, 2]"),
    ("final_answer_boxed_inside", r"Final answer: \boxed{x+1}", "x+1"),
    ("last_marker_line", "The answer is 3.\nOn reflection, the answer is 4.", "4"),
    ("interval_with_brackets", r"\boxed{[2, \infty)}", r"[2, \infty)"),
    ("text_answer", r"\boxed{\text{Evelyn}}", r"\text{Evelyn}"),
    ("no_marker", "I think it is 42", None),
    ("empty", "", None),
]


@pytest.mark.parametrize(("text", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_extract_answer(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected
