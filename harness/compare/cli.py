"""Compare protocols (and judges, tasks) across MLflow runs: a table printed to stdout, plus
`comparison.md`, `comparison.csv` and `comparison.png` in `--output`.

    python -m harness.compare [--experiment harness] [--filter "params.task.name = 'gsm8k'"]
                              [--tracking-uri sqlite:///mlruns.db] [--output comparison]
                              [--metrics selection_accuracy,hack_rate]

`--tracking-uri` defaults to `MLFLOW_TRACKING_URI` when set, else `sqlite:///mlruns.db` (the harness's
own default). `--metrics` defaults to the metrics below that any compared run logged. Cells read
`value [ci_low, ci_high]` when the run logged `<metric>_ci_low` and `<metric>_ci_high`; a `*` marks a
run from before `format_version` 2, whose selection metrics are its seeded tie-break's (its value then
also serves for `<metric>_seeded`). A problem the
user can fix (no such experiment, no matching runs, a bad filter) prints one `error:` line and exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.compare._chart import grouped_bar_chart
from harness.compare._runs import fetch_runs
from harness.compare._table import build_rows, csv_text, grouping_params, logged_metrics, markdown
from harness.core import HarnessError

DEFAULT_METRICS = (
    "selection_accuracy",
    "hack_rate",
    "auroc",
    "false_positive_rate",
    "parse_failure_rate",
    "order_invariance",
    "calibration.ensemble.ece",
    # logged by `python -m harness.review RUN stats` once people have labelled the run's review queue
    "review.shield_precision",
    "review.shield_recall",
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="harness", help="MLflow experiment name (default: harness)")
    parser.add_argument("--filter", default="", help="MLflow search filter, e.g. \"params.task.name = 'gsm8k'\"")
    parser.add_argument(
        "--tracking-uri",
        default=os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///mlruns.db"),
        help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else sqlite:///mlruns.db)",
    )
    parser.add_argument("--output", default="comparison", help="directory for comparison.{md,csv,png} (default: ./comparison)")
    parser.add_argument("--metrics", default=None, help="comma-separated metric names (default: the logged ones of " + ", ".join(DEFAULT_METRICS) + ")")
    return parser


def _metrics(requested: str | None, logged: set[str]) -> list[str]:
    if requested is None:
        chosen = [name for name in DEFAULT_METRICS if name in logged]
        if not chosen:
            raise HarnessError(f"the matching runs logged none of the default metrics ({', '.join(DEFAULT_METRICS)}); pass --metrics")
        return chosen
    chosen = [name.strip() for name in requested.split(",") if name.strip()]
    if not chosen:
        raise HarnessError(f"--metrics {requested!r} names no metric")
    unknown = [name for name in chosen if name not in logged]
    if unknown:
        available = sorted(name for name in logged if not name.endswith(("_ci_low", "_ci_high")))
        raise HarnessError(f"--metrics: not logged by any matching run: {', '.join(unknown)}; logged: {', '.join(available)}")
    return chosen


def _compare(args: argparse.Namespace) -> None:
    fetched = fetch_runs(args.tracking_uri, args.experiment, args.filter)
    metrics = _metrics(args.metrics, logged_metrics(fetched.runs))
    rows = build_rows(fetched.runs, metrics)
    group_header = " / ".join(grouping_params(fetched.runs))
    table = markdown(rows, metrics, group_header)
    output = Path(args.output)
    try:
        output.mkdir(parents=True, exist_ok=True)
        (output / "comparison.md").write_text(table + "\n", encoding="utf-8")
        (output / "comparison.csv").write_text(csv_text(rows, metrics, group_header), encoding="utf-8")
        grouped_bar_chart(rows, metrics, output / "comparison.png", f"experiment {args.experiment}" + (f" | {args.filter}" if args.filter else ""))
    except OSError as error:
        raise HarnessError(f"cannot write to --output {output}: {error.strerror}") from error
    if fetched.skipped_parents or fetched.skipped_unfinished:
        print(
            f"note: left out {fetched.skipped_parents} multirun parent run(s) and {fetched.skipped_unfinished} unfinished run(s)",
            file=sys.stderr,
        )
    for row in rows:
        if row.runs > 1:
            print(f"note: {row.runs} runs for {row.label}; showing the latest ({row.run_id})", file=sys.stderr)
    print(table)
    print(f"written: {output / 'comparison.md'}, {output / 'comparison.csv'}, {output / 'comparison.png'}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0, or 2 after one `error:` line on stderr)."""
    args = _parser().parse_args(argv)
    try:
        _compare(args)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0
