"""Grouping runs into the rows of the comparison table and formatting its cells. Pure functions.

A row is one protocol (the `protocol.name` param), refined by `judge.name` and `task.name` when the
compared runs span several of them, so like is compared with like. When several runs fall in one
row (a rerun), the latest started one is shown and `runs` says how many there were.

Runs of every format version are read (`harness.metrics.FORMAT_VERSION`). A version-1 run (no
`format_version` metric) logged the seeded tie-break's value of each tie-dependent metric under its
plain name: that value is shown for `<metric>_seeded`, and under the plain name, where newer runs
give the expectation over tie-breaks, it is marked `*`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from harness.compare._runs import RunRecord
from harness.metrics import SEEDED_SUFFIX, format_version, is_tie_expected

GROUP_PARAMS = ("protocol.name", "judge.name", "task.name")
MISSING = "-"
SEEDED_MARK = "*"
SEEDED_NOTE = f"{SEEDED_MARK} a run from before format_version 2: the seeded tie-break's value, not the expectation over tie-breaks"


@dataclass(frozen=True)
class Cell:
    value: float | None
    low: float | None
    high: float | None
    seeded: bool = False  # a version-1 run's seeded value standing where newer runs give the expectation

    def text(self) -> str:
        if self.value is None:
            return MISSING
        mark = SEEDED_MARK if self.seeded else ""
        if self.low is None or self.high is None:
            return f"{self.value:.3f}{mark}"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]{mark}"


@dataclass(frozen=True)
class Row:
    label: str
    runs: int
    run_id: str
    cells: dict[str, Cell]
    format_version: int = 1


def run_cell(run: RunRecord, name: str) -> Cell:
    """`run`'s value of metric `name` with its interval, read across format versions (module docstring)."""
    metrics = run.metrics
    old = format_version(metrics) < 2
    base = name.removesuffix(SEEDED_SUFFIX)
    if old and name != base and name not in metrics and is_tie_expected(base):
        return Cell(metrics.get(base), metrics.get(f"{base}_ci_low"), metrics.get(f"{base}_ci_high"))
    seeded = old and name in metrics and is_tie_expected(name)
    return Cell(metrics.get(name), metrics.get(f"{name}_ci_low"), metrics.get(f"{name}_ci_high"), seeded)


def logged_metrics(runs: Sequence[RunRecord]) -> set[str]:
    """The metric names the runs can be compared on: those logged, plus `<metric>_seeded` for each
    tie-dependent metric a version-1 run logged."""
    names = {name for run in runs for name in run.metrics}
    old = {name for run in runs if format_version(run.metrics) < 2 for name in run.metrics if is_tie_expected(name)}
    return names | {name + SEEDED_SUFFIX for name in old}


def grouping_params(runs: Sequence[RunRecord]) -> list[str]:
    """`protocol.name`, plus each other grouping param that takes more than one value across the runs."""
    return [
        name
        for name in GROUP_PARAMS
        if name == GROUP_PARAMS[0] or len({run.params.get(name, MISSING) for run in runs}) > 1
    ]


def build_rows(runs: Sequence[RunRecord], metrics: Sequence[str]) -> list[Row]:
    """One row per group, sorted by label, each with a cell per metric (interval when logged)."""
    keys = grouping_params(runs)
    groups: dict[str, list[RunRecord]] = {}
    for run in runs:
        label = " / ".join(f"{run.params.get(key, MISSING)}" for key in keys)
        groups.setdefault(label, []).append(run)
    rows = []
    for label, members in sorted(groups.items()):
        latest = max(members, key=lambda run: (run.start_time, run.run_id))
        cells = {name: run_cell(latest, name) for name in metrics}
        rows.append(Row(label, len(members), latest.run_id, cells, format_version(latest.metrics)))
    return rows


def markdown(rows: Sequence[Row], metrics: Sequence[str], group_header: str) -> str:
    """A pipe table that reads in a terminal and pastes into a README."""
    header = [group_header, "runs", *metrics]
    body = [[row.label, str(row.runs), *(row.cells[name].text() for name in metrics)] for row in rows]
    widths = [max(len(line[column]) for line in [header, *body]) for column in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"

    table = [line(header), "|" + "|".join("-" * (width + 2) for width in widths) + "|", *map(line, body)]
    if any(cell.seeded for row in rows for cell in row.cells.values()):
        table += ["", SEEDED_NOTE]
    return "\n".join(table)


def csv_text(rows: Sequence[Row], metrics: Sequence[str], group_header: str) -> str:
    """One line per row: group, runs, run id, format version (1: selection metrics are the seeded
    tie-break's), then value, ci_low, ci_high per metric (empty when absent)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        [group_header, "runs", "run_id", "format_version", *(f"{name}{suffix}" for name in metrics for suffix in ("", "_ci_low", "_ci_high"))]
    )
    for row in rows:
        values = [(cell.value, cell.low, cell.high) for cell in (row.cells[name] for name in metrics)]
        writer.writerow(
            [row.label, row.runs, row.run_id, row.format_version, *("" if v is None else repr(v) for triple in values for v in triple)]
        )
    return buffer.getvalue()
