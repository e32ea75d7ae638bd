"""Loading MATH-500: bundled data, subsets, sealed anchors, and the hub path on a local folder."""

import json
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from tasks.config import TaskConfig
from tasks.math import load, parse_subset
from tasks.math.loader import bundled


def test_bundled_has_500_problems_with_stable_ids() -> None:
    task = load(TaskConfig(name="math"))
    assert len(task.problems) == 500 and len(task.anchors) == 500
    assert task.problems[0].problem_id == "math500-0"
    assert task.problems[0].question.startswith("Convert the point $(0,3)$")
    assert "anchors=500" in repr(task.anchors)


def test_public_problem_does_not_carry_the_answer() -> None:
    task = load(TaskConfig(name="math", subset="level=1"))
    answers = {row["answer"] for row in bundled().rows}
    for problem in task.problems:
        assert set(vars(problem)) == {"problem_id", "question"}
    assert "anchors" not in repr(task.problems)
    assert answers  # the gold answers exist only inside the store


@pytest.mark.parametrize(
    ("subset", "count"),
    [("level=1", 43), ("level=1,2", 133), ("subject=Algebra", 124), ("level=5;subject=number theory", None)],
    ids=["one_level", "two_levels", "subject", "level_and_subject_case_insensitive"],
)
def test_subset_selects(subset: str, count: int | None) -> None:
    task = load(TaskConfig(name="math", subset=subset))
    rows = bundled().rows
    chosen = parse_subset(subset)
    assert len(task.problems) == (count if count is not None else sum(chosen.keeps(row) for row in rows))
    assert all(chosen.keeps(rows[int(p.problem_id.split("-")[1])]) for p in task.problems)


@pytest.mark.parametrize(
    ("subset", "message"),
    [
        ("level=6", "unknown level '6'"),
        ("subject=Topology", "unknown subject 'Topology'"),
        ("difficulty=1", "unknown key 'difficulty'"),
        ("level", "must look like key=value"),
    ],
    ids=["bad_level", "bad_subject", "bad_key", "no_value"],
)
def test_bad_subset_is_a_clear_error(subset: str, message: str) -> None:
    with pytest.raises(HarnessError, match=message):
        load(TaskConfig(name="math", subset=subset))


def test_unknown_source_is_a_clear_error() -> None:
    with pytest.raises(HarnessError, match="task.source"):
        load(TaskConfig(name="math", source="ftp"))


def test_hub_source_reads_through_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    rows = bundled().rows[:3]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    task = load(TaskConfig(name="math", source="hub", hub_dataset=str(tmp_path)))
    assert [p.problem_id for p in task.problems] == ["math500-0", "math500-1", "math500-2"]
    assert task.problems[2].question == rows[2]["problem"]
    assert len(task.anchors) == 3 and task.data_hash != load(TaskConfig(name="math")).data_hash


def test_default_pool_reference_solutions_are_correct() -> None:
    task = load(TaskConfig(name="math", subset="level=1;subject=Prealgebra"))
    pool = task.default_pool()
    assert len(pool) == len(task.problems) and pool[0].source == "reference"
    outcome = task.anchors.check(pool[0].problem_id, pool[0].text)
    assert outcome.correct and outcome.outcome == "correct"
