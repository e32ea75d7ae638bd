"""An LLM-based step parser for free-text events, trusted only after it is measured.

Some traces carry steps as free text ("The cheapest is UA960.") with no tool call and no declared
action. This parser asks a real model which of the graph's actions a message performs: the actions
are listed with numbers, and the choice is the number with the most next-token probability mass
(one forward pass, no free generation to parse). It fills `action` only where an event has none and
no tool call or state to derive one from, so the deterministic parser then takes over.

The seed (section 7.3) is explicit that such a parser must not be trusted blindly: `trust` measures
it on a labelled set of steps and refuses it when its accuracy is below the required minimum.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.contracts import Engine
from harness.core.errors import HarnessError
from harness.core.text import neutralise
from harness.core.values import EngineRequest
from harness.shield.graph import StateGraph
from harness.shield.trace import Trace

MAX_ACTIONS = 9  # one single-digit token per action


@dataclass(frozen=True)
class LabelledStep:
    """A free-text step with the graph actions on offer and the action it really performs."""

    text: str
    actions: tuple[str, ...]
    action: str
    source: str


@dataclass(frozen=True)
class ParserAccuracy:
    model: str
    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def graph_actions(graph: StateGraph) -> tuple[str, ...]:
    return tuple(sorted({action for node in graph.nodes for action in node.actions}))


def _prompt(text: str, actions: Sequence[str]) -> str:
    listed = "\n".join(f"{number}. {action}" for number, action in enumerate(actions, start=1))
    return (
        "An AI agent wrote the following message while working on a task.\n\n"
        f"<<<MESSAGE\n{neutralise(text, 2000)}\nMESSAGE>>>\n\n"
        f"Which action does this message perform?\n{listed}\n\nAnswer with the number only."
    )


class LlmStepParser:
    """Classifies free-text steps into graph actions with one model."""

    def __init__(self, engine: Engine, model: str) -> None:
        self._engine = engine
        self.model = model

    def classify(self, steps: Sequence[tuple[str, Sequence[str]]]) -> list[str | None]:
        """The most probable action for each (text, actions) pair; None when the engine could not answer."""
        requests = []
        for text, actions in steps:
            if not 1 <= len(actions) <= MAX_ACTIONS:
                raise HarnessError(f"the LLM step parser offers 1 to {MAX_ACTIONS} actions; this graph has {len(actions)}")
            requests.append(EngineRequest(_prompt(text, actions), tuple(str(n) for n in range(1, len(actions) + 1))))
        choices: list[str | None] = []
        for (_, actions), result in zip(steps, self._engine.run(requests)):
            if result.option_logprobs is None:
                choices.append(None)
                continue
            best = max(result.option_logprobs, key=lambda option: result.option_logprobs[option])
            choices.append(actions[int(best) - 1])
        return choices

    def measure(self, labelled: Sequence[LabelledStep]) -> ParserAccuracy:
        predicted = self.classify([(step.text, step.actions) for step in labelled])
        correct = sum(choice == step.action for choice, step in zip(predicted, labelled))
        return ParserAccuracy(self.model, correct, len(labelled))


def trust(parser: LlmStepParser, labelled: Sequence[LabelledStep], min_accuracy: float) -> ParserAccuracy:
    """Measure `parser` on `labelled`; refuse it (HarnessError) when below `min_accuracy`."""
    measured = parser.measure(labelled)
    if measured.accuracy < min_accuracy:
        raise HarnessError(
            f"LLM step parser {parser.model}: accuracy {measured.accuracy:.3f} on {measured.total} labelled steps "
            f"is below the required {min_accuracy:.2f}; not trusted"
        )
    return measured


def annotate(trace: Trace, graph: StateGraph, parser: LlmStepParser) -> Trace:
    """`trace` with `action` filled in for free-text events that carry nothing to derive a state from."""
    actions = graph_actions(graph)
    pending = [
        index
        for index, event in enumerate(trace.events)
        if event.content and event.action is None and event.tool_name is None and event.state_after is None
    ]
    if not pending:
        return trace
    choices = parser.classify([(trace.events[index].content or "", actions) for index in pending])
    events = list(trace.events)
    for index, action in zip(pending, choices):
        if action is not None:
            events[index] = events[index].model_copy(update={"action": action})
    return trace.model_copy(update={"events": tuple(events)})
