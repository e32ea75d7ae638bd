"""Best-of-n curves: the KL formula, exact rows where no draw matters, and agreement with a brute-force
enumeration of all subsets (with exact tie-breaking expectations) where draws do matter."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.analysis import best_of_n_curve, best_of_n_kl, plot_curve
from harness.selection import ProblemResult

Spec = tuple[float | None, bool, str | None]  # (ensemble score, correct, extracted answer)


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        pytest.param(1, 0.0, id="n1-is-the-base-policy"),
        pytest.param(2, math.log(2) - 1 / 2, id="n2"),
        pytest.param(16, math.log(16) - 15 / 16, id="n16"),
    ],
)
def test_best_of_n_kl(n: int, expected: float) -> None:
    assert best_of_n_kl(n) == pytest.approx(expected)


def _results(problem: Callable[..., ProblemResult], pools: Sequence[Sequence[Spec]]) -> list[ProblemResult]:
    return [
        problem(f"p{index}", [{"ensemble": score, "correct": correct, "answer": answer} for score, correct, answer in pool])
        for index, pool in enumerate(pools)
    ]


def _exact_row(pools: Sequence[Sequence[Spec]], n: int) -> dict[str, float]:
    """Expected accuracies over all n-subsets, ties split evenly: the value the draws estimate."""
    totals: dict[str, list[float]] = {"selection": [], "oracle": [], "majority": [], "mean": []}
    for pool in pools:
        if len(pool) < n:
            continue
        answer_correct = {a: any(c for _, c, b in pool if b == a) for _, _, a in pool if a is not None}
        per_subset: dict[str, list[float]] = {name: [] for name in totals}
        for subset in itertools.combinations(pool, n):
            scored = [(s, c) for s, c, _ in subset if s is not None]
            top = [c for s, c in scored if s == max(s for s, _ in scored)] if scored else []
            per_subset["selection"].append(sum(top) / len(top) if top else 0.0)
            per_subset["oracle"].append(float(any(c for _, c, _ in subset)))
            votes = Counter(a for _, _, a in subset if a is not None)
            leaders = [a for a, k in votes.items() if k == max(votes.values())] if votes else []
            per_subset["majority"].append(sum(answer_correct[a] for a in leaders) / len(leaders) if leaders else 0.0)
            per_subset["mean"].append(sum(c for _, c, _ in subset) / n)
        for name, values in per_subset.items():
            totals[name].append(sum(values) / len(values))
    return {name: sum(values) / len(values) for name, values in totals.items()}


POOLS: list[list[Spec]] = [
    # a wrong candidate the judge loves, ties at 0.5, one unscored candidate, answers with a tied vote
    [(0.9, False, "1"), (0.5, True, "2"), (0.5, False, "3"), (None, True, "2"), (0.1, False, None)],
    # a smaller problem: drops out of rows n > 3
    [(0.2, True, "7"), (0.2, False, "8"), (0.6, False, "8")],
]


def test_full_pool_row_is_exact(problem: Callable[..., ProblemResult]) -> None:
    # At n = N every draw holds the whole pool; with no ties nothing is random.
    rows = best_of_n_curve(_results(problem, [[(0.9, False, "1"), (0.2, True, "2"), (0.5, True, "2")]]), draws=20)
    last = rows[-1]
    assert (last["n"], last["problems"]) == (3, 1)
    assert last["selection"] == 0.0  # the 0.9 favourite is wrong
    assert last["oracle"] == 1.0
    assert last["majority"] == 1.0  # "2" twice, and right
    assert last["mean"] == pytest.approx(2 / 3)


def test_rows_match_brute_force_enumeration(problem: Callable[..., ProblemResult]) -> None:
    rows = best_of_n_curve(_results(problem, POOLS), draws=4000, seed=3)
    assert [row["n"] for row in rows] == [1, 2, 3, 4, 5]
    assert [row["problems"] for row in rows] == [2, 2, 2, 1, 1]
    for row in rows:
        expected = _exact_row(POOLS, int(row["n"]))
        for name, value in expected.items():
            assert row[name] == pytest.approx(value, abs=0.03), (row["n"], name)
            assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]
        assert row["kl"] == pytest.approx(best_of_n_kl(int(row["n"])))


def test_without_a_judge_selection_is_none(problem: Callable[..., ProblemResult]) -> None:
    rows = best_of_n_curve(_results(problem, [[(None, True, "1"), (None, False, "2")]]), draws=10)
    assert all(row["selection"] is None and row["selection_ci_low"] is None for row in rows)
    assert rows[-1]["oracle"] == 1.0


def test_seeded_and_empty(problem: Callable[..., ProblemResult]) -> None:
    results = _results(problem, POOLS)
    assert best_of_n_curve(results, draws=50, seed=1) == best_of_n_curve(results, draws=50, seed=1)
    assert best_of_n_curve([]) == []
    with pytest.raises(ValueError, match="draws"):
        best_of_n_curve(results, draws=0)


def _gsm8k_sized_pool(problem: Callable[..., ProblemResult], width: int) -> list[ProblemResult]:
    rng = random.Random(0)
    pools = [
        [(rng.choice([0.1, 0.5, 0.9, rng.random()]), rng.random() < 0.4, str(rng.randint(0, 5))) for _ in range(width)]
        for _ in range(1319)
    ]
    return _results(problem, pools)


def test_a_gsm8k_sized_pool_with_sixteen_candidates_gives_sixteen_rows(problem: Callable[..., ProblemResult]) -> None:
    # bench/curves.py times this size; here only the values matter
    rows = best_of_n_curve(_gsm8k_sized_pool(problem, 16))
    assert [row["n"] for row in rows] == list(range(1, 17))
    # one candidate: the oracle is that candidate's correctness, drawn at rate 0.4
    assert rows[0]["oracle"] == pytest.approx(rows[0]["mean"]) and rows[0]["mean"] == pytest.approx(0.4, abs=0.02)
    assert rows[-1]["oracle"] > rows[0]["oracle"]


@pytest.mark.parametrize("x", ["n", "kl"])
def test_plot_curve_writes_png(problem: Callable[..., ProblemResult], tmp_path: Path, x: Any) -> None:
    rows = best_of_n_curve(_results(problem, POOLS), draws=20)
    path = plot_curve(rows, tmp_path / f"curve_{x}.png", x=x, title="test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
