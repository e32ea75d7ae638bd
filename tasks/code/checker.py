"""The code anchor: run a candidate against the hidden HumanEval test in the sandbox, and check
each of its answers against the canonical solution's (the second checker, `sandbox.reference`).

A candidate is correct only when both hold: the hidden test's own asserts, and every hidden call
answered as the canonical solution answers it (exact types, floats to a relative 1e-9). Where the
two checkers disagree, the outcome's details say so (`disagreement`, with `secondary` the
reference check's verdict), as the MATH checker's do, and the code shield flags the candidate
(`checker_disagreement`). The comparison is skipped only on problems that accept several answers
(`SEVERAL_ANSWERS`, each with its reason); their details say `reference_check: "skipped"`.

A candidate that passes is run again in a jail whose surroundings differ (`sandbox/differential.py`)
and must give the same answers; otherwise it fails as `environment_dependent` (details say so, and
the shield flags it).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tasks.code.assemble import assemble_program, code_digest
from tasks.code.sandbox import (
    ExecutionResult,
    Reference,
    SandboxJob,
    SandboxLimits,
    TestProfile,
    measure,
    run_many,
    run_tests,
)
from tasks.types import AnchorOutcome

# HumanEval problems whose hidden test accepts more than one answer, so that the canonical
# solution's answer is one right answer among several. Found by reading the 164 tests: every other
# test pins each answer to one value (up to a float tolerance, or a truthiness that the docstring
# makes a bool).
SEVERAL_ANSWERS: dict[str, str] = {
    "HumanEval/32": "find_zero may return any root: the test checks poly(xs, x) is within 1e-4 of 0, never x itself",
}


@dataclass(frozen=True)
class CodeAnchor:
    """The sealed part of a HumanEval problem: the prompt it extends, the hidden test, and the
    canonical solution ("" when the data has none), which fixes how many asserts a correct
    solution makes run (`sandbox.measure`)."""

    task_id: str
    prompt: str
    test: str
    entry_point: str
    canonical: str = ""

    def profile(self) -> TestProfile | None:
        """What the canonical solution makes the test do (measured once, cached); None without
        a canonical solution or when it does not pass its own test."""
        if not self.canonical:
            return None
        program = assemble_program(self.prompt, self.canonical, self.entry_point)
        profile = measure(self.prompt, program, self.test, self.entry_point)
        return profile if profile.passed else None

    def reference_program(self) -> str:
        """The trusted test's namespace: the prompt with the canonical solution (so that the
        entry point's own name is the reference, never the candidate), or the prompt alone."""
        return assemble_program(self.prompt, self.canonical, self.entry_point) if self.canonical else self.prompt

    def reference(self) -> Reference | None:
        """The canonical answers to compare with; None without a profile or where the problem
        accepts several answers (`SEVERAL_ANSWERS`)."""
        profile = self.profile()
        if profile is None or self.task_id in SEVERAL_ANSWERS:
            return None
        return profile.reference()

    def calls(self) -> tuple[tuple[Any, Any], ...]:
        """The hidden test's calls as the canonical solution's run made them (wire-tagged), which
        the jail's test file holds, as a test file holds its calls; () without a profile."""
        profile = self.profile()
        return profile.inputs if profile is not None else ()

    def min_cases(self) -> int:
        """Asserts a correct solution makes run: measured with the canonical solution, else 1."""
        profile = self.profile()
        return profile.cases if profile is not None else 1

    def hidden_inputs(self) -> tuple[tuple[tuple[Any, ...], dict[str, Any]], ...]:
        """The hidden test's inputs, in order, without its expected values (for the shield)."""
        profile = self.profile()
        return profile.replay() if profile is not None else ()


def outcome_from(result: ExecutionResult, text: str) -> AnchorOutcome:
    """AnchorOutcome for a sandbox result: correct only on "pass"; details carry the evidence."""
    details = {
        "reason": result.reason,
        "audit_events": [dict(event) for event in result.audit_events],
        "cases": [asdict(case) for case in result.cases],
        "isolation": list(result.isolation),
        "duration_s": result.duration_s,
        "launcher": result.details.get("launcher"),
        "min_cases": result.details.get("min_cases"),
        "reference_check": result.details.get("reference_check", "skipped"),
        "hidden_test": result.details.get("hidden_test", result.outcome == "pass"),
        "disagreement": bool(result.details.get("disagreement", False)),
        "differential": result.details.get("differential", "not run"),
        "environment_dependent": bool(result.details.get("environment_dependent", False)),
    }
    if details["disagreement"]:
        details["secondary"] = result.details.get("reference_check")
        details["reference_mismatch"] = result.details.get("reference_mismatch")
    return AnchorOutcome(result.outcome == "pass", code_digest(text), result.outcome, details)


def check_code(anchor: CodeAnchor, text: str, limits: SandboxLimits = SandboxLimits()) -> AnchorOutcome:
    """Assemble the candidate's program, run the hidden test in the sandbox, report the outcome."""
    program = assemble_program(anchor.prompt, text, anchor.entry_point)
    result = run_tests(
        program, anchor.test, anchor.entry_point, limits, helpers=anchor.reference_program(), min_cases=anchor.min_cases(),
        reference=anchor.reference(), differential=True, calls=anchor.calls(),
    )
    return outcome_from(result, text)


def check_code_many(
    items: Sequence[tuple[CodeAnchor, str]], workers: int = 2, limits: SandboxLimits = SandboxLimits(), differential: bool = True
) -> list[AnchorOutcome]:
    """`check_code` for many (anchor, text) pairs with at most `workers` sandboxes at once;
    `differential=False` leaves out the variant run (for measuring what it costs)."""
    jobs = [
        SandboxJob(
            assemble_program(a.prompt, text, a.entry_point), a.test, a.entry_point, a.reference_program(), a.min_cases(), a.reference(),
            differential=differential, calls=a.calls(),
        )
        for a, text in items
    ]
    results = run_many(jobs, workers, limits)
    return [outcome_from(result, text) for result, (_, text) in zip(results, items)]


@functools.lru_cache(maxsize=4096)
def check_code_cached(anchor: CodeAnchor, text: str) -> AnchorOutcome:
    """`check_code` with default limits, remembered per (anchor, text): the shield reads the
    anchor's verdict on the candidate the pipeline has just checked, without a second run."""
    return check_code(anchor, text)
