"""`bench/provenance.py`: the date, commit and tree state a result records, read from a real git checkout."""

from __future__ import annotations

import importlib.util
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_provenance", ROOT / "bench" / "provenance.py")
assert _spec is not None and _spec.loader is not None
provenance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(provenance)


def _git(root: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", *args]
    return subprocess.run(command, cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def _checkout(root: Path) -> str:
    (root / "bench" / "results").mkdir(parents=True)
    (root / "bench" / "demo.py").write_text("print('demo')\n")
    (root / "bench" / "results" / "demo.json").write_text("{}\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "demo")
    return _git(root, "rev-parse", "HEAD")


def test_a_clean_checkout_records_its_head_the_utc_date_and_the_command(tmp_path: Path) -> None:
    head = _checkout(tmp_path)
    before = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = provenance.stamp(tmp_path, [str(tmp_path / "bench" / "demo.py"), "--pass-by-value"])
    date = datetime.fromisoformat(stamp.pop("date"))
    assert date.utcoffset() == timedelta(0) and before <= date <= datetime.now(timezone.utc)
    assert stamp == {"commit": head, "uncommitted_changes": False, "script": "bench/demo.py", "argv": ["--pass-by-value"]}


def test_a_changed_file_is_recorded_but_a_changed_result_is_not(tmp_path: Path) -> None:
    _checkout(tmp_path)
    argv = [str(tmp_path / "bench" / "demo.py")]
    (tmp_path / "bench" / "results" / "demo.json").write_text('{"new": 1}\n')
    (tmp_path / "bench" / "results" / "other.json").write_text("{}\n")
    assert provenance.stamp(tmp_path, argv)["uncommitted_changes"] is False  # writing results is what a run does
    (tmp_path / "bench" / "demo.py").write_text("print('changed')\n")
    assert provenance.stamp(tmp_path, argv)["uncommitted_changes"] is True
    _git(tmp_path, "checkout", "--", "bench/demo.py")
    (tmp_path / "new_module.py").write_text("\n")  # an untracked file can change what runs, too
    assert provenance.stamp(tmp_path, argv)["uncommitted_changes"] is True


def test_outside_a_checkout_the_commit_is_unknown_not_invented(tmp_path: Path) -> None:
    stamp = provenance.stamp(tmp_path, ["/elsewhere/bench.py"])
    assert (stamp["commit"], stamp["uncommitted_changes"], stamp["script"], stamp["argv"]) == (None, None, "/elsewhere/bench.py", [])
