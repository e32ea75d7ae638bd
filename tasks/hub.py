"""Loading a task's data through `datasets` for users who are online (`task.source=hub`)."""

from __future__ import annotations

from typing import Any

from harness.core.errors import HarnessError
from tasks.config import TaskConfig


def hub_rows(config: TaskConfig, default_dataset: str) -> list[dict[str, Any]]:
    """Rows of `config.hub_dataset` (else `default_dataset`), config `hub_config`, split `hub_split`.

    `datasets` is imported here only, so offline users of the bundled copies never need it.
    """
    try:
        import datasets
    except ImportError as error:
        raise HarnessError("task.source=hub needs the `datasets` package: pip install 'judge-harness[hub]'") from error
    name = config.hub_dataset or default_dataset
    try:
        dataset = datasets.load_dataset(name, config.hub_config, split=config.hub_split)
    except (FileNotFoundError, ValueError, ConnectionError) as error:
        raise HarnessError(f"task.hub_dataset: cannot load {name!r} split {config.hub_split!r}: {error}") from error
    return [dict(row) for row in dataset]
