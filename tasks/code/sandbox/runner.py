"""The trusted test: run an instrumented `check(candidate)` in this process, on plain values.

The test's namespace is built fresh per run from trusted parts only: this interpreter's builtins,
the reference program (the prompt with the canonical solution, or the prompt alone where there is
none; executed from the task's own text, never from the candidate's program, so a redefined `poly`
or `encode_cyclic` cannot change what the test checks), and the test module. Only `candidate` is
the candidate: every other name, the entry point's own included (HumanEval/33's test compares
`candidate(l)` with `sort_third(l)`), is the reference's. `candidate` is a proxy: each call
crosses to the jail as plain, type-tagged values and its answer comes back decoded to builtins
(see `_wire.py`), so the test's `==`, `<`, `abs` or `math.fabs` apply Python's own semantics to
values the candidate cannot have forged. Nothing of the test, its expected values or its helpers
ever reaches the jail. With a `Reference`, each judged call's answer is also compared with the
canonical solution's (`reference.py`), the second checker.

A candidate failure inside the test (it raised, returned a non-builtin value, or its jail stopped)
is a `CandidateFailure`, a BaseException, and is also recorded when raised, so a test's own
`except Exception` can neither swallow it nor turn it into a pass. `replay` calls run before
`check` with their answers unjudged (the shield's hidden inputs); only a stopped jail counts there.
"""

from __future__ import annotations

import builtins
import functools
import reprlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from tasks.code.sandbox._wire import encoder, safe_text
from tasks.code.sandbox.instrument import InstrumentedTest
from tasks.code.sandbox.reference import Reference, ReferenceCheck
from tasks.code.sandbox.result import CaseResult

_KEPT_RETURNS = 4
_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlist = 120, 120, 12


class CandidateFailure(BaseException):
    """The candidate could not answer a call: `kind` is "raised", "opaque" or "stopped";
    `cause` is the raised type's name, or why the jail stopped ("timeout", "exited", "protocol", "output")."""

    def __init__(self, kind: str, reason: str, cause: str = "") -> None:
        super().__init__(reason)
        self.kind, self.reason, self.cause = kind, reason, cause


# A caller sends (args, kwargs) to the candidate and returns its plain answer, or raises
# CandidateFailure; `case` is the index of the case the call belongs to (None in a replay).
Caller = Callable[[tuple[Any, ...], dict[str, Any], "int | None"], Any]


@dataclass
class CheckRun:
    """What happened in the trusted test: its cases, the first candidate failure, the test's end."""

    cases: list[CaseResult] = field(default_factory=list)
    failure: CandidateFailure | None = None
    stopped: CandidateFailure | None = None
    assertion_failed: bool = False
    test_error: str | None = None
    calls: int = 0
    reference: ReferenceCheck | None = None


@functools.lru_cache(maxsize=1024)
def _helpers_code(helpers: str) -> CodeType | None:
    """The prompt compiled once; None when it is not a module on its own (then no helpers)."""
    try:
        return compile(helpers, "<prompt>", "exec")
    except (SyntaxError, ValueError):
        return None


def _namespace(helpers: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "__hidden_test__", "__builtins__": builtins}
    code = _helpers_code(helpers)
    if code is not None:
        try:
            exec(code, namespace)
        except Exception:  # a prompt that does not run alone contributes no helpers
            namespace = {"__name__": "__hidden_test__", "__builtins__": builtins}
    return namespace


def run_check(
    test: InstrumentedTest,
    helpers: str,
    entry_point: str,
    caller: Caller,
    replay: Sequence[tuple[tuple[Any, ...], dict[str, Any]]] = (),
    reference: Reference | None = None,
    record: list[tuple[Any, Any]] | None = None,
) -> CheckRun:
    """Run `check(candidate)` with `candidate` calling through `caller`, in a namespace built from
    `helpers` (the reference program); never raises for the candidate. With `reference`, every
    judged call's answer is compared with the reference's too (`CheckRun.reference`). `record`,
    when given, gets each judged call's wire-tagged ((args, kwargs), answer)."""
    encode, reset = encoder()
    run = CheckRun()
    judged_calls = [0]
    returns: list[list[str]] = []
    failed: dict[int, str] = {}
    sites: list[int] = []

    def current() -> int | None:
        return len(sites) - 1 if sites else None

    def call(args: tuple[Any, ...], kwargs: dict[str, Any], judged: bool) -> Any:
        if run.stopped is not None:
            raise run.stopped  # the jail is gone: every further call fails the same way
        run.calls += 1
        case = current() if judged else None
        index = judged_calls[0]
        judged_calls[0] += judged
        try:
            value = caller(args, kwargs, case)
        except CandidateFailure as failure:
            if failure.kind == "stopped":
                run.stopped = failure
            if judged or failure.kind == "stopped":
                run.failure = run.failure or failure
                if case is not None:
                    failed.setdefault(case, failure.reason)
            raise
        if case is not None and len(returns[case]) < _KEPT_RETURNS:
            returns[case].append(_shown(value))
        if judged and run.reference is not None:
            run.reference.compare(index, args, kwargs, value)
        if judged and record is not None:
            reset()
            tagged = (encode(tuple(args)), encode(dict(kwargs)))
            reset()
            record.append((tagged, encode(value)))
        return value

    def candidate(*args: Any, **kwargs: Any) -> Any:
        return call(args, kwargs, True)

    def case(site: int) -> None:
        sites.append(site)
        returns.append([])

    try:
        for args, kwargs in replay:
            try:
                call(args, kwargs, False)
            except CandidateFailure as failure:
                if failure.kind == "stopped":
                    raise
        namespace = _namespace(helpers)
        if reference is not None:
            function = namespace.get(entry_point)
            run.reference = ReferenceCheck(reference, function if callable(function) else None)
        namespace["__case__"] = case
        exec(test.code, namespace)
        namespace["check"](candidate)
    except CandidateFailure:
        pass  # recorded where it was raised
    except AssertionError:
        run.assertion_failed = True
        if sites:
            failed.setdefault(len(sites) - 1, "assert failed")
    except Exception as error:  # the test itself raised on the candidate's (plain) answer
        run.test_error = safe_text(f"{type(error).__name__}: {error}")
        if sites:
            failed.setdefault(len(sites) - 1, "the test raised " + run.test_error)
    lines = {site.index: site.line for site in test.sites}
    run.cases = [
        CaseResult(index, site, index not in failed, tuple(returns[index]), failed.get(index), lines.get(site, 0))
        for index, site in enumerate(sites)
    ]
    return run


def _shown(value: Any) -> str:
    """A kept answer as safe text (an int past the digit limit has no decimal repr)."""
    try:
        return safe_text(_repr.repr(value), 200)
    except ValueError:
        return f"<{type(value).__name__}>"
