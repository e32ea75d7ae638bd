"""Free-text steps labelled with graph actions by a `StepLabeller`, trusted only after it is measured.

Some traces carry steps as free text ("The cheapest is UA960.") with no tool call and no declared
action. A step labeller (a model, in practice) says which of the graph's actions such a message
performs. `annotate` fills `action` only where an event has none and no tool call or state to derive
one from, so the deterministic parser then takes over.

The shield accepts any labeller but believes none of it. Its answers are model output, so
`checked_labels` holds every answer to the question asked: exactly one label per step, each label
exactly one of the actions offered for that step (a plain `str`, so an object that compares equal to
everything cannot pass), or None for "no answer". Anything else refuses the labeller as a whole
rather than keeping the labels that happened to look right. BenchShield's rule for LLM-based parsers
is that they must not be trusted blindly: `trust` measures the labeller on a labelled set of steps
and refuses it when its accuracy is below the required minimum.

The labelled set ships as package data (`data/labelled_steps.json`, harvested from the agent
scenarios' recorded traces by `python -m tasks.agent labelled`) and is read with the same strict
reader and a JSON Schema, like every other file the shield reads. The model-backed labeller lives
with the judges; `python -m harness.shield verify --llm-parser MODEL` puts the two together.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from harness.core import HarnessError
from harness.shield.graph import StateGraph
from harness.shield.json_input import read_json
from harness.shield.json_schema import validate
from harness.shield.trace import Trace

BUNDLED_LABELLED_STEPS = os.path.join(os.path.dirname(__file__), "data", "labelled_steps.json")


class StepQuery(NamedTuple):
    """One free-text step to label and the actions on offer (a plain tuple to the labeller)."""

    text: str
    actions: tuple[str, ...]


class StepLabeller(Protocol):
    """Labels free-text steps: for each `(text, actions)` the action the text performs, or None.

    `name` says which labeller it is in messages (a model reference)."""

    @property
    def name(self) -> str: ...

    def label(self, steps: Sequence[StepQuery]) -> Sequence[str | None]: ...


@dataclass(frozen=True)
class LabelledStep:
    """A free-text step with the graph actions on offer and the action it really performs."""

    text: str
    actions: tuple[str, ...]
    action: str
    source: str


@dataclass(frozen=True)
class LabellerAccuracy:
    labeller: str
    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def graph_actions(graph: StateGraph) -> tuple[str, ...]:
    """Every action a node of `graph` declares, sorted: the choices a labeller is offered."""
    return tuple(sorted({action for node in graph.nodes for action in node.actions}))


def checked_labels(labeller: StepLabeller, steps: Sequence[StepQuery]) -> list[str | None]:
    """`labeller`'s labels for `steps`, each checked against its step; `HarnessError` refuses the
    labeller when any answer is not one label per step from the actions offered."""
    answer = labeller.label(steps)
    who = f"step labeller {str(labeller.name)[:200]!r}"
    if isinstance(answer, (str, bytes)) or not isinstance(answer, Sequence):
        raise HarnessError(f"{who} answered with a value of type {type(answer).__name__}, not one label per step; refused")
    given = tuple(answer)  # counted as iterated, not as its __len__ claims
    if len(given) != len(steps):
        raise HarnessError(f"{who} returned {len(given)} labels for {len(steps)} steps; refused")
    labels: list[str | None] = []
    for index, (label, step) in enumerate(zip(given, steps)):
        if label is not None and not (type(label) is str and label in step.actions):
            shown = repr(label)[:80] if type(label) is str else f"with a value of type {type(label).__name__}"
            raise HarnessError(f"{who} labelled step {index} {shown}, which is not one of the {len(step.actions)} actions offered; refused")
        labels.append(label)
    return labels


def measure(labeller: StepLabeller, labelled: Sequence[LabelledStep]) -> LabellerAccuracy:
    """How many of `labelled` the labeller gets right; no answer (None) counts as wrong."""
    predicted = checked_labels(labeller, [StepQuery(step.text, step.actions) for step in labelled])
    correct = sum(choice == step.action for choice, step in zip(predicted, labelled))
    return LabellerAccuracy(str(labeller.name), correct, len(labelled))


def trust(labeller: StepLabeller, labelled: Sequence[LabelledStep], min_accuracy: float) -> LabellerAccuracy:
    """Measure `labeller` on `labelled`; refuse it (HarnessError) when below `min_accuracy`."""
    measured = measure(labeller, labelled)
    if measured.accuracy < min_accuracy:
        raise HarnessError(
            f"LLM step parser {measured.labeller}: accuracy {measured.accuracy:.3f} on {measured.total} labelled steps "
            f"is below the required {min_accuracy:.2f}; not trusted"
        )
    return measured


def annotate(trace: Trace, graph: StateGraph, labeller: StepLabeller) -> Trace:
    """`trace` with `action` filled in for free-text events that carry nothing to derive a state from."""
    actions = graph_actions(graph)
    pending = [
        index
        for index, event in enumerate(trace.events)
        if event.content and event.action is None and event.tool_name is None and event.state_after is None
    ]
    if not pending:
        return trace
    labels = checked_labels(labeller, [StepQuery(trace.events[index].content or "", actions) for index in pending])
    events = list(trace.events)
    for index, action in zip(pending, labels):
        if action is not None:
            events[index] = events[index].model_copy(update={"action": action})
    return trace.model_copy(update={"events": tuple(events)})


def load_labelled_steps(path: str = BUNDLED_LABELLED_STEPS) -> tuple[LabelledStep, ...]:
    """The labelled steps in `path` (by default the bundled set), read strictly: a step whose
    `action` is not among its `actions` is one line naming the file and the step."""
    data = read_json(path, "labelled steps")
    validate("labelled_steps", data, path)
    steps = []
    for index, item in enumerate(data["steps"]):
        if item["action"] not in item["actions"]:
            raise HarnessError(f"{path}: invalid labelled_steps: step {index}: action {item['action'][:80]!r} is not one of its actions")
        steps.append(LabelledStep(text=item["text"], actions=tuple(item["actions"]), action=item["action"], source=item["source"]))
    return tuple(steps)
