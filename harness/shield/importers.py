"""`python -m harness.shield import FORMAT RESULTS --out DIR`: shield traces from other benchmarks' recordings.

    import tau-bench RESULTS.json --out DIR    # τ-bench airline results (run.py output), one trace per trajectory

The written directory is what `verify --trace DIR` reads. Each format's importer lives with its task
(`tasks.tau_airline.importer`) and is imported only when asked for, so the shield does not load task
packages it does not need.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

# format -> (module, function(path, out_dir) -> written paths)
IMPORTERS: dict[str, tuple[str, str]] = {"tau-bench": ("tasks.tau_airline.importer", "import_results")}


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the `import` subcommand on the shield's command line."""
    parser = commands.add_parser("import", help="convert another benchmark's recorded trajectories into traces")
    parser.add_argument("format", choices=sorted(IMPORTERS), help="the recording's format")
    parser.add_argument("results", help="the results file (τ-bench: the JSON list run.py writes)")
    parser.add_argument("--out", required=True, help="directory for the traces (one .json per trajectory)")


def importer(name: str) -> Callable[[str, str], list[str]]:
    module, function = IMPORTERS[name]
    return getattr(importlib.import_module(module), function)


def run(args: argparse.Namespace) -> int:
    """Write the traces and say where; errors propagate as `HarnessError` (one line, exit 2)."""
    paths = importer(args.format)(args.results, args.out)
    print(f"{args.results}: wrote {len(paths)} traces to {args.out}", file=sys.stderr)
    return 0
