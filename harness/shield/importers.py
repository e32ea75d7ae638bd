"""`python -m harness.shield import FORMAT RESULTS --out DIR`: shield traces from other benchmarks' recordings.

    import tau-bench RESULTS.json --out DIR    # τ-bench airline results (run.py output), one trace per trajectory
    verify --graph G.json --trace DIR --replay tau-bench

The written directory is what `verify --trace DIR` reads. A benchmark's facts differ per trace (each
trajectory changed its own copy of the database), so `--replay FORMAT` verifies each trace against
the facts of replaying *its* tool calls in that benchmark's environment, never its recorded outputs.
Each format's code lives with its task (`tasks.tau_airline`) and is imported only when asked for,
so the shield does not load task packages it does not need.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from harness.shield.graph import StateGraph
from harness.shield.report import ShieldReport, VerifyOptions
from harness.shield.trace import iter_traces
from harness.shield.watchdog import step

# The command line's own parser class (its errors are one line), whichever it is.
ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)
# format -> (module, function(path, out_dir) -> written paths)
IMPORTERS: dict[str, tuple[str, str]] = {"tau-bench": ("tasks.tau_airline.importer", "import_results")}
# format -> (module, function(trace, options, graph=graph) -> ShieldReport), replaying the trace's calls
REPLAYS: dict[str, tuple[str, str]] = {"tau-bench": ("tasks.tau_airline.importer", "verify_imported")}


def add_parser(commands: argparse._SubParsersAction[ParserT]) -> None:
    """Register the `import` subcommand on the shield's command line."""
    parser = commands.add_parser("import", help="convert another benchmark's recorded trajectories into traces")
    parser.add_argument("format", choices=sorted(IMPORTERS), help="the recording's format")
    parser.add_argument("results", help="the results file (τ-bench: the JSON list run.py writes)")
    parser.add_argument("--out", required=True, help="directory for the traces (one .json per trajectory)")


def _load(table: dict[str, tuple[str, str]], name: str) -> Callable[..., Any]:
    module, function = table[name]
    return getattr(importlib.import_module(module), function)


def importer(name: str) -> Callable[[str, str], list[str]]:
    return _load(IMPORTERS, name)


def replay_verifier(name: str) -> Callable[..., Any]:
    """`verify --replay NAME`: the task's `verify_imported(trace, options, graph=graph) -> ShieldReport`."""
    return _load(REPLAYS, name)


def run(args: argparse.Namespace) -> int:
    """Write the traces and say where; errors propagate as `HarnessError` (one line, exit 2)."""
    paths = importer(args.format)(args.results, args.out)
    print(f"{args.results}: wrote {len(paths)} traces to {args.out}", file=sys.stderr)
    return 0


def verify_replayed(name: str, graph: StateGraph, path: str, options: VerifyOptions) -> list[tuple[str, ShieldReport]]:
    """(name, report) for every trace under `path`, each against the facts of its own replay."""
    verifier = replay_verifier(name)
    results = []
    for trace_name, trace in iter_traces(path):
        step(f"{path}: trace {trace_name}")
        results.append((trace_name, verifier(trace, options, graph=graph)))
    return results
