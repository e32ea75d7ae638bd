"""Read the numbers a text states the way a person reads them, failing closed.

The weekly-report service records every number its report states (`sent_numbers`) so that the
graph can compare them with the reports table. A reader that misses a number lets a made-up metric
through, so this one reads what a person reads:

- the text in NFKC form, so fullwidth and other compatibility forms of signs and separators read
  as theirs (`－`, `⁻`, `．`), and every Unicode decimal digit (fullwidth `１３４２`, Arabic-Indic
  `١٣٤٢`, ...) as its ASCII digit;
- a sign: `+`, `−` (U+2212) or any dash (`-`, `–`, `‐`, ...) directly before the number, when what
  precedes it is neither a letter nor a digit (`-2.1` and `(−2.1)` are minus 2.1); after a digit it
  joins (`2024-06-03`, `1180-1342` read positive), and in `2024-W23` it stands before a letter, so
  `W23` reads as 23;
- decimals with or without a leading digit (`2.1`, `.93`), and thousands groups (`51,002.0`);
- sentence punctuation after a number (`2.1%.`, `1342,`) is not part of it.

*Unparsed*, which the service records as text and the graph counts as an unbacked number, never as
silence: a run of digit-like text that none of these shapes covers (`3.2.1`, `1,34`, `1342,51002`);
a number glued by a dash to a preceding letter (`churn-2.1`: minus or a hyphen, a reader cannot
tell); and every numeric character that is not a decimal digit (`²`, `½`, `①`, `Ⅻ`), read before
NFKC would turn it into digits. Numbers written in words are not read.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_PLUS, _MINUS = "+", "\u2212"  # any character of category Pd (a dash) is a minus too
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


def _is_sign(ch: str) -> bool:
    return ch in (_PLUS, _MINUS) or unicodedata.category(ch) == "Pd"


def _sign(text: str, start: int) -> float | None:
    """The sign written directly before position `start`: +1 or -1, +1 when no sign stands there or
    it follows a digit (a range or a date), None when it follows a letter (ambiguous)."""
    if start == 0 or not _is_sign(text[start - 1]):
        return 1.0
    before = text[start - 2] if start >= 2 else " "
    if before.isdigit():
        return 1.0
    if before.isalpha():
        return None
    return 1.0 if text[start - 1] == _PLUS else -1.0


def read_numbers(text: str) -> Reading:
    """Every number `text` states, and every digit-like piece it cannot read as one."""
    unparsed: list[str] = [ch for ch in text if ch.isnumeric() and unicodedata.category(ch) != "Nd"]
    plain = "".join(" " if ch.isnumeric() and unicodedata.category(ch) != "Nd" else ch for ch in text)
    normal = ascii_digits(unicodedata.normalize("NFKC", plain))
    numbers: list[float] = []
    for match in _RUN.finditer(normal):
        run = match.group().rstrip(".,")
        sign = _sign(normal, match.start())
        if sign is None or not any(shape.fullmatch(run) for shape in _SHAPES):
            unparsed.append(normal[match.start() - (sign is None) : match.start() + len(run)])
            continue
        numbers.append(sign * float(run.replace(",", "")))
    return Reading(tuple(numbers), tuple(unparsed))
