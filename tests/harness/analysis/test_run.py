"""`analyse_run` merges every analysis' keys and writes the three figures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.analysis import analyse_run
from harness.selection import ProblemResult


def test_analyse_run_merges_metrics_and_writes_figures(problem: Callable[..., ProblemResult], tmp_path: Path) -> None:
    def cand(id_: str, source: str, correct: bool, a: float | None, b: float | None) -> dict[str, object]:
        ensemble = min(s for s in (a, b) if s is not None) if (a, b) != (None, None) else None
        return {"id": id_, "source": source, "correct": correct, "answer": str(correct), "scores": {"a": a, "b": b}, "ensemble": ensemble}

    p1 = [cand("x", "llama-1b", True, 0.9, 0.8), cand("y", "qwen-7b", False, 0.4, None)]
    p2 = [cand("u", "qwen-7b", False, 0.7, 0.2), cand("v", "llama-1b", True, 0.6, 0.9)]
    results = [problem("p1", p1, selected=0), problem("p2", p2, selected=1)]
    # Shown reversed, p1 keeps its pick (x) and p2's moves from v to u: one problem of two unchanged.
    reordered = [problem("p1", p1[::-1], selected=1), problem("p2", p2[::-1], selected=1)]
    report = analyse_run(results, tmp_path, seed=0, judge_families={"a": "llama", "b": "qwen"}, reordered=reordered, draws=20)
    metrics = report["metrics"]
    assert metrics["order_invariance"] == 0.5 and metrics["order_invariance.n"] == 2
    assert {"calibration.a.ece", "calibration.ensemble.brier", "agreement.krippendorff_alpha", "self_preference.qwen.same_rate"} <= set(metrics)
    assert [row["n"] for row in report["curve"]] == [1, 2]
    assert [Path(path).name for path in report["files"]] == ["reliability.png", "best_of_n.png", "best_of_n_kl.png"]
    json.dumps(report)  # summary.json must be able to hold all of it


def test_analyse_run_without_a_judge_draws_no_reliability_diagram(problem: Callable[..., ProblemResult], tmp_path: Path) -> None:
    report = analyse_run([problem("p1", [{"correct": True, "answer": "1"}])], tmp_path, seed=0, judge_families={}, draws=5)
    assert "order_invariance" not in report["metrics"]
    assert report["curve"][0]["selection"] is None
    assert [Path(path).name for path in report["files"]] == ["best_of_n.png", "best_of_n_kl.png"]
