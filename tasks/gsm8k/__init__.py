"""GSM8K: grade-school math word problems with numeric answers.

Data: the GSM8K test set (1,319 problems) from Cobbe et al. 2021, "Training Verifiers to Solve Math
Word Problems" (github.com/openai/grade-school-math, MIT licence, see `data/LICENSE`), and the authors'
`example_model_solutions.jsonl`: four real GPT-3 solutions per test problem (6B and 175B, finetuned
and verifier-selected), which is the default candidate pool. Problem ids are `gsm8k-test-<i>`, `i` the
0-based line of `test.jsonl`. The anchor is the gold final answer after `####`; answers are read and
compared by `tasks.gsm8k.answers`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

from harness.core.errors import HarnessError
from harness.core.values import Candidate, PublicProblem
from tasks.config import TaskConfig
from tasks.gsm8k.answers import answers_equal, extract_answer
from tasks.gsm8k.attacks import ATTACK_KINDS, make_attack
from tasks.hub import hub_rows
from tasks.types import AnchorOutcome, AnchorStore, Attacker, TaskData

NAME = "gsm8k"
# Keys of the four model solutions in example_model_solutions.jsonl, in file order.
POOL_KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def _bundled_bytes(name: str) -> bytes:
    return gzip.decompress(resources.files(__name__).joinpath("data", name).read_bytes())


def _rows_from_jsonl(data: bytes, origin: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise HarnessError(f"{origin}:{number}: malformed JSON ({error.msg})") from error
    return rows


def gold_answer(solution: str) -> str:
    """The canonical gold answer of a GSM8K reference solution (the number after `####`)."""
    answer = extract_answer(solution)
    if answer is None or "####" not in solution:
        raise HarnessError(f"GSM8K reference solution has no '#### <number>' line: {solution[-80:]!r}")
    return answer


def check(gold: str, text: str) -> AnchorOutcome:
    extracted = extract_answer(text)
    return AnchorOutcome(correct=answers_equal(extracted, gold), extracted_answer=extracted)


def problems_from_rows(
    rows: Iterable[Mapping[str, Any]], origin: str
) -> tuple[tuple[PublicProblem, ...], dict[str, str], dict[str, str]]:
    """Problems, their canonical gold answers, and their reference solutions (both auditor-side)."""
    problems, anchors, references = [], {}, {}
    for index, row in enumerate(rows):
        if not isinstance(row.get("question"), str) or not isinstance(row.get("answer"), str):
            raise HarnessError(f"{origin}: row {index} needs string fields 'question' and 'answer'")
        problem_id = f"gsm8k-test-{index}"
        problems.append(PublicProblem(problem_id=problem_id, question=row["question"]))
        anchors[problem_id] = gold_answer(row["answer"])
        references[problem_id] = row["answer"]
    return tuple(problems), anchors, references


def model_solution_pool(problems: Iterable[PublicProblem]) -> list[Candidate]:
    """The GSM8K authors' four model solutions per problem, matched to problems by question text."""
    by_question = {problem.question: problem.problem_id for problem in problems}
    rows = _rows_from_jsonl(_bundled_bytes("example_model_solutions.jsonl.gz"), "example_model_solutions.jsonl")
    candidates = []
    for row in rows:
        problem_id = by_question.get(row["question"])
        if problem_id is None:
            continue
        for key in POOL_KEYS:
            size, method = key.split("_")
            candidates.append(
                Candidate(
                    problem_id=problem_id,
                    candidate_id=key,
                    text=row[key]["solution"],
                    source=f"gpt3-{size}-{method}",
                )
            )
    return candidates


def _shield(problem: PublicProblem, candidate: Candidate, reward: float | None, options: Any) -> Any:
    """The GSM8K shield (`tasks.gsm8k.shield`), imported on first use."""
    from tasks.gsm8k.shield import shield_candidate

    return shield_candidate(problem, candidate, reward, options)


def load(config: TaskConfig) -> TaskData:
    if config.source == "bundled":
        data = _bundled_bytes("test.jsonl.gz")
        rows = _rows_from_jsonl(data, "gsm8k/test.jsonl")
        origin = "gsm8k/test.jsonl"
    elif config.source == "hub":
        rows = hub_rows(config, "openai/gsm8k")
        data = json.dumps(rows, sort_keys=True).encode("utf-8")
        origin = f"{config.hub_dataset}[{config.hub_split}]"
    else:
        raise HarnessError(f"task.source={config.source!r} is not one of: bundled, hub")
    if config.subset is not None:
        raise HarnessError("task.subset is not supported for gsm8k (it has no levels or subjects)")
    problems, anchors, references = problems_from_rows(rows, origin)
    return TaskData(
        name=NAME,
        problems=problems,
        anchors=AnchorStore(NAME, anchors, check, Attacker(ATTACK_KINDS, make_attack, references)),
        default_pool=lambda: model_solution_pool(problems),
        extract_answer=extract_answer,
        data_hash=hashlib.sha256(data).hexdigest(),
        shield=_shield,
    )
