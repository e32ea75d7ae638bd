"""The second checker: each hidden call's answer against the canonical solution's own answer.

HumanEval's asserts are loose in ways a wrong function can use: truthiness where a bool is
expected (`assert candidate(x)` holds for 26), `abs(x - y) < 1e-6` (an error of 9e-7 holds),
`== True` (1 holds), `==` across int and float. This checker compares each answer the candidate
gave in the hidden test with what the canonical solution returns for the same arguments, by
`same_answer`: the same exact type at every level (a bool is not an int or a float, a tuple not a
list, a str not bytes), except that numbers compare by value across int and float (the prompts
show ints where canonical solutions return floats, HumanEval/130's `tri(3) = [1, 3, 2, 8]`, and
every test's `==` takes either: the checker is no stricter than the task), equal values, and
floats equal to a relative 1e-9 (absolute 1e-12 near zero), the rounding differences of honest
implementations and no more. NaN equals NaN.

The canonical answers are computed once per problem (`profile.measure`, with the inputs) and kept
wire-tagged in `Reference`; a call whose arguments differ from the recorded ones (a test that
draws its inputs from an unseeded `random`) is answered by the reference function live, in the
trusted parent, on a fresh copy of the arguments.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tasks.code.sandbox._wire import WireError, decode, encoder, safe_text

REL_TOL = 1e-9
ABS_TOL = 1e-12
_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlist = 60, 60, 6


@dataclass(frozen=True)
class Reference:
    """The canonical solution's answer to each call of the hidden test, in order: `inputs` as
    wire-tagged (args, kwargs), `outputs` wire-tagged answers (see `_wire.py`)."""

    inputs: tuple[tuple[Any, Any], ...]
    outputs: tuple[Any, ...]


def same_answer(got: Any, want: Any, depth: int = 0) -> str | None:
    """None when `got` is `want` by the rule above; else a short reason. Both are plain builtins
    (decoded from the wire), so nothing here runs candidate code; depth is bounded by the wire's."""
    if type(got) is not type(want):
        if type(got) in _NUMBERS and type(want) in _NUMBERS:
            return _same_number(got, want)
        return f"{type(got).__name__} where the reference returns {type(want).__name__}"
    if type(want) is float:
        if (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            return None
        return f"{_show(got)} where the reference returns {_show(want)}"
    if type(want) in (list, tuple):
        if len(got) != len(want):
            return f"{len(got)} items where the reference returns {len(want)}"
        for index, (item, wanted) in enumerate(zip(got, want)):
            reason = same_answer(item, wanted, depth + 1)
            if reason is not None:
                return f"item {index}: {reason}"
        return None
    if type(want) in (set, frozenset, dict):
        if got != want:  # builtin keys: exact equality first (the wire bounds their hashing)
            return "a different " + type(want).__name__
        # Equal keys may still differ in type (1, 1.0, True): look each one up in the reference.
        wanted_keys = {key: key for key in want}
        for key in got:
            reason = same_answer(key, wanted_keys[key], depth + 1)
            if reason is None and type(want) is dict:
                reason = same_answer(got[key], want[key], depth + 1)
            if reason is not None:
                return f"at key {_show(key)}: {reason}"
        return None
    return None if got == want else f"{_show(got)} where the reference returns {_show(want)}"


_NUMBERS = (int, float)  # matched by exact type: bool, a subclass of int, is not among them


def _same_number(got: int | float, want: int | float) -> str | None:
    """An int against a float, by value: exact when equal, else within the float tolerance."""
    if got == want:
        return None
    try:
        close = math.isclose(float(got), float(want), rel_tol=REL_TOL, abs_tol=ABS_TOL)
    except OverflowError:  # an int past the float range equals no float
        close = False
    return None if close else f"{_show(got)} where the reference returns {_show(want)}"


def _show(value: Any) -> str:
    """A short, printable rendering of a plain value (an int past the digit limit included)."""
    try:
        return safe_text(_repr.repr(value), 120)
    except ValueError:
        return f"<{type(value).__name__}>"


_SKIP = object()


class ReferenceCheck:
    """Compares the candidate's answer to judged call k of one run with the reference's answer."""

    def __init__(self, reference: Reference, function: Callable[..., Any] | None, skip_other_arguments: bool = False) -> None:
        """`function` answers calls whose arguments differ from the recorded ones; with
        `skip_other_arguments` such calls are not compared at all (the differential run, whose
        reference is the first run's answers)."""
        self.reference, self.function, self.skip_other_arguments = reference, function, skip_other_arguments
        self.encode, self.reset = encoder()
        self.compared = 0
        self.mismatch: str | None = None

    def expected(self, call: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The reference's answer for these arguments; WireError when it cannot be had."""
        self.reset()
        tagged = [self.encode(tuple(args)), self.encode(dict(kwargs))]
        if call < len(self.reference.inputs) and list(self.reference.inputs[call]) == tagged:
            return decode(self.reference.outputs[call])
        if self.skip_other_arguments:
            return _SKIP
        if self.function is None:
            raise WireError("the call's arguments differ from the recorded ones and there is no reference function")
        try:
            value = self.function(*decode(tagged[0]), **decode(tagged[1]))
        except Exception as error:  # the reference's own failure: no expected answer for this call
            raise WireError(f"the reference raised {type(error).__name__}") from None
        self.reset()
        return decode(self.encode(value))

    def compare(self, call: int, args: tuple[Any, ...], kwargs: dict[str, Any], answer: Any) -> None:
        """Record the first call whose answer differs from the reference's."""
        self.compared += 1
        if self.mismatch is not None:
            return
        try:
            expected = self.expected(call, args, kwargs)
            reason = None if expected is _SKIP else same_answer(answer, expected)
        except WireError as error:
            reason = str(error)
        if reason is not None:
            self.mismatch = f"call {call}: {reason}"

    def held(self) -> bool:
        """Every call of the reference's run was made and answered as the reference answers."""
        return self.mismatch is None and self.compared >= len(self.reference.outputs)
