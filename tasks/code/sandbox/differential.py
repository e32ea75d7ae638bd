"""Differential execution: the hidden test again, in a jail whose observable surroundings differ.

A function that is right only when it recognises the jail (its uid, pid, environment, working
directory or limits) and wrong everywhere else would pass a single run. So a run that passed is
repeated in a variant jail (`variant=True` through the launcher): another uid range (2**29+
instead of 2**30+), other pids (drawn per run, and the jail's own two above its parent's rather
than one), another user's environment (`launch.environment`), another work-dir name, other limits
as seen from inside, in value and in shape (`variant_limits`). The variant must pass
the hidden test and give the same answer to every call with the same arguments (the first run's
answers are its reference, `reference.ReferenceCheck`, exact types). Anything else is
`environment_dependent`: the run fails and the event is recorded. The wall clock is the one thing
the two runs cannot be made to differ in, and a tell both jails share (the kernel, finite soft
limits, the reads refused outside the standard library) defeats this check: it backs up the jail's ordinary look, it does not replace it.

Only a run that passed is repeated: a candidate that fails the first run cannot gain from
recognising the jail, so the check costs one more run per passing candidate and nothing for the
rest (see docs/sandbox.md for the measured cost).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tasks.code.sandbox.result import ExecutionResult

ENVIRONMENT_DEPENDENT = "environment_dependent"


def variant_limits(limits: dict[str, Any]) -> dict[str, Any]:
    """The limits the variant applies and shows: more memory and descriptors than the first run's
    (never fewer, so an honest run that fitted the first still fits), the same CPU time, and hard
    limits of address space, file size and threads twice their soft ones (the first run's equal
    them), so neither a limit's value nor its shape is the same in both runs. Every hard limit
    stays finite: the candidate may raise its soft limits to them."""
    return {**limits, "memory_mb": limits["memory_mb"] + 512, "open_files": limits["open_files"] * 2, "hard_factor": 2}


def combine(first: ExecutionResult, second: ExecutionResult) -> ExecutionResult:
    """The first run's result, failed as `environment_dependent` unless the variant passed with
    the same answers."""
    if second.passed:
        return dataclasses.replace(first, details={**first.details, "differential": "same"})
    detail = f"the variant jail's run differs: {second.reason}"[:300]
    event = {"kind": ENVIRONMENT_DEPENDENT, "detail": detail, "test_index": None}
    return dataclasses.replace(
        first,
        outcome="wrong_answer",
        reason=f"{ENVIRONMENT_DEPENDENT}: {detail}",
        audit_events=(*first.audit_events, event, *second.audit_events),
        details={**first.details, "differential": "differs", ENVIRONMENT_DEPENDENT: True, "variant_outcome": second.outcome},
    )
