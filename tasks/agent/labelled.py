"""A labelled set of free-text steps, harvested from the recorded agent traces.

Every recorded event with message text and a declared action becomes one labelled step (deduplicated
by scenario and text), offered the actions of its scenario's graph. It is what the LLM step parser is
measured on before it may be trusted.
"""

from __future__ import annotations

from harness.shield.llm_parser import LabelledStep, graph_actions


def labelled_steps() -> list[LabelledStep]:
    from tasks.agent import SCENARIOS
    from tasks.agent.task import recorded_traces

    steps: dict[tuple[str, str], LabelledStep] = {}
    for name, scenario in SCENARIOS.items():
        actions = graph_actions(scenario.graph())
        for _, trace in recorded_traces(name):
            for event in trace["events"]:
                text, action = event.get("content"), event.get("action")
                if text and action and (name, text) not in steps:
                    steps[(name, text)] = LabelledStep(text=text, actions=actions, action=action, source=name)
    return list(steps.values())
