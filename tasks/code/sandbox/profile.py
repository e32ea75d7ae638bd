"""What a correct solution makes the hidden test do, measured once per problem in the parent.

The canonical solution is the task's own trusted code, so it runs here, in-process, through the
same trusted test (`runner.py`) a candidate faces, with each argument and answer passed through
the wire format as a jail's would be. Two things come out:
- `cases`: how many asserts ran. A candidate's run that evaluates fewer fails, so an early end or
  an answer that empties a test's loop (`for x in candidate(...)`) can never pass;
- `inputs`: the argument lists the test passed, in order. The shield replays them in a jail, so
  its run sees the hidden test's own inputs, answers withheld (`tasks.code.shield`);
- `outputs`: the canonical solution's answer to each of them, for the second checker
  (`reference.py`), which compares a candidate's answers with these.
The test runs in the reference program's namespace, as a candidate's does (`runner.py`).
"""

from __future__ import annotations

import builtins
import functools
from dataclasses import dataclass
from typing import Any

from tasks.code.sandbox._wire import WireError, decode, encoder
from tasks.code.sandbox.instrument import instrument
from tasks.code.sandbox.reference import Reference
from tasks.code.sandbox.runner import CandidateFailure, run_check


@dataclass(frozen=True)
class TestProfile:
    """`cases` asserts ran with the canonical solution, which passed (`passed`); `inputs` holds
    each call's (args, kwargs) and `outputs` its answer, as wire-tagged values (decode with
    `_wire.decode`)."""

    cases: int
    inputs: tuple[tuple[Any, Any], ...]
    passed: bool
    outputs: tuple[Any, ...] = ()

    def reference(self) -> Reference:
        """The canonical answers, for `run_tests(reference=...)`."""
        return Reference(self.inputs, self.outputs)

    def replay(self) -> tuple[tuple[tuple[Any, ...], dict[str, Any]], ...]:
        """The inputs decoded to fresh plain values, ready for `run_tests(replay=...)`."""
        return tuple((tuple(decode(args)), decode(kwargs)) for args, kwargs in self.inputs)


@functools.lru_cache(maxsize=1024)
def measure(prompt: str, canonical_program: str, test_source: str, entry_point: str) -> TestProfile:
    """Run `canonical_program` (prompt + canonical solution) against the test in this process;
    `passed` is False (and the profile unusable) when it does not load or fails its own test."""
    namespace: dict[str, Any] = {"__name__": "__canonical__", "__builtins__": builtins}
    try:
        exec(compile(canonical_program, "<canonical>", "exec"), namespace)
        function = namespace[entry_point]
    except Exception:  # a data row whose reference does not load: no profile, not a crashed run
        return TestProfile(0, (), False)
    encode, reset = encoder()
    inputs: list[tuple[Any, Any]] = []
    outputs: list[Any] = []

    def call(args: tuple[Any, ...], kwargs: dict[str, Any], case: int | None) -> Any:
        reset()
        tagged = (encode(tuple(args)), encode(dict(kwargs)))
        inputs.append(tagged)
        try:
            value = function(*decode(tagged[0]), **decode(tagged[1]))
        except Exception as error:
            raise CandidateFailure("raised", f"{type(error).__name__}: {error}") from None
        reset()
        outputs.append(encode(value))
        try:
            return decode(outputs[-1])
        except WireError as error:
            raise CandidateFailure("opaque", str(error)) from None

    run = run_check(instrument(test_source), canonical_program, entry_point, call)
    passed = run.failure is None and not run.assertion_failed and run.test_error is None
    return TestProfile(len(run.cases), tuple(inputs), passed, tuple(outputs))
