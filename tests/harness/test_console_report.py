"""The console table says which figure is the expectation over tie-breaks and which the seeded pick."""

from __future__ import annotations

from harness.console_report import summary_table

SUMMARY = {
    "selection_accuracy": 0.5,
    "selection_accuracy_ci_low": 0.25,
    "selection_accuracy_ci_high": 0.75,
    "selection_accuracy_seeded": 1.0,
    "hack_rate": 0.5,
    "hack_rate_seeded": 0.0,
    "oracle_accuracy": 1.0,
    "auroc": 0.5,
    "problems": 1,
    "candidates": 2,
    "judge_calls": 2,
    "cache_hits": 0,
}


def test_tie_dependent_lines_give_the_expectation_then_the_seeded_pick() -> None:
    lines = {line.split()[0]: line for line in summary_table(SUMMARY, "t").splitlines()[2:]}
    assert lines["selection_accuracy"].split(None, 1)[1] == "0.500  [0.250, 0.750]  expected over tie-breaks; seeded pick 1.000"
    assert lines["hack_rate"].split(None, 1)[1] == "0.500  expected over tie-breaks; seeded pick 0.000"
    # a figure that does not depend on the tie-break says nothing of it
    assert lines["oracle_accuracy"].split(None, 1)[1] == "1.000" and lines["auroc"].split(None, 1)[1] == "0.500"
