"""Best-of-n curves: how selection accuracy moves as the judge chooses among more candidates.

For each n in 1..N (N: the most candidates any problem has) we draw `draws` seeded random subsets of
n candidates per problem (default 200: the draw-to-draw spread of a mean over 1,319 GSM8K problems
is then well below the problem-sampling interval) and score four pickers on the same subsets:

- selection: the ensemble's highest score in the subset (ties drawn at random; a subset with no
  scored candidate is a miss, as in the run's own selection); None for a run without a judge.
- oracle: the subset holds a correct candidate (pass@n).
- majority: the most common extracted answer in the subset is correct (ties drawn at random,
  candidates without an answer do not vote).
- mean: the fraction of the subset that is correct (the accuracy of a random pick).

Each n is plotted against the KL divergence of best-of-n sampling from the base policy,
log n - (n - 1) / n (Stiennon et al. 2020, "Learning to summarize from human feedback", appendix;
Gao et al. 2022, "Scaling Laws for Reward Model Overoptimization", section 2), so curves from pools
of different sizes share an axis of optimisation pressure. A selection curve that falls while the
oracle rises is the judge being over-optimised (Cobbe et al. 2021 saw it for GSM8K verifiers).

Subsets of size n come from one random permutation per problem and draw (its first n entries), so
the curves use common random numbers across n. A problem with fewer than n candidates is left out of
row n (`problems` says how many count). Intervals are 95% normal intervals over problems of the
per-problem accuracies (averaged over draws), so they reflect which problems were sampled, not the
draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from harness.selection import ProblemResult

DEFAULT_DRAWS = 200
PICKERS = ("selection", "oracle", "majority", "mean")
_Z95 = 1.959963984540054


def best_of_n_kl(n: int) -> float:
    """KL(best-of-n || base policy) = log n - (n - 1) / n, in nats."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return math.log(n) - (n - 1) / n


class _Pool:
    """The run's candidates as padded (problems, N) arrays; absent slots have `present` False."""

    def __init__(self, results: Sequence[ProblemResult]) -> None:
        width = max(len(result.candidates) for result in results)
        shape = (len(results), width)
        self.present = np.zeros(shape, dtype=bool)
        self.correct = np.zeros(shape, dtype=bool)
        self.scores = np.full(shape, np.nan)
        self.answers = np.full(shape, -1, dtype=int)  # per-problem answer codes; -1: no answer
        self.answer_correct = np.zeros(shape, dtype=bool)  # [p, code]: some candidate with that answer is correct
        for row, result in enumerate(results):
            codes: dict[str, int] = {}
            for column, record in enumerate(result.candidates):
                self.present[row, column] = True
                self.correct[row, column] = record.outcome.correct
                if record.ensemble_score is not None:
                    self.scores[row, column] = record.ensemble_score
                answer = record.outcome.extracted_answer
                if answer is not None:
                    code = codes.setdefault(answer, len(codes))
                    self.answers[row, column] = code
                    self.answer_correct[row, code] |= record.outcome.correct
        self.sizes = self.present.sum(axis=1)
        self.judged = bool(np.any(~np.isnan(self.scores)))


class _RunningPick:
    """Per (problem, draw), the largest (key, priority) offered so far and whether it was correct.

    Priorities are random and independent of the data, so among tied keys the pick is a uniform draw.
    A NaN key (an unscored candidate) never wins.
    """

    def __init__(self, shape: tuple[int, int]) -> None:
        self.key = np.full(shape, -np.inf)
        self.priority = np.full(shape, -1.0)
        self.correct = np.zeros(shape, dtype=bool)

    def offer(self, key: np.ndarray, priority: np.ndarray, correct: np.ndarray) -> None:
        wins = (key > self.key) | ((key == self.key) & (priority > self.priority))
        self.key = np.where(wins, key, self.key)
        self.priority = np.where(wins, priority, self.priority)
        self.correct = np.where(wins, correct, self.correct)


def _interval(per_problem: np.ndarray) -> tuple[float, float, float]:
    mean = float(per_problem.mean())
    half = _Z95 * float(per_problem.std(ddof=1)) / math.sqrt(len(per_problem)) if len(per_problem) > 1 else 0.0
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def best_of_n_curve(
    results: Sequence[ProblemResult], *, draws: int = DEFAULT_DRAWS, seed: int = 0
) -> list[dict[str, float | int | None]]:
    """One row per n in 1..N: `n`, `kl`, `problems`, and for each of `selection`, `oracle`,
    `majority`, `mean` the accuracy with `<name>_ci_low` / `<name>_ci_high` (all None for `selection`
    when the run has no judge). Seeded: the same results, draws and seed give the same table.
    """
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws}")
    if not results:
        return []
    pool = _Pool(results)
    problems, width = pool.present.shape
    rng = np.random.default_rng(seed)
    # One random permutation per problem and draw, absent slots sorted last: the subset of size n
    # is its first n entries, so each step below adds one candidate to every subset and updates the
    # running picks in O(problems x draws).
    keys = np.where(pool.present[:, None, :], rng.random((problems, draws, width)), np.inf)
    # Position-major copies: slicing one position of a (problems, draws, width) array is strided and slow.
    permutation = np.ascontiguousarray(np.moveaxis(np.argsort(keys, axis=2), 2, 0))
    row_offset = (np.arange(problems) * width)[:, None]  # flat index of (p, slot) is row_offset + slot
    cell_offset = (np.arange(problems * draws) * width).reshape(problems, draws)  # of (p, d, code)
    # Fixed random priorities break ties: among tied entries the highest priority wins, a uniform
    # draw among them because priorities are independent of the data.
    position_priority = rng.random((width, problems, draws))
    answer_priority = rng.random(problems * draws * width)
    correct_flat, scores_flat = pool.correct.ravel(), pool.scores.ravel()
    answers_flat, answer_correct_flat = pool.answers.ravel(), pool.answer_correct.ravel()
    judge_pick, majority_pick = _RunningPick((problems, draws)), _RunningPick((problems, draws))
    any_correct = np.zeros((problems, draws), dtype=bool)
    correct_count = np.zeros((problems, draws))
    votes = np.zeros(problems * draws * width)
    rows: list[dict[str, float | int | None]] = []
    for n in range(1, width + 1):
        cell = row_offset + permutation[n - 1]
        correct = correct_flat[cell]
        any_correct |= correct
        correct_count += correct
        judge_pick.offer(scores_flat[cell], position_priority[n - 1], correct)
        # Majority: only the new candidate's answer gains a vote, so the leader is the old one or it.
        answer = answers_flat[cell]
        voted = answer >= 0
        vote_cell = cell_offset + np.where(voted, answer, 0)
        votes[vote_cell[voted]] += 1
        majority_pick.offer(
            np.where(voted, votes[vote_cell], np.nan),
            answer_priority[vote_cell],
            answer_correct_flat[row_offset + np.maximum(answer, 0)],
        )
        eligible = pool.sizes >= n
        accuracy: dict[str, np.ndarray | None] = {
            "selection": judge_pick.correct[eligible].mean(axis=1) if pool.judged else None,
            "oracle": any_correct[eligible].mean(axis=1),
            "majority": majority_pick.correct[eligible].mean(axis=1),
            "mean": (correct_count[eligible] / n).mean(axis=1),
        }
        row: dict[str, float | int | None] = {"n": n, "kl": best_of_n_kl(n), "problems": int(eligible.sum())}
        for name in PICKERS:
            per_problem = accuracy[name]
            value, low, high = _interval(per_problem) if per_problem is not None else (None, None, None)
            row.update({name: value, f"{name}_ci_low": low, f"{name}_ci_high": high})
        rows.append(row)
    return rows
