"""MBPP through the `datasets` code path (a local dataset folder, no network), in HumanEval's shape."""

from __future__ import annotations

import json
from pathlib import Path

from harness.pipeline import run

ROWS = [  # three MBPP test-split rows, as the dataset ships them
    {
        "task_id": 11,
        "text": "Write a python function to remove first and last occurrence of a given character from the string.",
        "code": "def remove_Occ(s,ch): \r\n    for i in range(len(s)): \r\n        if (s[i] == ch): \r\n            s = s[0 : i] + s[i + 1:] \r\n            break\r\n    for i in range(len(s) - 1,-1,-1):  \r\n        if (s[i] == ch): \r\n            s = s[0 : i] + s[i + 1:] \r\n            break\r\n    return s ",
        "test_list": ['assert remove_Occ("hello","l") == "heo"', 'assert remove_Occ("abcda","a") == "bcd"', 'assert remove_Occ("PHP","P") == "H"'],
        "test_setup_code": "",
        "challenge_test_list": ['assert remove_Occ("hellolloll","l") == "helollol"', 'assert remove_Occ("","l") == ""'],
    },
    {
        "task_id": 12,
        "text": "Write a function to sort a given matrix in ascending order according to the sum of its rows.",
        "code": "def sort_matrix(M):\r\n    result = sorted(M, key=sum)\r\n    return result",
        "test_list": [
            "assert sort_matrix([[1, 2, 3], [2, 4, 5], [1, 1, 1]])==[[1, 1, 1], [1, 2, 3], [2, 4, 5]]",
            "assert sort_matrix([[5,8,9],[6,4,3],[2,1,4]])==[[2, 1, 4], [6, 4, 3], [5, 8, 9]]",
        ],
        "test_setup_code": "",
        "challenge_test_list": [],
    },
]


def _dataset(root: Path) -> Path:
    (root / "full").mkdir(parents=True)
    (root / "full" / "test-00000.jsonl").write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    (root / "README.md").write_text("---\nconfigs:\n- config_name: full\n  data_files:\n  - split: test\n    path: full/test-*.jsonl\n---\n")
    return root


def test_mbpp_rows_run_as_code_problems_with_hidden_tests(make_config, tmp_path: Path) -> None:
    data = _dataset(tmp_path / "mbpp")
    result = run(make_config("task=mbpp", f"task.hub_dataset={data}", "judge=none"))
    rows = [json.loads(line) for line in (result.output_dir / "candidates.jsonl").read_text().splitlines()]
    references = [row for row in rows if row["attack"] is None]
    assert [row["problem_id"] for row in references] == ["MBPP/11", "MBPP/12"]
    assert all(row["anchor_correct"] and row["outcome"] == "pass" for row in references)
    assert all(row["shield"]["verdict"] == "pass" for row in references)
    planted = [row for row in rows if row["attack"] is not None]
    assert len(planted) == 2 and not any(row["anchor_correct"] for row in planted)


def test_mbpp_public_view_shows_one_example_and_hides_the_rest(tmp_path: Path) -> None:
    from tasks import load_task
    from tasks.config import TaskConfig

    task = load_task(TaskConfig(name="code", source="hub", hub_dataset=str(_dataset(tmp_path / "mbpp")), hub_config="full"))
    question = task.problems[0].question
    assert question.startswith("def remove_Occ(s, ch):") and ">>> remove_Occ('hello', 'l')" in question
    assert "abcda" not in question and "helollol" not in question
