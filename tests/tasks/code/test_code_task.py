"""HumanEval loading, program assembly, visible examples, and a sample of canonical/empty solutions."""

from __future__ import annotations

import re

import pytest

from harness.core.errors import HarnessError
from tasks.code import assemble_program, check_code_many, code_digest, extract_code, load, visible_examples
from tasks.code.checker import CodeAnchor
from tasks.code.loader import _bundled_rows
from tasks.config import TaskConfig

ROWS = _bundled_rows()
SAMPLE = [ROWS[i] for i in range(0, 164, 17)]  # 10 problems spread over the set


def _anchor(row: dict) -> CodeAnchor:
    return CodeAnchor(row["task_id"], row["prompt"], row["test"], row["entry_point"])


def test_load_bundled_keeps_tests_out_of_public_problems() -> None:
    task = load(TaskConfig(name="code"))
    assert len(task.problems) == 164 and task.problems[0].problem_id == "HumanEval/0"
    for problem, row in zip(task.problems, ROWS):
        assert problem.question == row["prompt"] and "def check(" not in problem.question


def test_subset_by_task_id_and_bad_id() -> None:
    assert [p.problem_id for p in load(TaskConfig(name="code", subset="HumanEval/3, HumanEval/1")).problems] == [
        "HumanEval/1",
        "HumanEval/3",
    ]
    with pytest.raises(HarnessError, match="unknown task id 'HumanEval/999'"):
        load(TaskConfig(name="code", subset="HumanEval/999"))


def test_sample_of_canonical_solutions_pass_and_empty_bodies_fail() -> None:
    items = [(_anchor(row), row["canonical_solution"]) for row in SAMPLE] + [(_anchor(row), "    pass\n") for row in SAMPLE]
    outcomes = check_code_many(items, workers=2)
    assert [o.outcome for o in outcomes[: len(SAMPLE)]] == ["pass"] * len(SAMPLE)
    assert all(not o.correct for o in outcomes[len(SAMPLE) :])


ASSEMBLY = [
    ("body_appended", "    return 1\n", "PROMPT    return 1\n"),
    ("full_definition_after_prompt", "def f(x):\n    return 1\n", "PROMPT\ndef f(x):\n    return 1\n"),
    ("fenced_full_definition", "Here:\n```python\ndef f(x):\n    return 2\n```\nDone.", "PROMPT\ndef f(x):\n    return 2\n"),
    ("fenced_body", "```\n    return 3\n```", "PROMPT    return 3\n"),
    (
        "fenced_block_defining_entry_point_wins",
        "```python\nimport math\n```\n```python\ndef f(x):\n    return 4\n```",
        "PROMPT\ndef f(x):\n    return 4\n",
    ),
]


@pytest.mark.parametrize(("text", "program"), [a[1:] for a in ASSEMBLY], ids=[a[0] for a in ASSEMBLY])
def test_assemble_program(text: str, program: str) -> None:
    assert assemble_program("PROMPT", text, "f") == program


def test_code_digest_ignores_fences_and_trailing_space() -> None:
    assert code_digest("```python\ndef f():  \n    return 1\n```") == code_digest("def f():\n    return 1")
    assert extract_code("no fences") == "no fences"


def test_a_lone_surrogate_in_candidate_text_is_checked_not_a_crash() -> None:
    """Red-team crash_lone_surrogate: `"\\ud800"` is valid JSON in a pool line; the digest and the
    check must take it. Such text is not UTF-8 source (plain `python main.py` refuses it too), so the
    verdict is an error with a one-line reason, whether the surrogate sits in a comment or a string."""
    row = next(r for r in _bundled_rows() if r["task_id"] == "HumanEval/0")
    texts = [row["canonical_solution"] + "    # caf\ud800\n", "def has_close_elements(numbers, threshold):\n    return '\udfff' == 1\n"]
    digests = [code_digest(text) for text in texts]
    assert all(re.fullmatch(r"[0-9a-f]{12}", d) for d in digests) and digests[0] != code_digest(texts[0].replace("\ud800", ""))
    outcomes = check_code_many([(_anchor(row), text) for text in texts], workers=2)
    assert [o.outcome for o in outcomes] == ["error", "error"]
    assert all("surrogates not allowed" in o.details["reason"] for o in outcomes)


def test_visible_examples_from_docstring() -> None:
    examples = visible_examples(ROWS[0]["prompt"], ROWS[0]["entry_point"])
    assert [(e.call, e.expected) for e in examples] == [
        ("has_close_elements([1.0, 2.0, 3.0], 0.5)", "False"),
        ("has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)", "True"),
    ]
    assert visible_examples('def f():\n    """No examples here."""\n') == ()


LOOP_ONLY = ["HumanEval/32", "HumanEval/38", "HumanEval/50"]  # no straight-line assert at all


@pytest.mark.parametrize("task_id", LOOP_ONLY)
def test_min_cases_is_measured_with_the_canonical_solution(task_id: str) -> None:
    row = next(r for r in ROWS if r["task_id"] == task_id)
    anchor = CodeAnchor(task_id, row["prompt"], row["test"], row["entry_point"], row["canonical_solution"])
    assert anchor.min_cases() == 100 and len(anchor.hidden_inputs()) == 100
    assert CodeAnchor(task_id, row["prompt"], row["test"], row["entry_point"]).min_cases() == 1


def test_a_run_with_fewer_asserts_than_a_correct_solution_fails() -> None:
    from tasks.code.sandbox import run_tests

    row = ROWS[0]
    program = row["prompt"] + row["canonical_solution"]
    assert run_tests(program, row["test"], row["entry_point"], helpers=row["prompt"], min_cases=7).outcome == "pass"
    result = run_tests(program, row["test"], row["entry_point"], helpers=row["prompt"], min_cases=8)
    assert (result.outcome, result.reason) == ("error", "7 asserts ran; a correct solution makes 8 run")


def test_a_reference_that_does_not_load_gives_no_profile_instead_of_a_crash() -> None:
    row = ROWS[0]
    for broken in ("    return (\n", "    pass\n"):
        anchor = CodeAnchor(row["task_id"], row["prompt"], row["test"], row["entry_point"], broken)
        assert (anchor.profile(), anchor.min_cases(), anchor.hidden_inputs()) == (None, 1, ())


def test_extracting_code_is_linear_in_the_text() -> None:
    """Red team sandbox6 `r1`: 50,000 fences on one unbroken line took the fence regex 22 s (each
    fence start scanned to the line's end), under the GIL, with no deadline. Timed against a
    same-size text without fences, so the bound holds on a loaded machine."""
    import time

    def seconds(text: str) -> float:
        started = time.perf_counter()
        extract_code(text, "f")
        return time.perf_counter() - started

    fences, control = "```" * 50_000, "x" * 150_000
    assert seconds(fences) < 0.05 + 20 * seconds(control)
    assert extract_code("```python\ndef f():\n    return 1\n```", "f") == "def f():\n    return 1\n"
    assert extract_code("```\na\n```\n```py\ndef f(): pass\n", "f") == "def f(): pass\n"
