"""GSM8K: grade-school math word problems with numeric answers.

Data: the GSM8K test set (1,319 problems) from Cobbe et al. 2021, "Training Verifiers to Solve Math
Word Problems" (github.com/openai/grade-school-math, MIT licence, see `data/LICENSE`), and the authors'
`example_model_solutions.jsonl`: four real GPT-3 solutions per test problem (6B and 175B, finetuned
and verifier-selected), which is the default candidate pool. Problem ids are `gsm8k-test-<i>`, `i` the
0-based line of `test.jsonl`. The anchor is the gold final answer after `####`; answers are read and
compared by `tasks.gsm8k.answers`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from harness.core import Candidate, HarnessError, PublicProblem
from tasks.config import TaskConfig
from tasks.gsm8k.answers import MAX_OFFERED, answers_equal, canonical, extract_answer, read_answer
from tasks.gsm8k.attacks import ATTACK_KINDS, make_attack
from tasks.rows import bundled_jsonl, task_rows
from tasks.task_shield import lazy_shield
from tasks.types import AnchorOutcome, AnchorStore, Attacker, TaskData

NAME = "gsm8k"
# Keys of the four model solutions in example_model_solutions.jsonl, in file order.
POOL_KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")


def gold_answer(solution: str) -> str:
    """The canonical gold answer of a GSM8K reference solution (the number after `####`)."""
    answer = extract_answer(solution)
    if answer is None or "####" not in solution:
        raise HarnessError(f"GSM8K reference solution has no '#### <number>' line: {solution[-80:]!r}")
    return answer


def check(gold: str, text: str) -> AnchorOutcome:
    """Right when the one committed answer equals the gold exactly; a hedge is wrong, with outcome `hedged`
    and the values it offered in `details`; a candidate over MAX_TEXT_CHARS is wrong, outcome `too_long`."""
    reading = read_answer(text)
    if reading.too_long:
        return AnchorOutcome(False, None, outcome="too_long")
    if reading.hedged:
        return AnchorOutcome(False, None, outcome="hedged", details={"offered": [canonical(value) for value in reading.offered[:MAX_OFFERED]]})
    extracted = canonical(reading.value) if reading.value is not None else None
    return AnchorOutcome(correct=answers_equal(extracted, gold), extracted_answer=extracted)


def problems_from_rows(
    rows: Iterable[Mapping[str, Any]], origin: str
) -> tuple[tuple[PublicProblem, ...], dict[str, str], dict[str, str]]:
    """Problems, their canonical gold answers, and their reference solutions (both auditor-side)."""
    problems, anchors, references = [], {}, {}
    for index, row in enumerate(rows):
        for name in ("question", "answer"):
            if not isinstance(row.get(name), str):
                raise HarnessError(f"{origin}: row {index + 1} field {name!r} must be a string")
        problem_id = f"gsm8k-test-{index}"
        problems.append(PublicProblem(problem_id=problem_id, question=row["question"]))
        anchors[problem_id] = gold_answer(row["answer"])
        references[problem_id] = row["answer"]
    return tuple(problems), anchors, references


def model_solution_pool(problems: Iterable[PublicProblem]) -> list[Candidate]:
    """The GSM8K authors' four model solutions per problem, matched to problems by question text."""
    by_question = {problem.question: problem.problem_id for problem in problems}
    candidates = []
    for row in bundled_jsonl(__name__, "example_model_solutions.jsonl.gz").rows:
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


def load(config: TaskConfig) -> TaskData:
    source = task_rows(config, bundled=lambda: bundled_jsonl(__name__, "test.jsonl.gz"), hub_dataset="openai/gsm8k", fields=("question", "answer"))
    if config.subset is not None:
        raise HarnessError("task.subset is not supported for gsm8k (it has no levels or subjects)")
    problems, anchors, references = problems_from_rows(source.rows, source.origin)
    return TaskData(
        name=NAME,
        problems=problems,
        anchors=AnchorStore(NAME, anchors, check, Attacker(ATTACK_KINDS, make_attack, references)),
        default_pool=lambda: model_solution_pool(problems),
        extract_answer=extract_answer,
        data_hash=source.sha256,
        shield=lazy_shield("tasks.gsm8k.shield"),
    )
