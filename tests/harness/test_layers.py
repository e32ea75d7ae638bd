"""The import contract's top layer names every module of the run, so a new module cannot slip past it.

import-linter checks only the modules a layer names: a new `harness/foo.py` missing from the run's
layer would be importable from the judges or the tasks without the contract noticing.
"""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
BELOW_THE_RUN = {"core", "shield"}


def _contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return contract


def _run_layer_modules() -> set[str]:
    top = _contract()["layers"][0]
    return {name.strip() for name in top.split(":")}


def test_the_run_layer_names_every_module_of_harness_but_the_shield_and_the_floor() -> None:
    children = {
        path.stem if path.is_file() else path.name
        for path in (ROOT / "harness").iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path.is_dir() and (path / "__init__.py").is_file())
    }
    assert BELOW_THE_RUN <= children
    assert _run_layer_modules() == {f"harness.{name}" for name in children - BELOW_THE_RUN}


def test_the_layers_put_the_floor_at_the_bottom_and_keep_judges_and_shield_apart() -> None:
    layers = _contract()["layers"]
    assert layers[1:] == ["tasks", "judges | harness.shield", "harness.core"]
