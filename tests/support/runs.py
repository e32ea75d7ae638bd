"""What a finished or interrupted run left behind, read the same way by every test that resumes runs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# What a run did rather than what it found: these differ between attempts by design.
WORK_COUNTERS = ("judge_calls", "cache_hits", "traces.seconds")  # traces.seconds: wall time, never the same twice


def cached_calls(cache: Path) -> int:
    """Rows in the judge-call cache at `cache` (0 while it does not exist yet), read-only."""
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=5) as connection:
            return connection.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    except sqlite3.Error:
        return 0


def findings(summary: dict[str, Any]) -> dict[str, Any]:
    """`summary` without the work counters: what two runs of the same config must agree on."""
    return {key: value for key, value in summary.items() if key not in WORK_COUNTERS}


def rows(output_dir: Path) -> list[dict[str, Any]]:
    """A finished run's candidates.jsonl, one dict per candidate in judging-table order."""
    return [json.loads(line) for line in (output_dir / "candidates.jsonl").read_text().splitlines()]


def harness_command(overrides: Sequence[str], cache: Path, bootstrap_samples: int = 50) -> list[str]:
    """`python -m harness` with Hydra's flags (`-m`) before the overrides, the judge-call cache at `cache`."""
    flags = [item for item in overrides if item.startswith("-")]
    rest = [item for item in overrides if not item.startswith("-")]
    return [sys.executable, "-m", "harness", *flags, f"cache.path={cache}", f"bootstrap_samples={bootstrap_samples}", *rest]


def harness_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without MLFLOW_TRACKING_URI (a run logs where its config says), plus `extra`."""
    return {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"} | dict(extra or {})


def harness_cli(cwd: Path, *overrides: str, cache: Path, merged: bool = False, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python -m harness <overrides>` run to completion in `cwd` (no bootstrap: runs here check point values).

    `merged` sends stderr into stdout with both unbuffered, so the output holds the progress bars and
    the log lines in the order they happened."""
    command = harness_command(overrides, cache, bootstrap_samples=0)
    if merged:
        environment = harness_environment({"PYTHONUNBUFFERED": "1"})
        return subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=environment)
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=harness_environment())
