"""Importing an engine's runtime only when that engine is built, with an install hint when it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from harness.core import HarnessError


def require(module: str, backend: str, package: str, hint: str) -> ModuleType:
    """`module`, or one line naming the backend that needs it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise HarnessError(f"the {backend} judge backend needs {package} ({hint})") from error
