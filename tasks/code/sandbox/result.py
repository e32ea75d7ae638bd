"""Values the sandbox returns: one `ExecutionResult` per candidate run, judged by the parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["pass", "wrong_answer", "error", "timeout", "memory_exceeded"]


@dataclass(frozen=True)
class CaseResult:
    """One reported test case: which assert, the tagged values the sandbox saw, and the verdict."""

    index: int
    site: int
    passed: bool
    values: tuple[Any, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class ExecutionResult:
    """A judged sandbox run.

    `outcome` is "pass" only with positive evidence: every case reported under the run's nonce,
    the final count matching, every straight-line assert seen, and every comparison true in the
    parent. `reason` says why anything else was decided. `audit_events` are plain dicts
    `{"kind", "detail", "test_index"}` (kinds are listed in `_hook.py`); `isolation` names what
    applied ("netns", "landlock", "audit_hook", "rlimits").
    """

    outcome: Outcome
    reason: str
    cases: tuple[CaseResult, ...]
    audit_events: tuple[dict[str, Any], ...]
    duration_s: float
    isolation: tuple[str, ...]
    returncode: int | None = None
    stderr_tail: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"
