"""The call cache shared by runs that start together (the tasks of a Slurm array open one file at once)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from harness.core import CallCache

OPENERS = 8
TRIALS = 16  # before the fix about one trial in three lost an opener to "database is locked"


def _open_and_put(path: Path, barrier: Any, results: Any, index: int) -> None:
    barrier.wait()
    try:
        cache = CallCache(path)
        cache.put_many({f"key-{index}": index})
        cache.close()
        results.put(None)
    except Exception as error:  # reported to the test, which names it
        results.put(f"{type(error).__name__}: {error}")


def test_processes_opening_a_new_cache_at_once_all_open_it_and_keep_their_answers(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for trial in range(TRIALS):
        path = tmp_path / f"trial-{trial}" / "calls.sqlite"
        barrier, results = context.Barrier(OPENERS), context.Queue()
        openers = [context.Process(target=_open_and_put, args=(path, barrier, results, index)) for index in range(OPENERS)]
        for opener in openers:
            opener.start()
        errors = [error for error in (results.get(timeout=120) for _ in openers) if error is not None]
        for opener in openers:
            opener.join(timeout=60)
        assert errors == [], f"trial {trial}: {errors[0]}"
        assert CallCache(path).get_many(f"key-{index}" for index in range(OPENERS)) == {f"key-{index}": index for index in range(OPENERS)}
