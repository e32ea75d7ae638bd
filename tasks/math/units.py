"""Units: an answer that states a unit other than the gold's (or the one asked for) is wrong.

Only a missing unit is forgiven. `stated_units` reads the units an answer names: `\\$` and
"dollars", "cents"/`¢`, `^\\circ`/`°`/"degrees", "radians", `%`/"percent", and length and time
words ("cm", "inches", "feet", "meters", "seconds", "minutes", "hours"...; a bare `m` only inside
`\\text{}`). `expected_units` are the gold's own units plus those the problem asks for ("how many
cents", "in degrees", "the degree measure", "express your answer in dollars"). `unit_conflict`
finds a stated unit whose kind (money, angle, percent, length, time) the expected units also have,
under a different name: `5.4 dollars` for a gold of 5.4 cents, `270/7 radians` for a degree measure.
A stated unit of a kind nothing expects is not judged (a problem that asks no unit cannot be
held to one). `strip_units` removes the units, so both checkers compare the numbers alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    name: str
    kind: str
    pattern: str  # in an answer
    asked: str  # the word(s) a problem uses when asking for it


_UNITS = (
    Unit("dollars", "money", r"\\\$|\bdollars?\b|\bUSD\b", r"dollars?"),
    Unit("cents", "money", r"\bcents?\b|¢|\\cent\b|\\textcent\b", r"cents?"),
    Unit("degrees", "angle", r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree\b|\bdegrees?\b", r"degrees?"),
    Unit("radians", "angle", r"\bradians?\b", r"radians?"),
    Unit("percent", "percent", r"\\?%|\bpercent\b", r"percent(?:age)?"),
    Unit("cm", "length", r"\bcm\b|\bcentimet(?:er|re)s?\b", r"centimet(?:er|re)s?|cm"),
    Unit("mm", "length", r"\bmm\b|\bmillimet(?:er|re)s?\b", r"millimet(?:er|re)s?"),
    Unit("m", "length", r"\\(?:text|mbox|mathrm)\s*\{\s*m\s*\}|\bmet(?:er|re)s?\b", r"met(?:er|re)s?"),
    Unit("km", "length", r"\bkm\b|\bkilomet(?:er|re)s?\b", r"kilomet(?:er|re)s?"),
    Unit("inches", "length", r"\binch(?:es)?\b", r"inch(?:es)?"),
    Unit("feet", "length", r"\bfeet\b|\bfoot\b|\bft\b", r"feet|foot"),
    Unit("yards", "length", r"\byards?\b|\byd\b", r"yards?"),
    Unit("miles", "length", r"\bmiles?\b", r"miles?"),
    Unit("seconds", "time", r"\bseconds?\b", r"seconds?"),
    Unit("minutes", "time", r"\bminutes?\b", r"minutes?"),
    Unit("hours", "time", r"\bhours?\b", r"hours?"),
    Unit("days", "time", r"\bdays?\b", r"days?"),
)
_STATED = {unit.name: re.compile(unit.pattern, re.IGNORECASE) for unit in _UNITS}
_KIND = {unit.name: unit.kind for unit in _UNITS}
_ASK = r"(?:how many|number of|in|in terms of|measured in|expressed in|answer in|measure in|measure,? in)"
_ASKED = {
    unit.name: re.compile(rf"\b{_ASK}\s+(?:[a-z]+\s+){{0,2}}?{unit.asked}\b|\b{unit.asked}\s+measure\b", re.IGNORECASE)
    for unit in _UNITS
}


def stated_units(answer: str) -> frozenset[str]:
    """The units named in `answer` (box content, or a marker's math plus its trailing words)."""
    return frozenset(name for name, pattern in _STATED.items() if pattern.search(answer))


def expected_units(gold: str, problem: str) -> frozenset[str]:
    """The gold's units and the units the problem asks for (see the module doc)."""
    asked = frozenset(name for name, pattern in _ASKED.items() if pattern.search(problem[:20_000]))
    return stated_units(gold) | asked


def unit_conflict(answer_units: frozenset[str], expected: frozenset[str]) -> str | None:
    """`"dollars for cents"` when a stated unit differs from an expected one of its kind, else None."""
    for stated in sorted(answer_units - expected):
        others = sorted(unit for unit in expected if _KIND[unit] == _KIND[stated])
        if others:
            return f"{stated} for {' or '.join(others)}"
    return None


def strip_units(answer: str) -> str:
    """`answer` without the unit words and signs `stated_units` reads (and empty `\\text{}` left over)."""
    text = answer
    for pattern in _STATED.values():
        text = pattern.sub(" ", text)
    text = re.sub(r"\\(?:text|mbox|mathrm|textrm)\s*\{\s*\}", " ", text)
    return re.sub(r"\s+", " ", text).strip()
