"""The code anchor: run a candidate against the hidden HumanEval test in the sandbox."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from tasks.code.assemble import assemble_program, code_digest
from tasks.code.sandbox import ExecutionResult, SandboxJob, SandboxLimits, run_many, run_tests
from tasks.types import AnchorOutcome


@dataclass(frozen=True)
class CodeAnchor:
    """The sealed part of a HumanEval problem: the prompt it extends and the hidden test."""

    task_id: str
    prompt: str
    test: str
    entry_point: str


def outcome_from(result: ExecutionResult, text: str) -> AnchorOutcome:
    """AnchorOutcome for a sandbox result: correct only on "pass"; details carry the evidence."""
    details = {
        "reason": result.reason,
        "audit_events": [dict(event) for event in result.audit_events],
        "cases": [asdict(case) for case in result.cases],
        "isolation": list(result.isolation),
        "duration_s": result.duration_s,
        "launcher": result.details.get("launcher"),
    }
    return AnchorOutcome(result.outcome == "pass", code_digest(text), result.outcome, details)


def check_code(anchor: CodeAnchor, text: str, limits: SandboxLimits = SandboxLimits()) -> AnchorOutcome:
    """Assemble the candidate's program, run the hidden test in the sandbox, report the outcome."""
    program = assemble_program(anchor.prompt, text, anchor.entry_point)
    return outcome_from(run_tests(program, anchor.test, anchor.entry_point, limits), text)


def check_code_many(
    items: Sequence[tuple[CodeAnchor, str]], workers: int = 2, limits: SandboxLimits = SandboxLimits()
) -> list[AnchorOutcome]:
    """`check_code` for many (anchor, text) pairs with at most `workers` sandboxes at once."""
    jobs = [SandboxJob(assemble_program(a.prompt, text, a.entry_point), a.test, a.entry_point) for a, text in items]
    results = run_many(jobs, workers, limits)
    return [outcome_from(result, text) for result, (_, text) in zip(results, items)]
