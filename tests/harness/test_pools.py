"""Pool files: every bad line is reported with file, line and field; selection keeps dataset order."""

import json
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from harness.core.values import Candidate, PublicProblem
from harness.pools import read_pool_file, select_run, write_pool_file


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


GOOD = json.dumps({"problem_id": "p1", "candidate_id": "a", "text": "A: 1", "source": "m", "meta": {"t": 0.7}})


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        pytest.param("{not json", r"pool.jsonl:2: malformed JSON", id="malformed-json"),
        pytest.param(json.dumps({"problem_id": "p1", "text": "x"}), r"pool.jsonl:2: field 'candidate_id'", id="missing-field"),
        pytest.param(json.dumps({"problem_id": "p1", "candidate_id": "b", "text": 3}), r"pool.jsonl:2: field 'text'", id="wrong-type"),
        pytest.param(json.dumps({"problem_id": "p1", "candidate_id": "b", "text": "x", "extra": 1}), r"pool.jsonl:2: field 'extra'", id="unknown-field"),
        pytest.param(GOOD, r"pool.jsonl:2: duplicate candidate 'a'", id="duplicate"),
        # Valid JSON, no text: a lone surrogate cannot be encoded, digested or logged (it crashed a run).
        pytest.param('{"problem_id": "p1", "candidate_id": "b", "text": "def f():\\n    return \'\\ud800\'"}', r"pool.jsonl:2: field 'text': a lone surrogate", id="lone-surrogate-text"),
        pytest.param('{"problem_id": "p1", "candidate_id": "b", "text": "x", "meta": {"k": ["\\udfff"]}}', r"pool.jsonl:2: field 'meta': a lone surrogate", id="lone-surrogate-meta"),
    ],
)
def test_bad_pool_lines_are_reported_with_line_and_field(tmp_path: Path, bad_line: str, message: str) -> None:
    path = _write(tmp_path / "pool.jsonl", [GOOD, bad_line])
    with pytest.raises(HarnessError, match=message):
        read_pool_file(path)


def test_a_line_naming_a_problem_the_task_lacks_is_refused_with_its_line(tmp_path: Path) -> None:
    unknown = json.dumps({"problem_id": "p9", "candidate_id": "b", "text": "A: 2"})
    path = _write(tmp_path / "pool.jsonl", [GOOD, "", unknown])
    with pytest.raises(HarnessError, match=r"pool.jsonl:3: field 'problem_id': unknown problem id 'p9'"):
        read_pool_file(path, {"p1", "p2"})
    assert len(read_pool_file(path)) == 2  # without the task's ids, only the format is checked


def test_good_pool_reads_every_field(tmp_path: Path) -> None:
    [candidate] = read_pool_file(_write(tmp_path / "pool.jsonl", [GOOD, ""]))
    assert candidate == Candidate("p1", "a", "A: 1", "m", {"t": 0.7})


def test_a_written_pool_reads_back_unchanged(tmp_path: Path) -> None:
    candidates = [Candidate("p1", "a", "A: 1 \u00e9", "m", {"seed": 7}), Candidate("p2", "b", "A: 2")]
    path = write_pool_file(tmp_path / "sub" / "pool.jsonl", candidates)
    assert read_pool_file(path) == candidates
    assert "\u00e9" in path.read_text(encoding="utf-8")  # text kept as written, not escaped


def test_missing_and_empty_pool_files(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="cannot read pool file"):
        read_pool_file(tmp_path / "absent.jsonl")
    with pytest.raises(HarnessError, match="has no candidates"):
        read_pool_file(_write(tmp_path / "empty.jsonl", [""]))


PROBLEMS = [PublicProblem(f"p{i}", f"q{i}") for i in range(4)]


def test_run_covers_named_problems_in_dataset_order_capped_by_limit_and_n() -> None:
    pool = [Candidate("p3", "x", ""), Candidate("p1", "y", ""), Candidate("p1", "z", ""), Candidate("p2", "w", "")]
    groups = select_run(PROBLEMS, pool, limit=2, n=1, origin="pool")
    assert [(p.problem_id, [c.candidate_id for c in cs]) for p, cs in groups] == [("p1", ["y"]), ("p2", ["w"])]


def test_unknown_problem_ids_and_bad_limits_are_errors() -> None:
    with pytest.raises(HarnessError, match="unknown problem id 'p9'"):
        select_run(PROBLEMS, [Candidate("p9", "x", "")], limit=5, n=None, origin="pool.jsonl")
    with pytest.raises(HarnessError, match="limit must be at least 1"):
        select_run(PROBLEMS, [], limit=0, n=None, origin="pool")
