"""Shared fixtures: compose real run configs that write only under a test's temporary directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hydra import compose, initialize_config_module
from omegaconf import OmegaConf

from harness.config import RunConfig, register_configs


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One judge-call cache for the session, so tests that judge the same prompts share the work."""
    return tmp_path_factory.mktemp("cache") / "calls.sqlite"


@pytest.fixture
def make_config(tmp_path: Path) -> Callable[..., RunConfig]:
    """Compose `conf/` with overrides, as `python -m harness ...` would, into a typed RunConfig."""
    register_configs()

    def make(*overrides: str, run: str = "run") -> RunConfig:
        defaults = [
            f"output_dir={tmp_path / run}",
            f"tracking.uri=sqlite:///{tmp_path / 'mlruns.db'}",
            f"cache.path={tmp_path / 'cache.sqlite'}",
            "bootstrap_samples=100",
        ]
        with initialize_config_module(config_module="harness.conf", version_base=None):
            cfg = compose(config_name="config", overrides=defaults + list(overrides))
        config = OmegaConf.to_object(cfg)
        assert isinstance(config, RunConfig)
        return config

    return make
