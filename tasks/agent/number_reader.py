"""Read the numbers a text states the way a person reads them, failing closed.

The weekly-report service records every number its report states (`sent_numbers`) so that the
graph can compare them with the reports table. A reader that misses a number lets a made-up metric
through, so this one reads what a person reads:

- every Unicode decimal digit (fullwidth `１３４２`, Arabic-Indic `١٣٤٢`, ...) as its ASCII digit;
- a sign: `-`, `−` (U+2212), `–`, `+` directly before the number and not after a letter or digit
  (`-2.1` is minus 2.1; in `2024-W23` the hyphen joins, and `W23` reads as 23);
- decimals with or without a leading digit (`2.1`, `.93`), and thousands groups (`51,002.0`);
- sentence punctuation after a number (`2.1%.`, `1342,`) is not part of it.

A run of digit-like text that none of these shapes covers (`3.2.1`, `1,34`, `1342,51002`) and
every other numeric character (`²`, `½`, `①`, `Ⅻ`) is *unparsed*: the service records its text,
and the graph counts it as an unbacked number, never as silence.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SIGNS = {"-": -1.0, "\u2212": -1.0, "\u2013": -1.0, "+": 1.0}
# A maximal run of digits and the separators a number may hold; shapes a run may take as a whole.
_RUN = re.compile(r"[0-9][0-9.,]*|\.[0-9][0-9.,]*")
_SHAPES = (
    re.compile(r"[0-9]+(?:\.[0-9]+)?"),
    re.compile(r"\.[0-9]+"),
    re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?"),
)


@dataclass(frozen=True)
class Reading:
    """The numbers a text states, in order, and the digit-like pieces it holds that are not numbers."""

    numbers: tuple[float, ...]
    unparsed: tuple[str, ...]


def ascii_digits(text: str) -> str:
    """`text` with every Unicode decimal digit (category Nd) replaced by its ASCII digit."""
    return "".join(str(unicodedata.decimal(ch)) if unicodedata.category(ch) == "Nd" else ch for ch in text)


def _sign(text: str, start: int) -> float:
    """The sign written directly before position `start`: +1 unless a sign character stands there
    and is not glued to a preceding letter or digit (a hyphen inside `2024-W23` is no minus)."""
    if start == 0 or text[start - 1] not in _SIGNS:
        return 1.0
    if start >= 2 and text[start - 2].isalnum():
        return 1.0
    return _SIGNS[text[start - 1]]


def read_numbers(text: str) -> Reading:
    """Every number `text` states, and every digit-like piece it cannot read as one."""
    normal = ascii_digits(text)
    numbers: list[float] = []
    unparsed: list[str] = []
    for match in _RUN.finditer(normal):
        run = match.group().rstrip(".,")
        if not any(shape.fullmatch(run) for shape in _SHAPES):
            unparsed.append(match.group())
            continue
        numbers.append(_sign(normal, match.start()) * float(run.replace(",", "")))
    outside = _RUN.sub(" ", normal)
    unparsed.extend(ch for ch in outside if ch.isnumeric())
    return Reading(tuple(numbers), tuple(unparsed))
