"""The command line of dynamic graphs: `verify --dynamic [--patches-out P]` and `extend`.

    verify --graph G --trace T|DIR --dynamic [--patches-out P.json] [fact options]
    extend --graph G --patches P.json --out G2.json [--format json|text]

`verify --dynamic` prints each report as `verify` does, and each `unexpected_transition` as a
review line (`~ review/unexpected_transition [event i]: A -> B ...`; in JSON a `findings` list beside
the report). Findings do not fail a trace: the exit code is 1 only when a report is a violation.
`extend` exits 0 when the extended graph checks clean, 1 with findings (as `check`), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from harness.core import HarnessError
from harness.shield import importers
from harness.shield.batch import summarise
from harness.shield.dynamic import DynamicResult, verify_dynamic
from harness.shield.extend import extend, load_patches, proposed
from harness.shield.facts import FactsProvider, resolve_facts
from harness.shield.graph import StateGraph, load_graph
from harness.shield.report import ShieldReport, VerifyOptions
from harness.shield.static import check_graph
from harness.shield.trace import Trace, iter_traces
from harness.shield.verification import verify
from harness.shield.watchdog import step

ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)


def add_parser(commands: argparse._SubParsersAction[ParserT]) -> None:
    parser = commands.add_parser("extend", help="apply accepted graph patches (from verify --dynamic) and check the result")
    parser.add_argument("--graph", required=True)
    parser.add_argument("--patches", required=True, help="a patches file; only patches with \"accepted\": true are applied")
    parser.add_argument("--out", required=True, help="the extended graph to write (must not exist)")
    parser.add_argument("--format", choices=("json", "text"), default="text")


def _write_new(path: str, data: Any, what: str) -> None:
    if os.path.lexists(path):
        raise HarnessError(f"{path}: exists; {what} is written to a new file (choose another path)")
    try:
        with open(path, "x", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, ensure_ascii=False)
            handle.write("\n")
    except OSError as error:
        raise HarnessError(f"{path}: cannot write {what}: {error.strerror or error}") from None


def _findings_text(result: DynamicResult) -> list[str]:
    return [
        f"  ~ {finding.severity}/{finding.kind} [event {finding.event_index}]: {finding.source} -> {finding.target} "
        "is not in the graph; the trace is clean with it (proposed patch: add it)"
        for finding in result.findings
    ]


def _checker(replay: str | None, options: VerifyOptions, values: Any, name: str, trace: Trace) -> Callable[[StateGraph], ShieldReport]:
    """Verify `trace` against a given graph: with the replay's facts, or with `values`."""
    if replay:
        replayed = importers.replay_verifier(replay)

        def check_replayed(graph: StateGraph) -> ShieldReport:
            report: ShieldReport = replayed(trace, options, graph=graph)
            return report

        return check_replayed
    return lambda graph: verify(graph, trace, values, options, trace_id=name)


def run_verify(
    args: argparse.Namespace,
    graph: StateGraph,
    options: VerifyOptions,
    facts: FactsProvider | None,
    report_text: Callable[[str, ShieldReport], str],
) -> int:
    if args.llm_parser or args.labelled_steps:
        raise HarnessError("--dynamic does not take --llm-parser")
    if args.patches_out and os.path.lexists(args.patches_out):
        raise HarnessError(f"{args.patches_out}: exists; proposed patches are written to a new file (choose another path)")
    values = None if facts is None else resolve_facts(facts)
    results: list[tuple[str, DynamicResult]] = []
    for name, trace in iter_traces(args.trace):
        step(f"{args.trace}: trace {name}")
        check = _checker(args.replay, options, values, name, trace)
        results.append((name, verify_dynamic(graph, trace, check)))
    single = os.path.isfile(args.trace) and not args.trace.endswith(".jsonl")
    reports = [result.report for _, result in results]
    findings = sum(len(result.findings) for _, result in results)
    if args.format == "json":
        for name, result in results:
            line: dict[str, Any] = {"report": result.report.model_dump(mode="json"), "findings": [f.as_json() for f in result.findings]}
            print(json.dumps(line if single else {"trace": name, **line}, allow_nan=False))
        if not single:
            print(json.dumps({"summary": {**summarise(reports), "unexpected_transition": findings}}, allow_nan=False))
    else:
        for name, result in results:
            print("\n".join([report_text(name, result.report), *_findings_text(result)]))
        if not single:
            summary = summarise(reports)
            print(f"summary: {summary['traces']} traces, {summary['pass']} pass, {summary['violation']} violation, "
                  f"{findings} unexpected transitions for review")
    if args.patches_out:
        _write_new(args.patches_out, proposed(graph.task_id, results).model_dump(mode="json", by_alias=True), "proposed patches")
    return 1 if any(report.verdict == "violation" for report in reports) else 0


def run_extend(args: argparse.Namespace) -> int:
    graph = load_graph(args.graph)
    extended, applied = extend(graph, load_patches(args.patches), args.patches)
    _write_new(args.out, extended.model_dump(mode="json", exclude_defaults=True), "the extended graph")
    findings = check_graph(load_graph(args.out))
    if args.format == "json":
        print(json.dumps({"graph": args.out, "applied": [p.model_dump(mode="json", by_alias=True) for p in applied],
                          "findings": [f.model_dump(mode="json") for f in findings]}, allow_nan=False))
    else:
        print(f"{args.out}: {len(applied)} accepted patches applied to {args.graph}")
        print("\n".join(f"{f.kind}: {f.message}" for f in findings) or f"{args.out}: clean")
    return 1 if findings else 0
