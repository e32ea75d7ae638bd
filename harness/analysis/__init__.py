"""Analyses of a run's audited picks: calibration, member agreement, order sensitivity,
self-preference and best-of-n curves.

Every function takes plain data (`harness.selection.ProblemResult`s and plain mappings) and returns
plain JSON-serialisable values: flat `{"<analysis>.<...>": number | None}` dicts ready for
`summary.json` and MLflow metrics, or a list of rows for `summary.json["curve"]`. The plot functions
draw those tables to a PNG at a given path; `analyse_run` does all of it in one call.
"""

from __future__ import annotations

from harness.analysis.agreement import agreement, fleiss_kappa, krippendorff_alpha_nominal
from harness.analysis.bias import family_of, self_preference
from harness.analysis.calibration import brier_score, calibration, expected_calibration_error, reliability
from harness.analysis.curves import best_of_n_curve, best_of_n_kl
from harness.analysis.order import order_invariance
from harness.analysis.plots import plot_curve, plot_reliability
from harness.analysis.run import analyse_run

__all__ = [
    "agreement",
    "analyse_run",
    "best_of_n_curve",
    "best_of_n_kl",
    "brier_score",
    "calibration",
    "expected_calibration_error",
    "family_of",
    "fleiss_kappa",
    "krippendorff_alpha_nominal",
    "order_invariance",
    "plot_curve",
    "plot_reliability",
    "reliability",
    "self_preference",
]
