"""Load MATH-500 (bundled or from the Hub) into a `TaskData` with sealed answers."""

from __future__ import annotations

import hashlib
import json

from harness.core import Candidate, HarnessError, PublicProblem
from tasks.config import TaskConfig
from tasks.math.attacks import ATTACK_KINDS, make_attack
from tasks.math.checker import MathAnchor, check_answer
from tasks.math.extract import extract_answer
from tasks.math.subset import parse_subset
from tasks.rows import Rows, bundled_jsonl, task_rows
from tasks.task_shield import lazy_shield
from tasks.types import AnchorStore, Attacker, TaskData

DEFAULT_HUB_DATASET = "HuggingFaceH4/MATH-500"
_FIELDS = ("problem", "solution", "answer", "subject", "level")


def bundled() -> Rows:
    """MATH-500 as shipped in `tasks/math/data`, every row in file order."""
    return bundled_jsonl("tasks.math", "test.jsonl.gz")


def load(config: TaskConfig) -> TaskData:
    """MATH-500 problems `math500-<i>` (0-based row index in the full set), narrowed by `subset`.

    `source=bundled` reads the gzipped copy in `tasks/math/data`; `source=hub` loads
    `hub_dataset` (default HuggingFaceH4/MATH-500) through `datasets`. The default pool holds each
    problem's reference solution (a worked solution ending in `\\boxed{}`), as a known-correct
    candidate.
    """
    source = task_rows(config, bundled=bundled, hub_dataset=DEFAULT_HUB_DATASET, fields=_FIELDS)
    rows = [{name: row[name] for name in _FIELDS} for row in source.rows]
    subset = parse_subset(config.subset)
    kept = [(f"math500-{index}", row) for index, row in enumerate(rows) if subset.keeps(row)]
    if not kept:
        raise HarnessError(f"task.subset: {config.subset!r} selects no problems")
    digest = hashlib.sha256()
    for problem_id, row in kept:
        digest.update(json.dumps([problem_id, row], sort_keys=True).encode())
    problems = tuple(PublicProblem(problem_id, row["problem"]) for problem_id, row in kept)
    solutions = [(pid, row["solution"]) for pid, row in kept]
    attacker = Attacker(ATTACK_KINDS, make_attack, dict(solutions))
    anchors = AnchorStore("math", {pid: MathAnchor(str(row["answer"]), str(row["problem"])) for pid, row in kept}, check_answer, attacker)

    def reference_pool() -> list[Candidate]:
        return [Candidate(pid, f"{pid}/reference", text, source="reference") for pid, text in solutions]

    return TaskData("math", problems, anchors, reference_pool, extract_answer, digest.hexdigest(), shield=lazy_shield("tasks.math.shield"))
