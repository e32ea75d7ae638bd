"""Hedges: a final answer that states more than one value for the gold's one.

A reader does not accept "8 or 9" for 9, nor `\\boxed{8 = 9}`. `hedge_reason(answer, gold)` names
the first hedge form found in `answer` that the gold itself does not use (a gold that is a list, a
`\\pm` set or an equation keeps those forms legal):
- `disjunction` (for a single-value gold): `\\lor`, `\\vee`, `\\text{or}`, the word "or", "either", "and/or";
- `relation_between_constants`: two sides of `=`/`\\approx`/`\\equiv`/`\\ne`/`\\sim` with no variable (`8 = 9`,
  `x = 8 = 9`), which claims a value and something else at once;
- `plus_minus`: `\\pm`/`\\mp` for a gold without one (two values);
- `several_values`: a comma, semicolon or "and" between values where the gold is a single value
  (thousands separators `1,000`, `10,\\!080`, `20{,}000`, `32\\,348` are not commas here);
- `multiple_boxes`: more than `MAX_BOXES_ON_LINE` different boxes in the final box's paragraph (up to that
  many, each is a final statement the checker requires to be right).
"""

from __future__ import annotations

import re

_DISJUNCTION = re.compile(r"\\lor\b|\\vee\b|\\text\{\s*or\s*\}|\\mbox\{\s*or\s*\}|\bor\b|\beither\b|and/or", re.IGNORECASE)
_RELATION = re.compile(r"=|\\approx\b|\\equiv\b|\\neq?\b|\\sim\b")
_THOUSANDS = re.compile(r"(\d)(?:,(?:\\!|\{\})?|\{,\}|\\,|\\ )\s?(\d{3})(?!\d)")
MAX_BOXES_ON_LINE = 3
_SEPARATOR = re.compile(r",|;|\\text\{\s*and\s*\}|\band\b")
_CONSTANT_COMMANDS = ("\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\pi", "\\cdot", "\\times", "\\left", "\\right", "\\circ", "\\infty")


def _has_variable(side: str) -> bool:
    """A letter outside the constant commands (`\\frac`, `\\sqrt`, `\\pi`...) and `\\text{}` units."""
    text = re.sub(r"\\(?:text|mbox|mathrm)\{[^{}]*\}", "", side)
    for command in _CONSTANT_COMMANDS:
        text = text.replace(command, "")
    return re.search(r"[A-Za-z]", text) is not None  # what is left, `\\alpha` included, is not a constant


def _top_level(text: str) -> str:
    """`text` with every bracketed group's inside blanked, so only top-level separators remain."""
    out = []
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        out.append(char if depth == 0 or char in "([{" else " ")
    return "".join(out)


def _several(text: str) -> bool:
    return _SEPARATOR.search(_top_level(_THOUSANDS.sub(r"\1\2", text))) is not None


def hedge_reason(answer: str, gold: str, boxes_on_last_line: tuple[str, ...] = ()) -> str | None:
    """The hedge form in `answer` that `gold` does not have, or None (see the module doc)."""
    scalar_gold = not _several(gold)
    if _DISJUNCTION.search(answer) and not _DISJUNCTION.search(gold) and scalar_gold:
        return "disjunction"
    sides = _RELATION.split(answer)
    if len(sides) > 1 and sum(not _has_variable(side) for side in sides if side.strip()) >= 2:
        return "relation_between_constants"
    if re.search(r"\\[pm]m\b|±|∓", answer) and not re.search(r"\\[pm]m\b|±|∓", gold):
        return "plus_minus"
    if scalar_gold and _several(answer):
        return "several_values"
    if len(boxes_on_last_line) > MAX_BOXES_ON_LINE:
        return "multiple_boxes"
    return None
