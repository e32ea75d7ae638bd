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
- `value_after_answer`: the visible text after the final statement (the last box, else the last
  marker line) names a number that is neither in the final answer nor in the problem statement
  ("$\\boxed{9}$ or 8", a later "196 has 8 divisors, not 9"): a committed answer followed by
  another value is not committed; restating it ("So 196 has 9 divisors.") is fine;
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


_VALUE = r"\$?\s*-?\d[\d,.]*"
# A later value offered as an alternative: "or 8", "(or 8)", "could also be 8", "maybe 8", "rather 8".
_ALTERNATIVE = re.compile(
    rf"\b(?:or|either|could\s+(?:also\s+)?be|might\s+(?:also\s+)?be|maybe|perhaps|possibly|rather|instead|actually)\s*(?:\(\s*)?(?:just\s+)?{_VALUE}(?![\w^_(\\*/+])",
    re.IGNORECASE,
)
_ASKED_NOUNS = re.compile(r"\bhow\s+many\s+((?:[a-z-]+\s+){0,3}?[a-z-]+s)\b", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _numbers(text: str) -> set[str]:
    """The numbers written in `text`, digit groups joined (`32,348` is one number)."""
    return {number.lstrip("0") or "0" for number in _NUMBER.findall(_THOUSANDS.sub(r"\1\2", text))}


def later_value(after: str, answer: str, problem: str) -> bool:
    """`after` (the visible text after the final statement) offers another value for the answer:
    an alternative ("or 8", "could also be 8"), a retraction of the answer ("not 9"), or an
    asserted number counting what the problem asks for ("196 has 8 divisors" for "How many positive
    whole-number divisors..."); numbers of the answer or the problem are not other values. Worked
    arithmetic and notes after the box ("a polygon with 9 sides sums to...") are not read."""
    answer_numbers = _numbers(answer) | _numbers(problem[:20_000])
    if any(_numbers(found.group(0)) - answer_numbers for found in _ALTERNATIVE.finditer(after)):
        return True
    for number in answer_numbers:
        if re.search(rf"\b(?:not|isn't|is not|rather than|instead of)\s*\$?\s*{re.escape(number)}(?![\d.])", after, re.IGNORECASE):
            return True
    asked = _ASKED_NOUNS.search(problem[:20_000])
    if asked is None:
        return False
    noun = asked.group(1).split()[-1].lower()
    asserted = r"\b(?:has|have|had|are|is|be|gives?|get|gets|makes?|totals?|equals?)\s+\$?\s*"
    pattern = re.compile(rf"{asserted}(-?\d[\d,.]*)\$?\s+(?:[a-z-]+\s+){{0,3}}?{re.escape(noun)}\b", re.IGNORECASE)
    return any(_numbers(found.group(1)) - answer_numbers for found in pattern.finditer(after))


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
