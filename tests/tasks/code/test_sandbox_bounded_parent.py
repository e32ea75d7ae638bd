"""The parent's work on data the candidate chose is bounded by construction (`_wire.py`).

A set or dict of int-subclass keys with a `__hash__` of their own is cheap to build in the jail;
the keys arrive as plain ints `k * (2**61 - 1)`, which all hash to 0, and rebuilding them in the
parent would be quadratic C work under the GIL, outside every deadline. Such a value must be
refused at once, alone and in a pooled run, where it would otherwise stall the honest candidate
next to it.
"""

from __future__ import annotations

import time

import pytest

from tasks.code import CodeAnchor, check_code_many
from tasks.code.loader import _bundled_rows
from tasks.code.sandbox import _wire

ROWS = {row["task_id"]: row for row in _bundled_rows()}
COLLIDING = """
class _Key(int):
    def __hash__(self):
        return id(self)
def has_close_elements(numbers, threshold):
    keys = [_Key(k * (2**61 - 1)) for k in range(1, 60_000)]
    return {SHAPE}
"""
SHAPES = {"set": "set(keys)", "dict": "{key: 0 for key in keys}", "frozenset_in_list": "[frozenset(keys)]"}


def anchor(task_id: str) -> CodeAnchor:
    row = ROWS[task_id]
    return CodeAnchor(task_id, row["prompt"], row["test"], row["entry_point"], row["canonical_solution"])


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(["S", [["h", hex(k * (2**61 - 1))] for k in range(1, 20)]], id="set"),
        pytest.param(["d", [[["h", hex(k * (2**61 - 1))], ["n"]] for k in range(1, 20)]], id="dict"),
        pytest.param(["F", [["t", [["h", hex(k * (2**61 - 1))]]] for k in range(1, 20)]], id="frozenset-of-tuples"),
    ],
)
def test_colliding_keys_are_refused_before_the_set_is_built(value: list) -> None:
    with pytest.raises(_wire.WireError, match="share one hash"):
        _wire.decode(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(["S", [["i", -1], ["i", -2], ["i", 5]]], {-1, -2, 5}, id="honest-collision-of-minus-one-and-two"),
        pytest.param(["S", [["i", 1], ["f", "1.0"], ["b", True]]], {1}, id="equal-keys-merge"),
        pytest.param(["d", [[["s", "a"], ["i", 1]], [["s", "a"], ["i", 2]]]], {"a": 2}, id="repeated-dict-key"),
    ],
)
def test_honest_sets_and_dicts_still_decode(value: list, expected: object) -> None:
    assert _wire.decode(value) == expected


def test_a_json_object_in_a_record_is_refused() -> None:
    with pytest.raises(_wire.WireError, match="JSON object"):
        _wire.loads(b'["return", 0, {"a": 1}]')


@pytest.mark.parametrize("shape", list(SHAPES))
def test_colliding_answer_alone_and_beside_an_honest_candidate(shape: str) -> None:
    hostile = COLLIDING.replace("{SHAPE}", SHAPES[shape])
    honest = ROWS["HumanEval/4"]["canonical_solution"]
    started = time.monotonic()
    outcomes = check_code_many([(anchor("HumanEval/0"), hostile), (anchor("HumanEval/4"), honest)], workers=2)
    seconds = time.monotonic() - started
    assert outcomes[0].outcome == "wrong_answer" and "share one hash" in outcomes[0].details["reason"]
    assert outcomes[1].correct, outcomes[1].details["reason"]
    assert seconds < 8, f"the pooled run took {seconds:.1f} s"
