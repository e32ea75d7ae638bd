"""Tasks: one package per benchmark, each exposing `load(config) -> TaskData`.

Hydra's `task=<name>` group is the registry: the option names the package `tasks.<name>`.
"""

from __future__ import annotations

import importlib
import re

from harness.core import Candidate, HarnessError, PublicProblem
from tasks.config import TaskConfig
from tasks.types import AnchorOutcome, AnchorStore, TaskData

__all__ = ["AnchorOutcome", "AnchorStore", "Candidate", "PublicProblem", "TaskData", "load_task"]


def load_task(config: TaskConfig) -> TaskData:
    """Load the task named by `config.name` from its package `tasks.<name>`."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", config.name):
        raise HarnessError(f"task.name={config.name!r} is not a task package name")
    try:
        module = importlib.import_module(f"tasks.{config.name}")
    except ModuleNotFoundError as error:
        if error.name == f"tasks.{config.name}":
            raise HarnessError(f"unknown task {config.name!r}") from error
        raise
    return module.load(config)
