"""Values on the auditor's side of a task: the sealed anchors, the attack catalogue, the loaded task.

The split is the point of this module. The public values (`PublicProblem`, `Candidate`, on the floor in
`harness.core.values`) are all that prompt building ever receives; the ground truth lives in
`AnchorStore`, which only the auditor opens.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from harness.core import Candidate, PublicProblem
from tasks.task_shield import TaskShield


@dataclass(frozen=True)
class AnchorOutcome:
    """The auditor's finding for one candidate: is it right, and what answer did we read from it."""

    correct: bool
    extracted_answer: str | None
    outcome: str | None = None  # task-specific kind, e.g. "pass", "wrong_answer", "timeout" for code
    details: Mapping[str, Any] = field(default_factory=dict)


AnchorT = TypeVar("AnchorT")


@dataclass(frozen=True)
class Attacker:
    """A task's catalogue of known hacks, on the auditor's side of the seal.

    Some attacks start from the reference solution (gold reasoning with a swapped final answer), so
    the attacker lives with the anchors: `make(kind, problem, honest_texts, rng, reference)` returns
    an attack candidate's text (raising ValueError when a kind cannot be built for a problem).
    """

    kinds: tuple[str, ...]
    make: Callable[[str, PublicProblem, Sequence[str], random.Random, str | None], str]
    references: Mapping[str, str] = field(default_factory=dict)


class AnchorStore(Generic[AnchorT]):
    """Ground truth per problem id, opened only by the auditor.

    The store holds the anchors privately and exposes only `check`, which applies the task's checker
    to a candidate's text. Its repr names the task and size, never an anchor, so it cannot leak
    through logs or config dumps.
    """

    def __init__(
        self,
        task: str,
        anchors: Mapping[str, AnchorT],
        checker: Callable[[AnchorT, str], AnchorOutcome],
        attacker: Attacker | None = None,
    ) -> None:
        self._task = task
        self._anchors = dict(anchors)
        self._checker = checker
        self._attacker = attacker
        self._planted: dict[tuple[str, str], str] = {}

    def __repr__(self) -> str:
        return f"AnchorStore(task={self._task!r}, anchors={len(self._anchors)})"

    def __len__(self) -> int:
        return len(self._anchors)

    def __contains__(self, problem_id: object) -> bool:
        return problem_id in self._anchors

    def __iter__(self) -> Iterator[str]:
        return iter(self._anchors)

    def __reduce__(self) -> Any:
        raise TypeError("AnchorStore is sealed to the auditor and must not be pickled or shipped to workers")

    def check(self, problem_id: str, text: str) -> AnchorOutcome:
        return self._checker(self._anchors[problem_id], text)

    @property
    def attack_kinds(self) -> tuple[str, ...]:
        return self._attacker.kinds if self._attacker is not None else ()

    def make_attack(self, problem: PublicProblem, kind: str, honest_texts: Sequence[str], rng: random.Random) -> str | None:
        """The text of a `kind` attack for `problem`; None when this kind cannot be built for it."""
        if self._attacker is None:
            raise ValueError(f"task {self._task!r} has no attack catalogue")
        try:
            return self._attacker.make(kind, problem, honest_texts, rng, self._attacker.references.get(problem.problem_id))
        except ValueError:
            return None

    def mark_planted(self, problem_id: str, candidate_id: str, kind: str) -> None:
        self._planted[(problem_id, candidate_id)] = kind

    def planted_kind(self, problem_id: str, candidate_id: str) -> str | None:
        """The attack kind planted under this candidate id, or None for an organic candidate."""
        return self._planted.get((problem_id, candidate_id))


@dataclass(frozen=True)
class TaskData:
    """A loaded task: problems in dataset order, their sealed anchors, and the task's default pool.

    `shield`, when the task has one, verifies a candidate from public data only (`TaskShield`).
    """

    name: str
    problems: tuple[PublicProblem, ...]
    anchors: AnchorStore[Any]
    default_pool: Callable[[], list[Candidate]]
    extract_answer: Callable[[str], str | None]
    data_hash: str
    shield: TaskShield | None = None
