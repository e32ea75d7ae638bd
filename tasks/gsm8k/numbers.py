"""One number grammar for GSM8K text, used by the anchor (`answers`) and the shield (`shield`) alike.

A reader of a solution sees the same numbers whether they sit in a step or in the final answer, so
both read them here (the table in docs/tasks.md, "GSM8K answer forms", lists each form):

- `normalise` first maps what a reader reads as ASCII to ASCII: every Unicode decimal digit
  (fullwidth `１８`, Arabic-Indic) to its digit, every space separator (no-break, thin, narrow
  no-break) to a space, every dash a reader reads as minus (U+2212 minus sign, U+2013 en dash,
  U+2012 figure dash, U+2010/U+2011 hyphens, U+FE63, U+FF0D) to `-`, the multiplication signs
  `×`, `·`, `⋅`, `∙`, `✕` to `*`, `÷` to `/`, the fraction slash `⁄` to `/`, and a vulgar
  fraction to its digits (`¾` to `3/4`, `1½` to `1 1/2`), a superscript to a power (`9²` to
  `9^2`), the decimal separators a reader reads as a point (fullwidth `．`, Arabic `٫`) to `.` and
  the thousands separators (fullwidth `，`, Arabic `٬`) to `,`; format characters (category Cf:
  zero-width space, soft hyphen, joiners), which a renderer does not show, are dropped
  (`18\u200b5` is 185). The em dash stays punctuation ("the answer—18" is not negative). Any other
  character is kept as it is, and a reader of this grammar treats it as unknown. One pass, linear.
- `NUMBER` is a number: digits with thousands groups of three separated by commas (`70,000`) or by
  single spaces (`70 000`), at most six groups, then an optional decimal part; or up to 30 plain
  digits with an optional decimal part; or a bare decimal (`.5`). A decimal part has at most
  MAX_DECIMALS digits and is read exactly; a longer one is no number at all (never cut). A dot is always the decimal point and a comma
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
DECIMAL_POINTS = "\uff0e\u066b"  # fullwidth full stop, Arabic decimal separator
THOUSANDS_SEPARATORS = "\uff0c\u066c"  # fullwidth comma, Arabic thousands separator
_ASCII = {
    **{ord(c): "-" for c in MINUS_DASHES},
    **{ord(c): "*" for c in TIMES_SIGNS},
    **{ord(c): "." for c in DECIMAL_POINTS},
    **{ord(c): "," for c in THOUSANDS_SEPARATORS},
    ord("\u00f7"): "/",
    ord("\u2044"): "/",
}
_SUPERSCRIPTS = dict(zip("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079", "0123456789", strict=True))

# Thousands groups are capped at six (10^21) so a long run of "100 100 100 ..." costs a bounded
# backtrack at each start, never a quadratic one.
# A whole part is read up to 30 digits: a longer run is no number (and never reaches int(), which
# refuses strings over 4,300 digits). A decimal part is read up to MAX_DECIMALS digits, exactly; a
# number whose decimals run longer matches nowhere (the lookahead refuses it, with a backtrack of at
# most MAX_DECIMALS characters), so `18.000…01` is never read as 18.
MAX_DECIMALS = 60
_DECIMALS = r"(?:\.\d{1,60})?(?!\.?\d)"
NUMBER_PATTERN = (
    rf"(?:\d{{1,3}}(?:,\d{{3}}){{1,6}}(?!\d|,\d)|\d{{1,3}}(?: \d{{3}}){{1,6}}(?!\d| \d{{3}})){_DECIMALS}"
    rf"|\d{{1,30}}(?!\d){_DECIMALS}|\.\d{{1,60}}(?!\d)"
)
MAX_TEXT_CHARS = 20_000  # every GSM8K reader of a candidate (anchor, shield) reads this far; a solution is under 2,000
NUMBER = re.compile(rf"(?<![\w.])(?:{NUMBER_PATTERN})")
SCALES = {"thousand": 1000, "million": 10**6, "billion": 10**9}
SCALE_WORD = re.compile(r"\s+(thousand|million|billion)\b", re.IGNORECASE)


def normalise(text: str) -> str:
    """`text` with the characters a reader reads as ASCII digits, spaces, minus and operators made ASCII."""
    if text.isascii():
        return text
    out = []
    in_power = False  # the previous character was a superscript digit: "9¹²" is 9^12
    for char in text.translate(_ASCII):
        if char in _SUPERSCRIPTS:
            out.append(_SUPERSCRIPTS[char] if in_power else "^" + _SUPERSCRIPTS[char])
            in_power = True
            continue
        in_power = False
        if char.isascii():
            out.append(char)
        elif unicodedata.category(char) == "Cf":
            continue  # zero-width space, soft hyphen: not shown, so not read
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
    """The exact value of a `NUMBER` match (its thousands separators dropped; its decimals, at most
    MAX_DECIMALS by the grammar, read exactly)."""
    whole, point, decimals = number.replace(",", "").replace(" ", "").partition(".")
    return Fraction(f"{whole or 0}{point}{decimals}")
