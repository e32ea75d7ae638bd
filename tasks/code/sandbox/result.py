"""Values the sandbox returns: one `ExecutionResult` per candidate run, judged by the parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["pass", "wrong_answer", "error", "timeout", "memory_exceeded"]


@dataclass(frozen=True)
class CaseResult:
    """One evaluated assert of the hidden test: its position, which assert (`site`, at source
    `line`), whether it held, the first few answers the candidate gave for it (as safe text), and
    why it failed."""

    index: int
    site: int
    passed: bool
    returned: tuple[str, ...] = ()
    error: str | None = None
    line: int = 0


@dataclass(frozen=True)
class ExecutionResult:
    """A judged sandbox run.

    `outcome` is "pass" only on positive evidence observed in the trusted parent: the program
    loaded in the jail, the hidden test ran to its end with every assert holding on plain values,
    no call failed, and at least as many asserts ran as a correct solution makes run. `reason`
    says why anything else was decided. `audit_events` are plain dicts `{"kind", "detail",
    "test_index"}` (kinds are listed in `_hook.py` and `executor.py`); `isolation` names the
    measures that really applied (`isolation.py`).
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
