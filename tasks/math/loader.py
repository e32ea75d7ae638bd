"""Load MATH-500 (bundled or from the Hub) into a `TaskData` with sealed answers."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

from harness.core.errors import HarnessError
from harness.core.values import Candidate, PublicProblem
from tasks.config import TaskConfig
from tasks.hub import hub_rows
from tasks.math.attacks import ATTACK_KINDS, make_attack
from tasks.math.checker import check_answer
from tasks.math.extract import extract_answer
from tasks.math.subset import parse_subset
from tasks.types import AnchorStore, Attacker, TaskData

DEFAULT_HUB_DATASET = "HuggingFaceH4/MATH-500"
_FIELDS = ("problem", "solution", "answer", "subject", "level")


def _bundled_rows() -> list[dict[str, Any]]:
    path = resources.files("tasks.math") / "data" / "test.jsonl.gz"
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def _validated(rows: Iterable[dict[str, Any]], origin: str) -> list[dict[str, Any]]:
    out = []
    for line, row in enumerate(rows, start=1):
        missing = [name for name in _FIELDS if name not in row]
        if missing:
            raise HarnessError(f"{origin}: row {line} lacks field {missing[0]!r}")
        out.append({name: row[name] for name in _FIELDS})
    return out


def shield(problem: PublicProblem, candidate: Candidate, reward: float | None, options: Any) -> Any:
    """The MATH shield (`tasks.math.shield`), imported on first use."""
    from tasks.math.shield import shield_candidate

    return shield_candidate(problem, candidate, reward, options)


def load(config: TaskConfig) -> TaskData:
    """MATH-500 problems `math500-<i>` (0-based row index in the full set), narrowed by `subset`.

    `source=bundled` reads the gzipped copy in `tasks/math/data`; `source=hub` loads
    `hub_dataset` (default HuggingFaceH4/MATH-500) through `datasets`. The default pool holds each
    problem's reference solution (a worked solution ending in `\\boxed{}`), as a known-correct
    candidate.
    """
    if config.source == "bundled":
        rows = _validated(_bundled_rows(), "tasks/math/data/test.jsonl.gz")
    elif config.source == "hub":
        rows = _validated(hub_rows(config, DEFAULT_HUB_DATASET), f"hub dataset {config.hub_dataset or DEFAULT_HUB_DATASET}")
    else:
        raise HarnessError(f"task.source: unknown value {config.source!r} (use bundled or hub)")
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
    anchors = AnchorStore("math", {pid: str(row["answer"]) for pid, row in kept}, check_answer, attacker)

    def reference_pool() -> list[Candidate]:
        return [Candidate(pid, f"{pid}/reference", text, source="reference") for pid, text in solutions]

    return TaskData("math", problems, anchors, reference_pool, extract_answer, digest.hexdigest(), shield=shield)
