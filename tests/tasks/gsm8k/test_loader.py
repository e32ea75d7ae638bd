"""Loading GSM8K: the bundled copy, its pool, and the `datasets` code path on a local dataset."""

import json
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from tasks import load_task
from tasks.config import TaskConfig


def test_bundled_task_has_all_problems_and_the_real_pool() -> None:
    task = load_task(TaskConfig())
    assert len(task.problems) == 1319
    assert task.problems[0].problem_id == "gsm8k-test-0"
    assert task.problems[0].question.startswith("Janet")
    pool = task.default_pool()
    assert len(pool) == 4 * 1319
    assert {c.candidate_id for c in pool[:4]} == {"6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"}
    assert task.anchors.check("gsm8k-test-0", "A: 18").correct
    assert not task.anchors.check("gsm8k-test-0", "A: 26").correct


def test_anchor_store_never_shows_its_content() -> None:
    task = load_task(TaskConfig())
    assert "18" not in repr(task.anchors)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(task.anchors)


def test_hub_loader_reads_a_local_dataset_through_datasets(tmp_path: Path) -> None:
    rows = [
        {"question": "Tom has 2 apples and buys 3 more. How many?", "answer": "2+3=<<2+3=5>>5\n#### 5"},
        {"question": "A box holds 4 pens. How many pens in 2 boxes?", "answer": "4*2=<<4*2=8>>8\n#### 8"},
    ]
    (tmp_path / "main").mkdir()
    (tmp_path / "main" / "test-00000.jsonl").write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    (tmp_path / "README.md").write_text(
        "---\nconfigs:\n- config_name: main\n  data_files:\n  - split: test\n    path: main/test-*.jsonl\n---\n"
    )
    task = load_task(TaskConfig(source="hub", hub_dataset=str(tmp_path), hub_config="main", hub_split="test"))
    assert [p.problem_id for p in task.problems] == ["gsm8k-test-0", "gsm8k-test-1"]
    assert task.anchors.check("gsm8k-test-1", "The answer is 8").correct
    assert task.default_pool() == []  # the bundled pool matches no question of this dataset


def test_unknown_task_and_source_are_user_errors() -> None:
    with pytest.raises(HarnessError, match="unknown task 'nope'"):
        load_task(TaskConfig(name="nope"))
    with pytest.raises(HarnessError, match="task.source='web'"):
        load_task(TaskConfig(source="web"))
