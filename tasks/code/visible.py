"""Visible tests: the `>>> call` / expected-output pairs in a HumanEval docstring.

These are what a judge can see in the prompt; the hidden anchor tests are the dataset's `check`.
Only doctest-style examples are extracted; prompts that show examples in prose ("f(x) ==> y")
yield none.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VisibleExample:
    """One docstring example: the expression after `>>>` and the expected output text."""

    call: str
    expected: str


def visible_examples(prompt: str, entry_point: str | None = None) -> tuple[VisibleExample, ...]:
    """Doctest examples in `prompt`, keeping only calls of `entry_point` when it is given."""
    examples: list[VisibleExample] = []
    lines = [line.strip() for line in prompt.splitlines()]
    for index, line in enumerate(lines):
        if not line.startswith(">>>"):
            continue
        call = line[3:].strip()
        expected: list[str] = []
        for following in lines[index + 1 :]:
            if not following or following.startswith(">>>") or following.startswith(('"""', "'''")):
                break
            expected.append(following)
        if expected and (entry_point is None or call.startswith(entry_point + "(")):
            examples.append(VisibleExample(call, "\n".join(expected)))
    return tuple(examples)
