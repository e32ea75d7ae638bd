"""`python -m harness.compare`: a table of protocols x metrics, with intervals, from the runs in MLflow.

Public surface: `main(argv) -> exit status`; `cli` documents the options.
"""

from __future__ import annotations

from harness.compare.cli import main

__all__ = ["main"]
