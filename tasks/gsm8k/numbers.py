"""One number grammar for GSM8K text, used by the anchor (`answers`) and the shield (`shield`) alike.

A reader of a solution sees the same numbers whether they sit in a step or in the final answer, so
both read them here (the table in docs/tasks.md, "GSM8K answer forms", lists each form):

- `normalise` first maps what a reader reads as ASCII to ASCII: every Unicode decimal digit
  (fullwidth `１８`, Arabic-Indic) to its digit, every space separator (no-break, thin, narrow
  no-break) to a space, every dash a reader reads as minus (U+2212 minus sign, U+2013 en dash,
  U+2012 figure dash, U+2010/U+2011 hyphens, U+FE63, U+FF0D) to `-`, the multiplication signs
  `×`, `·`, `⋅`, `∙`, `✕` to `*`, `÷` to `/`, the fraction slash `⁄` to `/`, and a vulgar
  fraction to its digits (`¾` to `3/4`, `1½` to `1 1/2`). The em dash stays
  punctuation ("the answer—18" is not negative). One pass, linear in the text.
- `NUMBER` is a number: digits with thousands groups of three separated by commas (`70,000`) or by
  single spaces (`70 000`), at most six groups, then an optional decimal part; or up to 30 plain
  digits with an optional decimal part; or a bare decimal (`.5`). A dot is always the decimal point and a comma
  only groups thousands: `70.000` is seventy and `1,5` is the two numbers 1 and 5 (locale forms
  stay ambiguous, so the English reading is the documented one).
- `SCALES`: a number followed by `thousand`, `million` or `billion` is multiplied by it
  (`70 thousand dollars` is 70000).

Every pattern here matches a bounded stretch at each position (no unbounded backtracking), so a
scan with `finditer` is linear in the text.
"""

from __future__ import annotations

import re
import unicodedata
from fractions import Fraction

MINUS_DASHES = "\u2212\u2013\u2012\u2010\u2011\ufe63\uff0d"
TIMES_SIGNS = "\u00d7\u00b7\u22c5\u2219\u2715"
_ASCII = {**{ord(c): "-" for c in MINUS_DASHES}, **{ord(c): "*" for c in TIMES_SIGNS}, ord("\u00f7"): "/", ord("\u2044"): "/"}

# Thousands groups are capped at six (10^21) so a long run of "100 100 100 ..." costs a bounded
# backtrack at each start, never a quadratic one.
# A whole part is read up to 30 digits: a longer run is no number (and never reaches int(), which
# refuses strings over 4,300 digits). A decimal part is read whole (a greedy run: linear) and its
# value is taken to MAX_DECIMALS places, so a degenerate `0.3333...` of a thousand 3s is read as
# the number it starts with.
MAX_DECIMALS = 60
_DECIMALS = r"(?:\.\d+)?"
NUMBER_PATTERN = (
    rf"(?:\d{{1,3}}(?:,\d{{3}}){{1,6}}(?!\d|,\d)|\d{{1,3}}(?: \d{{3}}){{1,6}}(?!\d| \d{{3}})){_DECIMALS}"
    rf"|\d{{1,30}}(?!\d){_DECIMALS}|\.\d+"
)
NUMBER = re.compile(rf"(?<![\w.])(?:{NUMBER_PATTERN})")
SCALES = {"thousand": 1000, "million": 10**6, "billion": 10**9}
SCALE_WORD = re.compile(r"\s+(thousand|million|billion)\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """`text` with the characters a reader reads as ASCII digits, spaces, minus and operators made ASCII."""
    if text.isascii():
        return text
    out = []
    for char in text.translate(_ASCII):
        if char.isascii():
            out.append(char)
        elif (digit := unicodedata.decimal(char, None)) is not None:
            out.append(str(digit))
        elif unicodedata.category(char) == "Zs":
            out.append(" ")
        elif unicodedata.decomposition(char).startswith("<fraction>"):  # "¾" is 3/4, "1½" is 1 1/2
            out.append((" " if out and out[-1].isdigit() else "") + unicodedata.normalize("NFKC", char).replace("\u2044", "/"))
        else:
            out.append(char)
    return "".join(out)


def value(number: str) -> Fraction:
    """The exact value of a `NUMBER` match (its thousands separators dropped, decimals past MAX_DECIMALS cut)."""
    whole, point, decimals = number.replace(",", "").replace(" ", "").partition(".")
    return Fraction(f"{whole or 0}{point}{decimals[:MAX_DECIMALS]}")
