"""Read what a delivered message states, field by field: the ids it names, the words it uses, the
numbers left once the ids are taken out.

The scenarios' message readers (`read_message` in each scenario module) use these helpers to record,
in the environment, what the user was told; the graphs compare those records with the facts. Text
is read in NFKC form with every Unicode decimal digit as its ASCII digit (as `number_reader` does),
so a fullwidth `Ｏ－７７８１` names O-7781 and `Ｒａｉｎ` says rain.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from tasks.agent.number_reader import Reading, ascii_digits, read_numbers

_WORD = re.compile(r"[^\W\d_]+")


def normal_text(text: str) -> str:
    """`text` as a person reads it: NFKC form, every Unicode decimal digit as its ASCII digit."""
    return ascii_digits(unicodedata.normalize("NFKC", text))


@dataclass(frozen=True)
class Statement:
    """The ids a message names (in order, repeats kept) and the numbers of the rest of its text."""

    ids: tuple[str, ...]
    rest: Reading


def _upper(match: re.Match[str]) -> str:
    return match.group().upper()


def read_statement(text: str, id_pattern: re.Pattern[str], canonical: Callable[[re.Match[str]], str] = _upper) -> Statement:
    """The ids `id_pattern` finds in `text` (each as `canonical` writes it, by default upper-cased),
    and the numbers the text states besides them."""
    plain = normal_text(text)
    ids = tuple(canonical(match) for match in id_pattern.finditer(plain))
    return Statement(ids, read_numbers(id_pattern.sub(" ", plain)))


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased, in order (letters only: digits and signs split words)."""
    return _WORD.findall(normal_text(text).lower())
