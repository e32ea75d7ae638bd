"""A judge's cache keys are its identity: the same model keeps the keys it had before its config
moved into nested blocks, so verdicts cached by earlier runs are still found."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import pytest

from harness.core.cache import CallCache, cache_key
from harness.core.values import EngineRequest
from judges.backends import engine_spec
from judges.cached import CachedEngine
from judges.executor import InlineExecutor

REQUEST = EngineRequest(prompt="Is 2+2=4?", options=("Yes", "No"))
# Computed on 850d77d, before the model config was split into http/vllm/resources blocks and its
# modes became enums, from the shipped judge options composed exactly as below.
PINNED = {
    "llama_tiny": "d8199aa4a788c1c81fabc6ac1f6da34d8d1e0e2fd75310792180861287bcc125",
    "gemma_tiny": "741a53a47e70863dbb8745f76f08c13f6fde2e1f73ebeccd953d62c8164821e9",
    "llama_tiny_http": "3c7cec31ecc6a58c5fe85e10a44bc0e413946599ac3e9acce73a1792417375a0",
}


@pytest.mark.parametrize("judge", sorted(PINNED))
def test_a_shipped_judge_keeps_its_pinned_cache_key(make_config, judge: str) -> None:
    [member] = make_config(f"judge={judge}").judge.member_configs().values()
    spec = engine_spec(member)
    parts = {"model": spec.identity, "template": "t", "request": dataclasses.asdict(REQUEST), "settings": spec.settings}
    assert cache_key(parts) == PINNED[judge]


def test_the_tiny_judge_commits_its_answer_under_the_pinned_key(make_config, tmp_path: Path) -> None:
    """The key CachedEngine really writes, read back from the cache file after a real CPU judgment."""
    [member] = make_config("judge=llama_tiny").judge.member_configs().values()
    spec = engine_spec(member)
    path = tmp_path / "calls.sqlite"
    cache = CallCache(path)
    engine = CachedEngine(identity=spec.identity, executor=InlineExecutor(spec.factory), settings=spec.settings, cache=cache, batch_size=1)
    [(answer, cached)] = engine.complete([REQUEST], "t", None)
    cache.close()
    assert not cached and answer.error is None
    with sqlite3.connect(path) as connection:
        assert [key for (key,) in connection.execute("SELECT key FROM calls")] == [PINNED["llama_tiny"]]
