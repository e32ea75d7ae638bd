"""Differential execution: the hidden test again, in a jail whose observable surroundings differ.

A function that is right only when it recognises the jail (its uid, pid, environment, working
directory or limits) and wrong everywhere else would pass a single run. So a run that passed is
repeated in a variant jail (`variant=True` through the launcher): another uid range (30000-59999
instead of 1000-29999 with the cgroups, `_zygote.ordinary_uid`; 2**29+ instead of 2**30+ without
them), other pids (drawn per run, and the jail's own two above its parent's rather
than one), another user's environment (`launch.environment`), another work-dir name, other limits
as seen from inside (`variant_limits`; with the cgroups `_jail._login_limits`: another login's
descriptor and stack soft limits). The variant must pass
the hidden test and give the same answer to every call with the same arguments (the first run's
answers are its reference, `differing_answer`: `reference.same_answer`, exact types). Anything
else is `environment_dependent`: the run fails and the event is recorded. The wall clock is the one thing
the two runs cannot be made to differ in, and a tell both jails share (the kernel, a finite file-size
limit, the reads refused outside the standard library) defeats this check: it backs up the jail's ordinary look, it does not replace it.

The variant runs after the first run has passed, never beside it (`executor.run_tests`: two jails
of one candidate at once could sense each other), with the hidden test of its own in the parent,
and the answers are compared once it has ended. A candidate that fails the first run costs no
variant (it cannot gain from recognising the jail); a passing one costs a second run, with a wall
limit of its own (see docs/sandbox.md for the measured cost). Every record of the variant's run
joins the first run's, whichever way the comparison goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from tasks.code.sandbox._wire import decode
from tasks.code.sandbox.reference import Reference, ReferenceCheck
from tasks.code.sandbox.result import ExecutionResult

# A judged call as a run records it: (wire-tagged (args, kwargs), wire-tagged answer).
Answer = tuple[tuple[Any, Any], Any]

ENVIRONMENT_DEPENDENT = "environment_dependent"


def variant_limits(limits: dict[str, Any]) -> dict[str, Any]:
    """The limits the variant applies: more memory and descriptors than the first run's (never
    fewer, so an honest run that fitted the first still fits), the same CPU time, and
    `hard_factor` 2: hard limits of file size (and, without the cgroups, of address space and
    threads) twice their soft ones (the first run's equal them). With the cgroups the jail shows
    a login's other limits and varies them itself (`_jail._login_limits`); without them every
    limit here is an rlimit, so neither a limit's value nor its shape is the same in both runs,
    and every hard limit stays finite: the candidate may raise its soft limits to them. Twice the
    threads too: how many threads it may start is a limit as seen like the others (red team
    sandbox5 `w6`: a function right only when its 41st thread was refused passed both runs)."""
    return {
        **limits, "memory_mb": limits["memory_mb"] + 512, "open_files": limits["open_files"] * 2, "threads": limits["threads"] * 2,
        "hard_factor": 2,
    }


def differing_answer(first: Sequence[Answer], second: Sequence[Answer]) -> str | None:
    """Why the variant's answers (`second`) are not the first run's, None when they are: each
    call made with the same arguments in both runs must be answered alike (`same_answer`; a call
    whose arguments differ, as in a test that draws them from an unseeded `random`, is not
    compared), and the variant must have answered at least as many calls."""
    check = ReferenceCheck(Reference(tuple(tagged for tagged, _ in first), tuple(answer for _, answer in first)), None, True)
    for call, ((args, kwargs), answer) in enumerate(second):
        check.compare(call, decode(args), decode(kwargs), decode(answer))
    if check.held():
        return None
    return check.mismatch or f"the variant answered {len(second)} calls, the first run {len(first)}"


def combine(first: ExecutionResult, second: ExecutionResult, mismatch: str | None = None) -> ExecutionResult:
    """The first run's result with the variant's records added, failed as `environment_dependent`
    unless the variant passed and its answers are the first run's (`mismatch`, from
    `differing_answer`, says how they are not)."""
    if second.passed and mismatch is None:
        # The variant's records are the candidate's too: a refused call made only there (where the
        # uid shows the variant) was dropped with its run (red team sandbox19 `v1`).
        return dataclasses.replace(first, audit_events=(*first.audit_events, *second.audit_events), details={**first.details, "differential": "same"})
    reason = second.reason if not second.passed else f"the hidden test's asserts held, but {mismatch}"
    detail = f"the variant jail's run differs: {reason}"[:300]
    event = {"kind": ENVIRONMENT_DEPENDENT, "detail": detail, "test_index": None}
    return dataclasses.replace(
        first,
        outcome="wrong_answer",
        reason=f"{ENVIRONMENT_DEPENDENT}: {detail}",
        audit_events=(*first.audit_events, event, *second.audit_events),
        details={**first.details, "differential": "differs", ENVIRONMENT_DEPENDENT: True, "variant_outcome": second.outcome if mismatch is None else "wrong_answer"},
    )
