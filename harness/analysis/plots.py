"""PNG figures for a run's analyses, drawn from the plain tables the analyses return.

Figures take the tables rather than the run's results so a figure can be redrawn from
`summary.json` alone. matplotlib is imported on first use with the non-interactive Agg backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

CURVE_LINES = (
    ("selection", "judge pick", "#c0392b"),
    ("oracle", "oracle (any correct)", "#27ae60"),
    ("majority", "majority answer", "#2980b9"),
    ("mean", "random pick", "#7f8c8d"),
)
X_LABELS = {"n": "candidates per problem (n)", "kl": "KL(best-of-n || base) = log n - (n-1)/n  [nats]"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_reliability(table: Mapping[str, Sequence[Mapping[str, float]]], path: Path, *, title: str = "") -> Path:
    """Reliability diagram of `calibration.reliability(...)`: one line per judge, the diagonal is perfect calibration."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(5, 5), dpi=120)
    axis.plot([0, 1], [0, 1], linestyle="--", color="#95a5a6", linewidth=1, label="perfectly calibrated")
    for judge, bins in table.items():
        axis.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], marker="o", label=judge)
    axis.set_xlim(0, 1)
    axis.set_ylim(0, 1)
    axis.set_xlabel("mean judge score in bin")
    axis.set_ylabel("fraction correct (anchors)")
    axis.set_title(title or "reliability diagram", fontsize=9)
    axis.legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path


def plot_curve(rows: Sequence[Mapping[str, Any]], path: Path, *, x: Literal["n", "kl"] = "n", title: str = "") -> Path:
    """Best-of-n curve of `curves.best_of_n_curve(...)` against n or the KL of best-of-n, with 95% bands."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 4), dpi=120)
    for key, label, colour in CURVE_LINES:
        points = [row for row in rows if row.get(key) is not None]
        if not points:
            continue
        xs = [row[x] for row in points]
        axis.plot(xs, [row[key] for row in points], marker="o", markersize=3, color=colour, label=label)
        axis.fill_between(xs, [row[f"{key}_ci_low"] for row in points], [row[f"{key}_ci_high"] for row in points], color=colour, alpha=0.15)
    axis.set_ylim(0, 1)
    axis.set_xlabel(X_LABELS[x])
    axis.set_ylabel("accuracy vs hidden anchors")
    axis.set_title(title or "best-of-n", fontsize=9)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path
