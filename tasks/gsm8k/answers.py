"""Reading and comparing GSM8K final answers.

Rules, in order (documented in docs/tasks.md too):

1. The final answer is the text after the last answer marker: `####` (the dataset's gold format),
   `A:` (the GSM8K authors' model solutions), or `The answer is` (any case). Without a marker, the
   last number in the text is the answer.
2. From that text we read the first number: thousands commas (`1,000`), currency signs (`$`, `€`,
   `£`), a trailing percent sign and trailing units or words are dropped; decimals (`12.50`), signs
   and simple fractions (`3/4`) are kept.
3. Numbers are compared exactly as rationals (`fractions.Fraction`), never with float `==`:
   `18`, `18.0`, `$18.00` and `36/2` are all equal.

`extract_answer` returns the canonical string of that rational (`"18"`, `"0.5"`, `"1/3"`) so that
majority votes and reports group equal answers together.
"""

from __future__ import annotations

import re
from fractions import Fraction

_MARKER = re.compile(r"####|(?<![A-Za-z])A:|the answer is", re.IGNORECASE)
# A number: optional sign and currency, digits with optional thousands commas, optional decimals,
# optional "/ denominator".
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w)])[-−])?\s*[$€£]?\s*"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?P<frac>\.\d+)?"
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?"
)


def _numbers(text: str) -> list[Fraction]:
    found: list[Fraction] = []
    for match in _NUMBER.finditer(text):
        whole, decimals = match.group("int"), match.group("frac")
        if whole is None and decimals is None:
            continue
        value = Fraction((whole or "0").replace(",", "") + (decimals or ""))
        denominator = match.group("den")
        if denominator is not None:
            den = Fraction(denominator)
            if den == 0:
                continue
            value /= den
        if match.group("sign"):
            value = -value
        found.append(value)
    return found


def parse_number(text: str) -> Fraction | None:
    """The first number in `text` as an exact rational, or None when there is none."""
    numbers = _numbers(text)
    return numbers[0] if numbers else None


def canonical(value: Fraction) -> str:
    """A stable string for a rational: integers plainly, terminating decimals as decimals, else p/q."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    if den == 1:
        text = f"{float(value):.12f}".rstrip("0").rstrip(".")
        if Fraction(text) == value:
            return text
    return f"{value.numerator}/{value.denominator}"


def extract_answer(text: str) -> str | None:
    """The candidate's final answer in canonical form, or None when no number can be read."""
    markers = list(_MARKER.finditer(text))
    if markers:
        tail = text[markers[-1].end() :]
        value = parse_number(tail.strip().splitlines()[0] if tail.strip() else "")
        if value is not None:
            return canonical(value)
    numbers = _numbers(text)
    return canonical(numbers[-1]) if numbers else None


def answers_equal(left: str | None, right: str | None) -> bool:
    """Exact rational equality of two canonical answers; a missing answer equals nothing."""
    if left is None or right is None:
        return False
    return Fraction(left) == Fraction(right)
