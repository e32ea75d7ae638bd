"""Parameter domains inferred from the values accepted traces passed to a tool (for `mine`).

A domain is a JSON Schema that every observed value satisfies, as narrow as the evidence allows:
- the JSON types seen (`integer` when every number is whole, else `number`);
- an `enum` when the values are few (at most `max_enum` distinct) and each was seen at least
  `min_support` times, so one trace's id is never mistaken for a closed set;
- `minimum`/`maximum` over the numbers seen;
- for short strings without spaces, a `pattern` of their shared character-class skeleton, each run
  widened to `+` (`UA960`, `LH401` -> `^[A-Z]+[0-9]+$`), so a forged `demo_user_001` where honest
  traces passed `u_1042` is outside it while an unseen id of the same shape is not; when their
  skeletons differ, one class of every character kind seen with the lengths seen
  (`3RK2T9`, `ZFA04Y` -> `^[0-9A-Z]{6}$`);
- objects: `required` keys present every time, `additionalProperties: false`, each property's own
  domain; arrays: the domain of their items.
Nesting stops at `MAX_DEPTH`; below it only the types are kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 4
MAX_PATTERN_RUNS = 8  # longer skeletons are text, not identifiers
_SYNTAX = frozenset("\\^$.|?*+()[]{}/")
_CLASSES = (("A-Z", str.isupper), ("a-z", str.islower), ("0-9", str.isdigit))


@dataclass(frozen=True)
class DomainOptions:
    max_enum: int = 5
    min_support: int = 2


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _char_class(char: str) -> str | None:
    for name, test in _CLASSES:
        if char.isascii() and test(char):
            return name
    return None


def _literal(char: str) -> str:
    """`char` as an ECMA-262 pattern literal (Python's `re.escape` also escapes `-`, which ECMA refuses)."""
    return "\\" + char if char in _SYNTAX else char


def skeleton(text: str) -> tuple[str, ...] | None:
    """Runs of character classes (`A-Z`, `a-z`, `0-9`) and literal punctuation; None for text."""
    if not text or any(char.isspace() for char in text) or not text.isascii():
        return None
    runs: list[str] = []
    for char in text:
        klass = _char_class(char)
        token = f"[{klass}]+" if klass else _literal(char)
        if not runs or runs[-1] != token or klass is None:
            runs.append(token)
    return tuple(runs) if len(runs) <= MAX_PATTERN_RUNS else None


def _union_pattern(strings: Sequence[str]) -> str:
    """Identifiers whose shapes differ (`3RK2T9`, `ZFA04Y`): one class of every character kind seen,
    with the lengths seen (`^[0-9A-Z]{6}$`)."""
    kinds: set[str] = set()
    for text in strings:
        for char in text:
            kinds.add(_char_class(char) or ("\\" + char if char in "\\]^-[" else char))
    lengths = sorted({len(text) for text in strings})
    counted = f"{{{lengths[0]}}}" if len(lengths) == 1 else f"{{{lengths[0]},{lengths[-1]}}}"
    return "^[" + "".join(sorted(kinds)) + "]" + counted + "$"


def _types_schema(types: set[str]) -> Any:
    if {"integer", "number"} <= types:
        types = types - {"integer"}
    ordered = sorted(types)
    return ordered[0] if len(ordered) == 1 else ordered


def infer_domain(values: Sequence[Any], options: DomainOptions, depth: int = 0) -> dict[str, Any]:
    """The narrowest schema (see the module docstring) that every value in `values` satisfies."""
    types = {json_type(value) for value in values}
    schema: dict[str, Any] = {"type": _types_schema(types)}
    if depth >= MAX_DEPTH:
        return schema
    scalars = [value for value in values if json_type(value) in ("string", "integer", "number", "boolean")]
    if len(scalars) == len(values) and "boolean" not in types:
        counts = Counter(repr(value) for value in values)
        if len(counts) <= options.max_enum and min(counts.values()) >= options.min_support:
            schema["enum"] = sorted({value for value in values}, key=repr)
            return schema
    numbers = [value for value in values if json_type(value) in ("integer", "number")]
    if numbers:
        schema["minimum"], schema["maximum"] = min(numbers), max(numbers)
    strings = [value for value in values if isinstance(value, str)]
    if strings:
        shapes = {skeleton(text) for text in strings}
        if len(shapes) == 1 and None not in shapes:
            (shape,) = shapes
            assert shape is not None
            schema["pattern"] = "^" + "".join(shape) + "$"
        elif None not in shapes:
            schema["pattern"] = _union_pattern(strings)
    objects = [value for value in values if isinstance(value, dict)]
    if objects:
        keys = sorted({key for value in objects for key in value})
        schema["required"] = [key for key in keys if all(key in value for value in objects)]
        schema["properties"] = {
            key: infer_domain([value[key] for value in objects if key in value], options, depth + 1) for key in keys
        }
        schema["additionalProperties"] = False
    items = [item for value in values if isinstance(value, list) for item in value]
    if items:
        schema["items"] = infer_domain(items, options, depth + 1)
    return schema
