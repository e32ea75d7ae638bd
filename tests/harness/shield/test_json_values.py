"""One JSON-value equality: numbers by value, a boolean never a number; canonical text agrees with it."""

from __future__ import annotations

from typing import Any

import pytest

from harness.shield import canonical_json, same_value

# (left, right, equal as JSON values)
PAIRS = [
    ("int_and_integral_float", 612, 612.0, True),
    ("negative_zero", -0.0, 0, True),
    ("different_numbers", 612, 612.5, False),
    ("true_is_not_one", True, 1, False),
    ("false_is_not_zero", False, 0.0, False),
    ("nested_numbers", {"fare": [612, {"tax": 1.0}]}, {"fare": [612.0, {"tax": 1}]}, True),
    ("key_order", {"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
    ("missing_key", {"a": 1}, {"a": 1, "b": None}, False),
    ("string_is_not_number", "612", 612, False),
    ("null_is_not_false", None, False, False),
    ("big_int_and_float", 10**16 + 1, 1e16, False),
]


@pytest.mark.parametrize(("left", "right", "equal"), [case[1:] for case in PAIRS], ids=[case[0] for case in PAIRS])
def test_same_value_and_canonical_text_agree(left: Any, right: Any, equal: bool) -> None:
    assert same_value(left, right) is equal
    assert (canonical_json(left) == canonical_json(right)) is equal


def test_an_honest_integral_float_output_is_not_a_forged_one() -> None:
    """Replay logged outputs as `json.dumps` text, so `612.0` recorded against a real `612` was
    `tool_outputs_forged`; the replay log (`tasks.agent.env`) now writes `canonical_json`."""
    from tasks.agent.env import _canonical

    assert _canonical({"price": 612.0, "ok": True}) == _canonical({"ok": True, "price": 612})
    assert _canonical({"ok": 1}) != _canonical({"ok": True})
