"""The test file's code for each call (`sandbox/_testfile.py`): the arguments written as a test
file writes them, and the jail's own objects made constants of the code, looked up by no name.

These run in the parent, on the same functions the jail runs between calls; the jail's own use of
them is measured in `test_sandbox_stack.py` (`test_the_caller_looks_up_no_name_but_the_candidates`).
"""

from __future__ import annotations

import math
import subprocess
import sys
import types
from typing import Any

import pytest

from tasks.code.sandbox import _gate, _testfile  # type: ignore[attr-defined]

VALUES: list[Any] = [
    0, -7, 2**64, -(2**3000), True, False, None, 1.5, -0.0, 1e300, float("inf"), float("-inf"),
    "", "it's \"quoted\"\n\x00\udc80", b"\x00\xff'", [], [1, [2, [3]]], (), (1,), (1, "a", (2.5,)),
    {}, {"a": 1, 2: [3], (4,): {5: None}}, set(), {1, "b", (2,)}, frozenset(), frozenset({1, 2}),
]


def _exact(left: Any, right: Any) -> bool:
    """Equal, and of the same exact types all the way down (`1 == True`, `1.0 == 1` are not)."""
    if type(left) is not type(right):
        return False
    if type(left) is float:
        return (math.isnan(left) and math.isnan(right)) or (left == right and math.copysign(1, left) == math.copysign(1, right))
    if type(left) in (list, tuple):
        return len(left) == len(right) and all(map(_exact, left, right))
    if type(left) is dict:
        return list(map(type, left)) == list(map(type, right)) and left.keys() == right.keys() and all(_exact(left[k], right[k]) for k in left)
    return bool(left == right)


@pytest.mark.parametrize("value", VALUES + [float("nan")], ids=repr)
def test_a_value_is_written_as_a_test_file_writes_it(value: Any) -> None:
    written = _testfile.literal(value)
    assert _exact(eval(written, {"__builtins__": {"float": float, "set": set, "frozenset": frozenset}}), value), written


def test_an_int_past_the_lowest_digit_limit_is_written_in_hex() -> None:
    """A candidate may set `sys.set_int_max_str_digits(640)`, the lowest: `repr` and `compile` of a
    longer decimal would raise in the jail's code; hex has no limit."""
    code = "import sys; sys.set_int_max_str_digits(640)\nfrom tasks.code.sandbox import _testfile\nv = -(10**700) + 3\nassert eval(_testfile.literal(v)) == v\nprint(_testfile.literal(10**600)[:2], _testfile.literal(10**700)[:3])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["10", "0x2"]


def test_a_call_is_written_with_its_keywords_but_none_a_source_cannot_pass() -> None:
    assert _testfile.call_source("candidate", ([1], "x"), {"key": 2.5}) == "candidate([1], 'x', key=2.5)"
    assert _testfile.call_source("f", (), {"if": 1, "a b": 2, "__debug__": 3, "ok": None}) == "f(ok=None)"


def _steps() -> dict[str, Any]:
    return {"report": print, "outcome": [], "BaseException": BaseException}


def test_the_jails_names_become_constants_and_leave_the_code_names() -> None:
    source = "try:\n    outcome.extend((True, candidate([1, 2, 3], k='x')))\nexcept BaseException:\n    report()\nreport()\n"
    objects = _steps()
    code = _testfile.bound(compile(source, "t.py", "exec"), objects)
    assert code.co_names == ("extend", "candidate")  # in the order of first use, as compiled without the others
    held = [constant for constant in code.co_consts if constant is objects["outcome"] or constant is print or constant is BaseException]
    assert len(held) == 3
    namespace: dict[str, Any] = {"candidate": lambda values, k: [*values, k]}
    types.FunctionType(code, namespace)()
    assert objects["outcome"] == [True, [1, 2, 3, "x"]] and set(namespace) == {"candidate"}


def test_a_call_too_large_for_one_byte_indices_is_refused_by_bound() -> None:
    source = "candidate(" + ", ".join(f"[{i}, {i}]" for i in range(300)) + ")\nreport()\n"
    with pytest.raises(ValueError, match="too many constants"):
        _testfile.bound(compile(source, "t.py", "exec"), _steps())


def test_stand_ins_are_replaced_by_the_arguments() -> None:
    objects = _steps()
    code = _testfile.bound(compile("outcome.append(candidate('\\x00a0', k='\\x00kk'))\n", "t.py", "exec"), objects, {"\x00a0": [9], "\x00kk": {1: 2}})
    types.FunctionType(code, {"candidate": lambda value, k: (value, k)})()
    assert objects["outcome"] == [([9], {1: 2})]


@pytest.mark.parametrize(
    "change",
    ["another constant's index", "a constant not a string replaced", "a name that is another string", "a jump moved"],
)
def test_the_gate_rebuilds_only_what_bound_changes(change: str) -> None:
    """`_gate.rebuilt` makes a code object with no audit event, so it refuses any other change: a
    wrong index or a forged constant could read or write memory outside the code's tuples."""
    code = compile("x = candidate((1, 2), 'a')\nif x:\n    y = 3\n", "t.py", "exec")
    data, consts, names = bytearray(code.co_code), list(code.co_consts), list(code.co_names)
    load_const = __import__("opcode").opmap["LOAD_CONST"]
    at = data.index(load_const)
    if change == "another constant's index":
        data[at + 1] = len(consts) + 5
    elif change == "a constant not a string replaced":
        consts[consts.index((1, 2))] = object()
    elif change == "a name that is another string":
        names[0] = "something_else"
    else:
        jump = next(i for i in range(0, len(data), 2) if __import__("opcode").opname[data[i]].startswith("POP_JUMP"))
        data[jump + 1] += 1
    with pytest.raises(ValueError, match="rebuilt: only"):
        _gate.rebuilt(code, bytes(data), tuple(consts), tuple(names))
    assert _gate.rebuilt(code, code.co_code, code.co_consts, code.co_names).co_consts == code.co_consts
