"""Read a candidate's final answer: the last `\\boxed{...}`, else a clearly marked final-answer line.

Only the final marker counts. Intermediate boxes are overridden by later ones (solutions sometimes box
partial results), and a text without any marker has no answer: the checker reports `no_answer`
instead of guessing from the last number, because a parse failure is never a verdict.
"""

from __future__ import annotations

import re

_BOX_COMMANDS = ("\\boxed", "\\fbox")
# The marked answer runs to the end of its sentence (". ") or line.
_MARKER = re.compile(r"(?:final answer|the answer is)\s*(?:is)?\s*[:：]?\s*(.+?)(?=\.\s|\.?\s*$)", re.IGNORECASE)


def _read_braced(text: str, start: int) -> str | None:
    """Return the content of the brace group opening at `text[start]`, or None if it never closes."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : index]
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` with balanced braces (or `\\boxed 5`)."""
    position = max(text.rfind(command) for command in _BOX_COMMANDS)
    while position >= 0:
        command = next(c for c in _BOX_COMMANDS if text.startswith(c, position))
        rest = position + len(command)
        while rest < len(text) and text[rest] == " ":
            rest += 1
        if rest < len(text) and text[rest] == "{":
            content = _read_braced(text, rest)
            if content is not None:
                return content.strip()
        elif rest > position + len(command):
            bare = re.match(r"[^\s$]+", text[rest:])
            if bare:
                return bare.group(0)
        position = max(text.rfind(c, 0, position) for c in _BOX_COMMANDS)
    return None


def _clean_marked(answer: str) -> str:
    answer = answer.strip()
    boxed = last_boxed(answer)
    if boxed is not None:
        return boxed
    answer = answer.strip().strip("$").strip()
    if answer.startswith("\\(") and answer.endswith("\\)"):
        answer = answer[2:-2].strip()
    return answer.rstrip(".").strip().strip("$").strip()


def extract_answer(text: str) -> str | None:
    """The candidate's final answer as a LaTeX string, or None when it marks none.

    Precedence: the last balanced `\\boxed{...}` anywhere in the text; otherwise the last line
    containing "The answer is ..." or "Final answer: ..." (case-insensitive, surrounding `$` and a
    trailing period removed).
    """
    boxed = last_boxed(text)
    if boxed:
        return boxed
    for line in reversed(text.splitlines()):
        found = list(_MARKER.finditer(line))
        if found:
            answer = _clean_marked(found[-1].group(1))
            if answer:
                return answer
    return None
