"""The task layer's config: which task to load and from where.

The schema Hydra validates `task` overrides against; the application's run config composes it. It
lives with the tasks so the task layer never imports the application above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from harness.core import Choice


class Source(Choice):
    """Where a task's rows come from: the copy shipped in the package, or the Hugging Face Hub."""

    bundled = "bundled"
    hub = "hub"


@dataclass
class TaskConfig:
    """Which task to load and from where.

    `source=bundled` (default) reads the copy shipped in the package and works offline;
    `source=hub` loads `hub_dataset`/`hub_config`/`hub_split` through `datasets`.
    `subset` narrows the problems where a task supports it (levels/subjects for math).
    `path` is a user's own results file where a task reads one (task=tau_airline: a τ-bench results file).
    """

    name: str = "gsm8k"
    source: Source = Source.bundled
    hub_dataset: Optional[str] = None
    hub_config: Optional[str] = None
    hub_split: str = "test"
    subset: Optional[str] = None
    path: Optional[str] = None
