"""Every task reads its rows through one loader, so a bad source or a bad row reads the same in each."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from tasks import load_task
from tasks.config import TaskConfig
from tasks.rows import bundled_jsonl
from tests.support.ci import unavailable

# One row per task with every field it needs, then the same row without one field.
ROWS = {
    "gsm8k": ({"question": "What is 2 + 3?", "answer": "2 + 3 = 5\n#### 5"}, "answer"),
    "math": ({"problem": "What is $2+3$?", "solution": "$\\boxed{5}$", "answer": "5", "subject": "Algebra", "level": 1}, "level"),
    "code": (
        {
            "task_id": "HumanEval/0",
            "prompt": "def add(x, y):\n",
            "canonical_solution": "    return x + y\n",
            "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
            "entry_point": "add",
        },
        "entry_point",
    ),
}


def _needs_datasets() -> None:
    try:
        import datasets  # noqa: F401
    except ImportError:
        unavailable("the hub source needs `datasets` (the test extra installs it)")


def _hub_folder(root: Path, rows: list[dict]) -> str:
    root.mkdir(parents=True)
    (root / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return str(root)


@pytest.mark.parametrize("task", list(ROWS))
def test_an_unknown_source_is_the_same_line_for_every_task(task: str) -> None:
    with pytest.raises(HarnessError) as raised:
        load_task(TaskConfig(name=task, source="ftp"))
    assert str(raised.value) == "task.source='ftp' is not one of: bundled, hub"


@pytest.mark.parametrize("task", list(ROWS))
def test_a_hub_row_missing_a_field_is_named_by_row_and_field(task: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _needs_datasets()
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    row, dropped = ROWS[task]
    broken = {name: value for name, value in row.items() if name != dropped}
    folder = _hub_folder(tmp_path / "data", [row])
    loaded = load_task(TaskConfig(name=task, source="hub", hub_dataset=folder))
    assert len(loaded.problems) == 1  # control: the same row with all its fields loads
    folder = _hub_folder(tmp_path / "broken", [row, row, broken])
    with pytest.raises(HarnessError) as raised:
        load_task(TaskConfig(name=task, source="hub", hub_dataset=folder))
    assert str(raised.value) == f"hub dataset {folder}[test]: row 3 lacks field {dropped!r}"


def test_a_malformed_bundled_line_is_named_by_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "shipped_rows"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    lines = ['{"question": "a"}', "", '{"question": "b"}', '{"question": ']
    (package / "data" / "rows.jsonl.gz").write_bytes(gzip.compress("\n".join(lines).encode()))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(HarnessError) as raised:
        bundled_jsonl("shipped_rows", "rows.jsonl.gz")
    assert str(raised.value).startswith("shipped_rows/data/rows.jsonl.gz:4: malformed JSON (")
    (package / "data" / "rows.jsonl.gz").write_bytes(gzip.compress("\n".join(lines[:3]).encode()))
    shipped = bundled_jsonl("shipped_rows", "rows.jsonl.gz")
    assert shipped.rows == [{"question": "a"}, {"question": "b"}]  # the blank line is no row
    assert shipped.origin == "shipped_rows/data/rows.jsonl.gz"
    sys.modules.pop("shipped_rows", None)
