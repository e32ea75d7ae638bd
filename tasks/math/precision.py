"""Decimals against exact golds: exact unless the problem asks for a rounded decimal.

Math-Verify's default `float_rounding=6` compares six decimal *places*, an absolute tolerance: for
the gold `.0000672` it accepts `0.0000671`, for 14/3 it accepts `4.666667`, for √51 `7.141428`.
Here a decimal is the exact number it writes (`normalise` parses `0.333333` as 333333/10^6). It is
accepted for an exact gold (integer, fraction, surd, exact decimal) only when the problem asks for
a rounded value ("to the nearest hundredth", "rounded to 3 decimal places", "nearest whole
number", "nearest cent"), and then only when it equals the gold rounded half away from zero to
the asked place. The gold is evaluated to 60 significant digits before rounding, so the only
tolerance is relative to the gold (10^-60 of it), never an absolute number of places.
"""

from __future__ import annotations

import re

import sympy

_PLACES = {
    "whole number": 0, "integer": 0, "unit": 0, "dollar": 0, "degree": 0, "percent": 0, "whole percent": 0,
    "tenth": 1, "hundredth": 2, "cent": 2, "thousandth": 3, "ten-thousandth": 4, "ten thousandth": 4,
    "hundred-thousandth": 5, "millionth": 6, "ten": -1, "hundred": -2, "thousand": -3,
}
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_NEAREST = re.compile(r"nearest\s+(" + "|".join(sorted(map(re.escape, _PLACES), key=len, reverse=True)) + r")s?\b", re.IGNORECASE)
_DECIMAL_PLACES = re.compile(r"\b(\d|one|two|three|four|five|six)\s+decimal\s+(?:places?|digits?)", re.IGNORECASE)
_DECIMAL = re.compile(r"\d*\.\d|\d\.(?!\d)|\\times\s*10\s*\^|\d[eE][-+]?\d")
_DIGITS = 60


def asked_places(problem: str) -> int | None:
    """Decimal places the problem asks the answer rounded to (negative: tens, hundreds), or None."""
    text = problem[:20_000]
    found = _DECIMAL_PLACES.search(text)
    if found:
        word = found.group(1).lower()
        return int(word) if word.isdigit() else _WORDS[word]
    nearest = _NEAREST.search(text)
    return _PLACES[nearest.group(1).lower().replace("  ", " ")] if nearest else None


def is_decimal(answer: str) -> bool:
    """The answer writes a decimal or scientific-notation number (`0.5`, `.25`, `6.7\\times10^{-5}`);
    a repeating decimal (`0.\\overline{3}`, `0.\\dot{3}`) is exact notation, not a rounded one."""
    return _DECIMAL.search(answer) is not None and not re.search(r"\\(?:overline|dot|bar)\b", answer)


def rounded(value: sympy.Expr, places: int) -> sympy.Rational:
    """`value` rounded half away from zero to `places` decimal places, as an exact rational."""
    exact = sympy.Rational(str(sympy.N(value, _DIGITS)))
    unit = sympy.Rational(10) ** -places
    magnitude = sympy.floor(abs(exact) / unit + sympy.Rational(1, 2)) * unit
    return sympy.Rational(magnitude if exact >= 0 else -magnitude)


def matches_asked_precision(gold: sympy.Expr, answer: sympy.Expr, places: int) -> bool:
    """`answer` is exactly the gold rounded to the asked places (both finite numbers)."""
    if not (gold.is_number and answer.is_number) or not (gold.is_finite and answer.is_finite):
        return False
    return bool(sympy.Rational(str(sympy.N(answer, _DIGITS))) == rounded(gold, places))
