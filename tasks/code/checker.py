"""The code anchor: run a candidate against the hidden HumanEval test in the sandbox."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tasks.code.assemble import assemble_program, code_digest
from tasks.code.sandbox import (
    ExecutionResult,
    SandboxJob,
    SandboxLimits,
    TestProfile,
    measure,
    run_many,
    run_tests,
)
from tasks.types import AnchorOutcome


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
    }
    return AnchorOutcome(result.outcome == "pass", code_digest(text), result.outcome, details)


def check_code(anchor: CodeAnchor, text: str, limits: SandboxLimits = SandboxLimits()) -> AnchorOutcome:
    """Assemble the candidate's program, run the hidden test in the sandbox, report the outcome."""
    program = assemble_program(anchor.prompt, text, anchor.entry_point)
    result = run_tests(program, anchor.test, anchor.entry_point, limits, helpers=anchor.prompt, min_cases=anchor.min_cases())
    return outcome_from(result, text)


def check_code_many(
    items: Sequence[tuple[CodeAnchor, str]], workers: int = 2, limits: SandboxLimits = SandboxLimits()
) -> list[AnchorOutcome]:
    """`check_code` for many (anchor, text) pairs with at most `workers` sandboxes at once."""
    jobs = [
        SandboxJob(assemble_program(a.prompt, text, a.entry_point), a.test, a.entry_point, a.prompt, a.min_cases())
        for a, text in items
    ]
    results = run_many(jobs, workers, limits)
    return [outcome_from(result, text) for result, (_, text) in zip(results, items)]
