"""Parse `task.subset` for MATH: `level=1,2;subject=Algebra,Number Theory`.

Clauses are separated by `;`, values by `,`; keys are `level` (1-5) and `subject` (the seven MATH
subjects, case-insensitive). A problem is kept when it matches every clause given. Unknown keys or
values raise `HarnessError` naming the field and the accepted values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.core import HarnessError

SUBJECTS = (
    "Algebra",
    "Counting & Probability",
    "Geometry",
    "Intermediate Algebra",
    "Number Theory",
    "Prealgebra",
    "Precalculus",
)
LEVELS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class MathSubset:
    """Levels and subjects to keep; an empty set means "all"."""

    levels: frozenset[int] = frozenset()
    subjects: frozenset[str] = frozenset()

    def keeps(self, row: dict[str, Any]) -> bool:
        return (not self.levels or int(row["level"]) in self.levels) and (
            not self.subjects or row["subject"] in self.subjects
        )


def _levels(values: list[str]) -> frozenset[int]:
    known = {str(level): level for level in LEVELS}
    unknown = [value for value in values if value not in known]
    if unknown:
        raise HarnessError(f"task.subset: unknown level {unknown[0]!r} (levels are 1-5)")
    return frozenset(known[value] for value in values)


def _subjects(values: list[str]) -> frozenset[str]:
    known = {subject.lower(): subject for subject in SUBJECTS}
    unknown = [value for value in values if value.lower() not in known]
    if unknown:
        raise HarnessError(f"task.subset: unknown subject {unknown[0]!r} (subjects: {', '.join(SUBJECTS)})")
    return frozenset(known[value.lower()] for value in values)


def parse_subset(text: str | None) -> MathSubset:
    """`None` or blank keeps everything; see the module docstring for the syntax."""
    if not text or not text.strip():
        return MathSubset()
    levels: frozenset[int] = frozenset()
    subjects: frozenset[str] = frozenset()
    for clause in filter(None, (part.strip() for part in text.split(";"))):
        key, sep, raw = clause.partition("=")
        values = [value.strip() for value in raw.split(",") if value.strip()]
        if not sep or not values:
            raise HarnessError(f"task.subset: clause {clause!r} must look like key=value[,value] (e.g. level=1,2)")
        key = key.strip().lower()
        if key == "level":
            levels = _levels(values)
        elif key == "subject":
            subjects = _subjects(values)
        else:
            raise HarnessError(f"task.subset: unknown key {key!r} (use level= and/or subject=)")
    return MathSubset(levels, subjects)
