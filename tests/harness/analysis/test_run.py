"""`analyse_run` merges every analysis' keys and writes the three figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.analysis import analyse_run
from harness.selection import ProblemResult


def test_analyse_run_merges_metrics_and_writes_figures(problem: Callable[..., ProblemResult], tmp_path: Path) -> None:
    def cand(source: str, correct: bool, a: float | None, b: float | None) -> dict[str, object]:
        ensemble = min(s for s in (a, b) if s is not None) if (a, b) != (None, None) else None
        return {"source": source, "correct": correct, "answer": str(correct), "scores": {"a": a, "b": b}, "ensemble": ensemble}

    results = [
        problem("p1", [cand("llama-1b", True, 0.9, 0.8), cand("qwen-7b", False, 0.4, None)], selected=0),
        problem("p2", [cand("qwen-7b", False, 0.7, 0.2), cand("llama-1b", True, 0.6, 0.9)], selected=1),
    ]
    report = analyse_run(results, tmp_path, seed=0, judge_families={"a": "llama", "b": "qwen"}, reordered=results, draws=20)
    metrics = report["metrics"]
    assert metrics["order_invariance"] == 1.0
    assert {"calibration.a.ece", "calibration.ensemble.brier", "agreement.krippendorff_alpha", "self_preference.qwen.same_rate"} <= set(metrics)
    assert [row["n"] for row in report["curve"]] == [1, 2]
    assert [Path(path).name for path in report["files"]] == ["reliability.png", "best_of_n.png", "best_of_n_kl.png"]
    json.dumps(report)  # summary.json must be able to hold all of it


def test_analyse_run_without_a_judge_draws_no_reliability_diagram(problem: Callable[..., ProblemResult], tmp_path: Path) -> None:
    report = analyse_run([problem("p1", [{"correct": True, "answer": "1"}])], tmp_path, seed=0, judge_families={}, draws=5)
    assert "order_invariance" not in report["metrics"]
    assert report["curve"][0]["selection"] is None
    assert [Path(path).name for path in report["files"]] == ["best_of_n.png", "best_of_n_kl.png"]
