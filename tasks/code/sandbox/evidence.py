"""The trusted side: read the sandbox's evidence file, decode tagged values, and judge each case.

Decoding rebuilds only builtin values (int, float, str, bool, None, list, tuple, dict, set,
frozenset); anything the sandbox tagged as opaque becomes an `Opaque` that equals nothing, so a
forged `__eq__`, an `int` subclass or an object lying about `__class__` can never compare equal.
Comparisons run here, in the parent, on those plain values.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tasks.code.sandbox.instrument import Site
from tasks.code.sandbox.result import CaseResult


class Opaque:
    """A value of a non-builtin type reported by the sandbox; equal to nothing, not even itself."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f"<opaque {self.type_name}>"


class UndecodableError(ValueError):
    """A record that is not a well-formed tagged value."""


_CONTAINERS: dict[str, Callable[[list[Any]], Any]] = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}


def decode(tagged: Any) -> Any:
    """Rebuild a plain value from its tag; raise UndecodableError for anything malformed."""
    if type(tagged) is not tuple or not tagged or type(tagged[0]) is not str:
        raise UndecodableError(f"not a tagged value: {tagged!r:.80}")
    tag = tagged[0]
    if tag == "none":
        return None
    if tag == "bool" and type(tagged[1]) is bool:
        return tagged[1]
    if tag == "int" and type(tagged[1]) in (int, str):
        return int(tagged[1]) if type(tagged[1]) is str else tagged[1]
    if tag == "float" and type(tagged[1]) is str:
        return float(tagged[1])
    if tag == "str" and type(tagged[1]) is str:
        return tagged[1]
    if tag in _CONTAINERS and type(tagged[1]) is list:
        items = [decode(item) for item in tagged[1]]
        return _CONTAINERS[tag](items) if tag in ("list", "tuple") else _CONTAINERS[tag](_hashable(items))
    if tag == "dict" and type(tagged[1]) is list:
        return {_hashable([decode(k)])[0]: decode(v) for k, v in tagged[1]}
    if tag in ("opaque", "too_large"):
        return Opaque(str(tagged[1]) if len(tagged) > 1 else tag)
    raise UndecodableError(f"unknown tag {tag!r:.40}")


def _hashable(items: list[Any]) -> list[Any]:
    for item in items:
        hash(item)  # unhashable plain values cannot have come from a real set or dict key
    return items


def is_plain(value: Any) -> bool:
    """True when no Opaque hides anywhere inside a decoded value."""
    if isinstance(value, Opaque):
        return False
    if type(value) in (list, tuple, set, frozenset):
        return all(is_plain(item) for item in value)
    if type(value) is dict:
        return all(is_plain(k) and is_plain(v) for k, v in value.items())
    return True


_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le, "Gt": operator.gt,
    "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not, "In": lambda a, b: a in b,
    "NotIn": lambda a, b: a not in b,
}


def _truth(value: Any) -> bool:
    return is_plain(value) and bool(value)


def _judge_values(site: Site, values: Sequence[Any]) -> bool:
    if not all(is_plain(value) for value in values):
        return False
    if site.kind == "equals_literal":
        return len(values) == 1 and _equal(values[0], site.expected)
    if site.kind == "not":
        return len(values) == 1 and not values[0]
    if site.kind == "truth":
        return len(values) == 1 and _truth(values[0])
    if len(values) != len(site.ops) + 1:
        return False
    try:
        return all(bool(_OPS[op](values[i], values[i + 1])) for i, op in enumerate(site.ops))
    except TypeError:  # e.g. "<" between str and int: the original assert would have raised
        return False


def _equal(actual: Any, expected: Any) -> bool:
    """Python `==` on plain values; NaN never equals (as in the original assert)."""
    if isinstance(actual, float) and math.isnan(actual):
        return False
    return bool(actual == expected)


@dataclass(frozen=True)
class ParsedEvidence:
    """Everything the sandbox reported under the correct nonce, in order."""

    records: tuple[tuple[Any, ...], ...]
    forged_lines: int


def parse_evidence(raw: bytes, nonce: str) -> ParsedEvidence:
    """Split the evidence file into records; lines without the nonce are counted as forged."""
    prefix = nonce + " "
    records: list[tuple[Any, ...]] = []
    forged = 0
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.startswith(prefix):
            forged += 1
            continue
        try:
            record = ast.literal_eval(line[len(prefix) :])
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            forged += 1
            continue
        if type(record) is not tuple or not record or type(record[0]) is not str:
            forged += 1
            continue
        records.append(record)
    return ParsedEvidence(tuple(records), forged)


def judge_case(record: tuple[Any, ...], sites: Sequence[Site]) -> CaseResult:
    """A `("case", index, site, payload, returns)` record judged against the parent's site."""
    _, index, site_index, payload, returns = record
    site = sites[site_index]
    if payload[0] == "raised":
        return CaseResult(index, site_index, False, error=f"{payload[1]}: {payload[2]}")
    try:
        values = tuple(decode(value) for value in payload[1])
        returned = [decode(value) for value in returns]
    except UndecodableError as error:
        return CaseResult(index, site_index, False, error=f"undecodable value: {error}")
    if not all(is_plain(value) for value in returned):
        opaque = next(v for v in returned if not is_plain(v))
        return CaseResult(index, site_index, False, values, error=f"candidate returned a non-builtin value {opaque!r}")
    return CaseResult(index, site_index, _judge_values(site, values), values)
