"""The labelled set of free-text steps, harvested from the recorded agent traces.

Every recorded event with message text and a declared action becomes one labelled step (deduplicated
by scenario and text), offered the actions of its scenario's graph. The shield measures a step
labeller on this set before trusting it; it ships the set as data (`harness/shield/data/
labelled_steps.json`), written here by `python -m tasks.agent labelled`, so the shield never imports
the tasks. A test keeps the shipped file equal to what the recorded traces give.
"""

from __future__ import annotations

from typing import Any

from harness.shield import LabelledStep, graph_actions
from tasks.agent import SCENARIOS
from tasks.agent.task import recorded_traces


def harvest_labelled_steps() -> list[LabelledStep]:
    """One labelled step per distinct (scenario, message text) with a declared action, in scenario order."""
    steps: dict[tuple[str, str], LabelledStep] = {}
    for name, scenario in SCENARIOS.items():
        actions = graph_actions(scenario.graph())
        for _, trace in recorded_traces(name):
            for event in trace["events"]:
                text, action = event.get("content"), event.get("action")
                if text and action and (name, text) not in steps:
                    steps[(name, text)] = LabelledStep(text=text, actions=actions, action=action, source=name)
    return list(steps.values())


def labelled_steps_document(steps: list[LabelledStep]) -> dict[str, Any]:
    """`steps` as the shield's labelled_steps file (format_version 1)."""
    return {
        "format_version": 1,
        "generated_by": "python -m tasks.agent labelled",
        "steps": [{"source": step.source, "text": step.text, "actions": list(step.actions), "action": step.action} for step in steps],
    }
