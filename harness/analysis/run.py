"""All of a run's analyses in one call, for the pipeline: metrics, the curve table, and the figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.analysis.agreement import agreement
from harness.analysis.bias import self_preference
from harness.analysis.calibration import DEFAULT_BINS, calibration, reliability
from harness.analysis.curves import DEFAULT_DRAWS, best_of_n_curve
from harness.analysis.order import order_invariance
from harness.analysis.plots import plot_curve, plot_reliability
from harness.selection import ProblemResult


def analyse_run(
    results: Sequence[ProblemResult],
    output_dir: Path,
    *,
    seed: int,
    judge_families: Mapping[str, str],
    reordered: Sequence[ProblemResult] | None = None,
    bins: int = DEFAULT_BINS,
    draws: int = DEFAULT_DRAWS,
    title: str = "",
) -> dict[str, Any]:
    """Run every analysis and draw its figures into `output_dir`.

    Returns `{"metrics": {...}, "curve": [...], "files": [...]}`: `metrics` merges the flat dicts of
    `calibration`, `agreement`, `self_preference` and, when `reordered` (the selection made with each
    problem's candidates reversed) is given, `order_invariance`; `curve` is `best_of_n_curve`'s table
    for `summary.json["curve"]`; `files` are the written PNG paths (as strings): `reliability.png`
    (when any judge scored anything), `best_of_n.png` and `best_of_n_kl.png`.
    """
    metrics: dict[str, float | int | None] = {}
    metrics.update(calibration(results, bins=bins))
    metrics.update(agreement(results))
    metrics.update(self_preference(results, judge_families, seed=seed))
    if reordered is not None:
        metrics.update(order_invariance(results, reordered))
    curve = best_of_n_curve(results, draws=draws, seed=seed)
    files: list[Path] = []
    table = reliability(results, bins=bins)
    if table:
        files.append(plot_reliability(table, output_dir / "reliability.png", title=title))
    if curve:
        files.append(plot_curve(curve, output_dir / "best_of_n.png", x="n", title=title))
        files.append(plot_curve(curve, output_dir / "best_of_n_kl.png", x="kl", title=title))
    return {"metrics": metrics, "curve": curve, "files": [str(path) for path in files]}
