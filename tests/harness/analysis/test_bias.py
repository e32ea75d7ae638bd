"""Self-preference: family matching on sources, and per-family selection rates on a hand-built pool."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness.analysis import family_of, self_preference
from harness.selection import ProblemResult, pick_best, problem_rng

FAMILIES = ("qwen", "llama", "gemma")


@pytest.mark.parametrize(
    ("source", "families", "expected"),
    [
        pytest.param("Qwen2.5-7B-Instruct", FAMILIES, "qwen", id="case-insensitive"),
        pytest.param("gpt3-175b-verification", FAMILIES, "other", id="gsm8k-pool-source"),
        pytest.param(None, FAMILIES, "other", id="no-source"),
        pytest.param("", FAMILIES, "other", id="empty-source"),
        pytest.param("codellama-7b", ("llama", "codellama"), "codellama", id="longest-match-wins"),
        pytest.param("SmolLM2-135M", ("Llama",), "other", id="family-names-lower-cased"),
    ],
)
def test_family_of(source: str | None, families: tuple[str, ...], expected: str) -> None:
    assert family_of(source, families) == expected


def test_self_preference_rates(problem: Callable[..., ProblemResult]) -> None:
    def cand(source: str | None, llama: float | None, gemma: float | None) -> dict[str, object]:
        return {"source": source, "scores": {"llama_tiny": llama, "gemma_tiny": gemma}}

    results = [
        # llama picks its own (0.9); gemma picks the llama candidate (0.8)
        problem("p1", [cand("Llama-3.2-1B", 0.9, 0.8), cand("qwen2.5-7b", 0.5, 0.3), cand("gemma-2b", 0.1, 0.2)]),
        # llama picks the gpt3 candidate; gemma scored nothing here, so p2 does not count for it
        problem("p2", [cand("llama-3", 0.2, None), cand("llama-3", 0.3, None), cand("gpt3-175b", 0.9, None)]),
        # llama scored only the source-less candidate (other); gemma picks its own
        problem("p3", [cand(None, 0.7, 0.1), cand("gemma-2b", None, 0.6)]),
    ]
    metrics = self_preference(results, {"llama_tiny": "llama", "gemma_tiny": "Gemma"}, seed=0)
    assert metrics == {
        # same: p1 1 of 1, p2 0 of 2 -> 1/3; other: p1 0 of 2, p2 1 of 1, p3 1 of 1 -> 2/4
        "self_preference.llama.same_rate": pytest.approx(1 / 3),
        "self_preference.llama.same_available": 3,
        "self_preference.llama.other_rate": pytest.approx(2 / 4),
        "self_preference.llama.other_available": 4,
        # same: p1 0 of 1, p3 1 of 1 -> 1/2; other: p1 1 of 2, p3 0 of 1 -> 1/3
        "self_preference.gemma.same_rate": pytest.approx(1 / 2),
        "self_preference.gemma.same_available": 2,
        "self_preference.gemma.other_rate": pytest.approx(1 / 3),
        "self_preference.gemma.other_available": 3,
    }


def test_empty_group_gives_none(problem: Callable[..., ProblemResult]) -> None:
    results = [problem("p1", [{"source": "gpt3", "scores": {"q": 0.4}}, {"source": "gpt3", "scores": {"q": 0.6}}])]
    metrics = self_preference(results, {"q": "qwen"}, seed=0)
    assert metrics["self_preference.qwen.same_rate"] is None
    assert metrics["self_preference.qwen.same_available"] == 0
    assert metrics["self_preference.qwen.other_rate"] == pytest.approx(1 / 2)


def test_ties_are_broken_as_the_run_breaks_them(problem: Callable[..., ProblemResult]) -> None:
    sources = ["qwen-a", "llama-b", "qwen-c", "llama-d"]
    results = [problem(f"p{i}", [{"source": s, "scores": {"q": 0.5}} for s in sources]) for i in range(40)]
    picks = [pick_best([0.5] * 4, problem_rng(7, f"p{i}")) for i in range(40)]
    same_picked = sum(pick in (0, 2) for pick in picks)
    metrics = self_preference(results, {"q": "qwen"}, seed=7)
    assert metrics["self_preference.qwen.same_rate"] == pytest.approx(same_picked / 80)
    assert metrics["self_preference.qwen.other_rate"] == pytest.approx((40 - same_picked) / 80)
