"""Content-addressed cache of model calls, on disk in SQLite.

A key is the SHA-256 of everything that determines a model's output: the model's identity (file
hash), the protocol template hash, the rendered prompt and the scoring parameters. Results are
committed batch by batch, so a run killed midway resumes without repeating finished calls and a
second identical run makes no model calls at all.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.core.errors import HarnessError


def cache_key(parts: Mapping[str, Any]) -> str:
    """A stable key for a mapping of JSON-serialisable parts."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


LOCK_TIMEOUT_S = 60.0


def _set_up(connection: sqlite3.Connection) -> None:
    """WAL mode and the table, waiting out other processes doing the same.

    The tasks of a Slurm array (or any runs started together) open one shared cache at once. Switching
    a new file to WAL takes an exclusive lock, and SQLite reports a lock held by another connection
    doing the same as "database is locked" at once, without its busy timeout; so the set-up is retried
    until `LOCK_TIMEOUT_S`, as every later statement waits through `timeout`.
    """
    deadline = time.monotonic() + LOCK_TIMEOUT_S
    pause = 0.01
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            connection.commit()
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() + pause > deadline:
                raise
            connection.rollback()
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


class CallCache:
    """A key -> JSON value store. `path=None` keeps nothing (every lookup misses)."""

    def __init__(self, path: str | Path | None) -> None:
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # ensemble members judged concurrently share one connection
        if path is None:
            return
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = sqlite3.connect(path, timeout=LOCK_TIMEOUT_S, check_same_thread=False)
            _set_up(self._connection)
        except (OSError, sqlite3.Error) as error:
            raise HarnessError(f"cannot open the call cache at {path}: {error} (set cache.path=... or cache.enabled=false)") from error

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        if self._connection is None:
            return {}
        wanted = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        with self._lock:
            self._select(wanted, found)
        return found

    def _select(self, wanted: list[str], found: dict[str, Any]) -> None:
        assert self._connection is not None
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, value in self._connection.execute(f"SELECT key, value FROM calls WHERE key IN ({marks})", chunk):
                found[key] = json.loads(value)

    def put_many(self, items: Mapping[str, Any]) -> None:
        if self._connection is None or not items:
            return
        with self._lock, self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)",
                [(key, json.dumps(value, ensure_ascii=False)) for key, value in items.items()],
            )

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
