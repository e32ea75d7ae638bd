"""A dependency a test needs is missing: a skip on a user's machine, a failure in CI.

CI installs everything the tests need (`.ci/run`), so there a missing measure or package means the
build is broken, and a skip would hide it."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Fail with `reason` when CI=true, else skip with it."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: this must run here)")
    pytest.skip(reason)
