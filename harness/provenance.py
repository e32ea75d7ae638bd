"""Facts that identify a run's code and environment, for MLflow tags."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path

_PACKAGES = ("judge-harness", "mlflow", "hydra-core", "llama-cpp-python", "numpy", "sympy")


def git_commit() -> str | None:
    """The commit of the source tree the harness runs from, when it is a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        completed = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout.strip() or None if completed.returncode == 0 else None


def package_versions() -> dict[str, str]:
    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions
