"""The one equality of JSON values the shield uses, and the canonical text that agrees with it.

JSON has one number type, so `612` and `612.0` are the same value; a boolean is not a number (in
Python `True == 1`). Every comparison of JSON values in the shield goes through `same_value`: the
invariants' claims against facts, a recorded tool output against a replayed one. Where values are
compared as text (a replay's call log in SQLite), `canonical_json` writes them so that two texts are
equal exactly when `same_value` holds: keys sorted, an integral float written as the integer.
"""

from __future__ import annotations

import json
import math
from typing import Any


def same_value(left: Any, right: Any) -> bool:
    """JSON equality: numbers by value, a boolean never equal to a number, maps by keys and values."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(same_value(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same_value(left[key], right[key]) for key in left)
    return type(left) is type(right) and left == right


def _numbers_by_value(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _numbers_by_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_numbers_by_value(item) for item in value]
    return value


def canonical_json(value: Any) -> str:
    """JSON text that is equal for two values exactly when `same_value` holds for them; raises
    `ValueError` for what is not JSON (NaN, infinities)."""
    return json.dumps(_numbers_by_value(value), sort_keys=True, allow_nan=False, separators=(",", ":"))
