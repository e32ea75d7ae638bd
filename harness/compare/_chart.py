"""The comparison PNG: one cluster of bars per metric, one bar per table row, 95% intervals as error bars."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from harness.compare._table import Cell, Row


def _bar(cell: Cell) -> tuple[float, float, float]:
    """(value, error below, error above); NaN leaves a metric the run did not log, or a missing interval, undrawn."""
    if cell.value is None:
        return math.nan, math.nan, math.nan
    if cell.low is None or cell.high is None:
        return cell.value, math.nan, math.nan
    return cell.value, cell.value - cell.low, cell.high - cell.value


def grouped_bar_chart(rows: Sequence[Row], metrics: Sequence[str], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = 0.8 / max(len(rows), 1)
    figure, axis = plt.subplots(figsize=(max(6.0, 1.4 * len(metrics) + 2), 4), dpi=120)
    top = 1.0
    for index, row in enumerate(rows):
        bars = [_bar(row.cells[name]) for name in metrics]
        positions = [metric + (index - (len(rows) - 1) / 2) * width for metric in range(len(metrics))]
        values, below, above = ([bar[part] for bar in bars] for part in range(3))
        axis.bar(positions, values, width, yerr=[below, above], capsize=3, label=row.label)
        top = max([top, *(value + (0.0 if math.isnan(error) else error) for value, error in zip(values, above) if not math.isnan(value))])
    axis.set_xticks(range(len(metrics)))
    axis.set_xticklabels(metrics, rotation=20, ha="right", fontsize=8)
    axis.set_ylim(0, top * 1.05)
    axis.set_title(title, fontsize=9)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path
