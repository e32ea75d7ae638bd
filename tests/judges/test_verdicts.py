"""Verdicts from recorded engine outputs under each protocol, including malformed ones."""

from __future__ import annotations

import math
from importlib import resources

import pytest
import yaml

from harness.core.values import EngineResult
from judges.config import ProtocolConfig
from judges.judge import to_verdict
from judges.protocol import load_protocol

PROTOCOLS = ("plausibility", "recompute", "solve_first", "blind")


def _protocol(name: str):
    data = yaml.safe_load(resources.files("harness.conf").joinpath("protocol", f"{name}.yaml").read_text())
    return load_protocol(ProtocolConfig(**data))


def _logprobs(yes: float, no: float) -> dict[str, float]:
    return {"Yes": math.log(yes), "No": math.log(no)}


# Recorded outputs: (engine text, option log-probabilities or None, error) -> expected score.
RECORDED = [
    pytest.param("Yes", _logprobs(0.6, 0.2), None, 0.75, id="probabilities"),
    pytest.param("\n", _logprobs(0.01, 0.03), None, 0.25, id="probabilities-with-little-mass"),
    pytest.param("16 - 3 - 4 = 9 correct. 9 * 2 = 18 correct.\nVerdict: Yes", None, None, 1.0, id="generated-yes"),
    pytest.param("Step 2 says 13 * 2 = 26 but 16-3-4 = 9.\nNo", None, None, 0.0, id="generated-no"),
    pytest.param("Yes... wait, no. Final: No.", None, None, 0.0, id="generated-last-verdict-wins"),
]
MALFORMED = [
    pytest.param("I cannot tell.", None, None, "no verdict", id="no-verdict-word"),
    pytest.param("Nope, Yesterday", None, None, "no verdict", id="only-lookalike-words"),
    pytest.param("", None, "prompt of 4000 tokens does not fit n_ctx=2048", "does not fit", id="engine-error"),
    pytest.param("", {"Yes": -math.inf, "No": -math.inf}, None, "no probability mass", id="no-mass"),
]


@pytest.mark.parametrize("protocol_name", PROTOCOLS)
@pytest.mark.parametrize(("text", "logprobs", "error", "expected"), RECORDED)
def test_recorded_outputs_score_under_every_protocol(protocol_name, text, logprobs, error, expected) -> None:
    protocol = _protocol(protocol_name)
    verdict = to_verdict(EngineResult(text, logprobs, 100, 12, error), protocol, "llama_tiny")
    assert verdict.status == "ok" and verdict.score == pytest.approx(expected)
    assert verdict.protocol == protocol_name and verdict.template_hash == protocol.template_hash
    assert verdict.raw_text == text


@pytest.mark.parametrize("protocol_name", PROTOCOLS)
@pytest.mark.parametrize(("text", "logprobs", "error", "reason"), MALFORMED)
def test_malformed_outputs_are_unscored_with_a_reason(protocol_name, text, logprobs, error, reason) -> None:
    verdict = to_verdict(EngineResult(text, logprobs, 100, 1, error), _protocol(protocol_name), "llama_tiny")
    assert verdict.status == "unscored" and verdict.score is None and reason in verdict.reason


def test_protocol_configs_differ_where_they_should() -> None:
    protocols = {name: _protocol(name) for name in PROTOCOLS}
    assert protocols["recompute"].max_tokens > 0 and protocols["recompute"].verdict_suffix
    assert protocols["solve_first"].solve is not None and "+" in protocols["solve_first"].template_hash
    assert protocols["blind"].view == "final_answer" and protocols["blind"].shuffle
    assert protocols["plausibility"].max_tokens == 0 and protocols["plausibility"].view == "full"
