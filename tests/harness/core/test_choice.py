"""A mode enum is its plain string wherever it is written: params, summaries, YAML, cache keys."""

from __future__ import annotations

import dataclasses
import json

import pytest
from omegaconf import OmegaConf

from harness.config import ClusterKind, PoolBase, PoolKind
from harness.core.cache import cache_key
from harness.core.choice import Choice
from harness.tracking import flatten
from judges.config import Backend, Mode, ModelConfig, PromptStyle, View
from tasks.config import Source

EVERY_MODE = [Backend, PromptStyle, View, Mode, Source, PoolKind, PoolBase, ClusterKind]


@pytest.mark.parametrize("mode", EVERY_MODE, ids=lambda mode: mode.__name__)
def test_every_member_is_named_as_its_value(mode: type[Choice]) -> None:
    # OmegaConf reads `backend: vllm` by member name, and writes the name back in the resolved YAML
    assert [member.name for member in mode] == list(mode.values())


def test_a_member_reads_as_its_string() -> None:
    assert Backend.vllm == "vllm" and "vllm" in (Backend.vllm,) and {"vllm": 1}[Backend.vllm] == 1
    assert (str(Backend.vllm), f"{Backend.vllm}", "%s" % Backend.vllm) == ("vllm", "vllm", "vllm")
    assert json.dumps({"backend": Backend.vllm}) == '{"backend": "vllm"}'
    assert Backend.values() == ("cpu", "openai", "vllm")


def test_cache_keys_and_params_are_those_of_the_bare_strings() -> None:
    typed = ModelConfig(name="m", family="f", model="x", backend=Backend.vllm, prompt_style=PromptStyle.chat)
    bare = dataclasses.replace(typed, backend="vllm", prompt_style="chat")  # type: ignore[arg-type]
    assert cache_key(dataclasses.asdict(typed)) == cache_key(dataclasses.asdict(bare))
    as_params = {key: str(value) for key, value in flatten(dataclasses.asdict(typed)).items()}
    assert as_params["backend"] == "vllm" and as_params["prompt_style"] == "chat"
    assert OmegaConf.to_yaml(OmegaConf.structured(typed)) == OmegaConf.to_yaml(OmegaConf.structured(bare))
