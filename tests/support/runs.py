"""What a finished or interrupted run left behind, read the same way by every test that resumes runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

# What a run did rather than what it found: these differ between attempts by design.
WORK_COUNTERS = ("judge_calls", "cache_hits")


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
