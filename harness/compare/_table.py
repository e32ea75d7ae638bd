"""Grouping runs into the rows of the comparison table and formatting its cells. Pure functions.

A row is one protocol (the `protocol.name` param), refined by `judge.name` and `task.name` when the
compared runs span several of them, so like is compared with like. When several runs fall in one
row (a rerun), the latest started one is shown and `runs` says how many there were.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from harness.compare._runs import RunRecord

GROUP_PARAMS = ("protocol.name", "judge.name", "task.name")
MISSING = "-"


@dataclass(frozen=True)
class Cell:
    value: float | None
    low: float | None
    high: float | None

    def text(self) -> str:
        if self.value is None:
            return MISSING
        if self.low is None or self.high is None:
            return f"{self.value:.3f}"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class Row:
    label: str
    runs: int
    run_id: str
    cells: dict[str, Cell]


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
        cells = {
            name: Cell(latest.metrics.get(name), latest.metrics.get(f"{name}_ci_low"), latest.metrics.get(f"{name}_ci_high"))
            for name in metrics
        }
        rows.append(Row(label, len(members), latest.run_id, cells))
    return rows


def markdown(rows: Sequence[Row], metrics: Sequence[str], group_header: str) -> str:
    """A pipe table that reads in a terminal and pastes into a README."""
    header = [group_header, "runs", *metrics]
    body = [[row.label, str(row.runs), *(row.cells[name].text() for name in metrics)] for row in rows]
    widths = [max(len(line[column]) for line in [header, *body]) for column in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths)) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (width + 2) for width in widths) + "|", *map(line, body)])


def csv_text(rows: Sequence[Row], metrics: Sequence[str], group_header: str) -> str:
    """One line per row: group, runs, run id, then value, ci_low, ci_high per metric (empty when absent)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([group_header, "runs", "run_id", *(f"{name}{suffix}" for name in metrics for suffix in ("", "_ci_low", "_ci_high"))])
    for row in rows:
        values = [(cell.value, cell.low, cell.high) for cell in (row.cells[name] for name in metrics)]
        writer.writerow([row.label, row.runs, row.run_id, *("" if v is None else repr(v) for triple in values for v in triple)])
    return buffer.getvalue()
