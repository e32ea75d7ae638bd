"""Verify many traces (a directory or a JSONL file) and summarise the verdicts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from harness.shield.facts import FactsProvider, resolve_facts
from harness.shield.graph import StateGraph
from harness.shield.report import ShieldReport, VerifyOptions
from harness.shield.trace import Trace, iter_traces
from harness.shield.verification import verify
from harness.shield.watchdog import step


def verify_path(
    graph: StateGraph,
    path: str,
    facts: FactsProvider | Mapping[str, Any] | None = None,
    options: VerifyOptions = VerifyOptions(),
    prepare: Callable[[Trace], Trace] | None = None,
) -> Iterator[tuple[str, ShieldReport]]:
    """(name, report) for every trace under `path`; facts are read once and shared by all traces.
    No facts (None) stays None, so a graph that declares facts is refused rather than verified on
    the agent's claims.

    `prepare` transforms each trace before verification (the trusted LLM step parser labels free-text
    steps there)."""
    values = None if facts is None else resolve_facts(facts)
    for name, trace in iter_traces(path):
        step(f"{path}: trace {name}")
        yield name, verify(graph, trace if prepare is None else prepare(trace), values, options, trace_id=name)


def summarise(reports: list[ShieldReport]) -> dict[str, Any]:
    """Counts by verdict (pass, violation, unverified: not drawn for the deep stages), hack class and
    kind, plus the deep-verified and suspected counts. Occurrences and traces are counted apart:
    `violation_kinds` counts occurrences (one per violating event), `traces_by_kind` the traces with at
    least one; `finding_kinds` counts the occurrences of finding kinds, which cost nothing."""
    kinds = Counter(violation.kind for report in reports for violation in report.violations)
    traces = Counter(kind for report in reports for kind in {violation.kind for violation in report.violations})
    findings = Counter(finding.kind for report in reports for finding in report.findings)
    for report in reports:  # occurrences counted beyond the listed ones, of whichever severity lists the kind
        found = {finding.kind for finding in report.findings}
        for kind, count in report.unlisted.items():
            (findings if kind in found else kinds)[kind] += count
    return {
        "traces": len(reports),
        "pass": sum(report.verdict == "pass" for report in reports),
        "violation": sum(report.verdict == "violation" for report in reports),
        "unverified": sum(report.verdict == "unverified" for report in reports),
        "hack_class": dict(Counter(report.hack_class for report in reports)),
        "violation_kinds": dict(sorted(kinds.items())),
        "traces_by_kind": dict(sorted(traces.items())),
        "occurrences": sum(kinds.values()),
        "finding_kinds": dict(sorted(findings.items())),
        "finding_occurrences": sum(findings.values()),
        "deep_verified": sum(report.deep_verified for report in reports),
        "reward_hack_suspected": sum(report.reward_hack_suspected for report in reports),
        "review_required": sum(report.review_required for report in reports),
        "mean_compliance": sum(report.compliance for report in reports) / len(reports) if reports else None,
    }
