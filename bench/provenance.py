"""When and on what code a benchmark result was measured: every result file records it.

A number without its commit cannot be compared with the code it describes, and one without its date
cannot be told stale; `docs/benchmarks.md` (written by `bench/benchmarks_doc.py`) shows both for
every result and refuses a result that lacks them.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def stamp(root: Path = ROOT, argv: list[str] | None = None) -> dict[str, Any]:
    """`date` (UTC, now), `commit` (HEAD of the checkout at `root`), `uncommitted_changes` (whether
    files other than `bench/results/` differ from it: the numbers then describe code no commit
    holds), and the `script` and `argv` that wrote the result (default: this process's).

    Outside a git checkout `commit` and `uncommitted_changes` are None, and the doc says "unknown".
    """
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    head = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain", "--", ".", ":(exclude)bench/results")
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": head,
        "uncommitted_changes": None if head is None or status is None else bool(status),
        "script": str(script.relative_to(root)) if script.is_relative_to(root) else str(script),
        "argv": list(argv[1:]),
    }


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except OSError:  # no git installed
        return None
    return done.stdout.strip() if done.returncode == 0 else None
