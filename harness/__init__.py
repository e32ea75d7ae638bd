"""The harness engine: best-of-N runs audited against hidden anchors.

Public surface: `run` executes one configured run and returns its `RunResult`; `RunConfig` is the typed
configuration it takes; `HarnessError` is the one user-facing error. Imports are lazy so that light
entry points (`python -m harness.shield`) do not pay for MLflow or the model runtime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.core import HarnessError

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.pipeline import RunResult, run

__all__ = ["HarnessError", "RunConfig", "RunResult", "run"]


def __getattr__(name: str) -> Any:
    if name == "RunConfig":
        from harness.config import RunConfig

        return RunConfig
    if name in ("run", "RunResult"):
        from harness import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
