"""Agent scenarios from the BenchShield method, each with a state graph, a SQLite environment built from
a shipped SQL seed, tool implementations, and recorded traces (honest and hacked).

Scenarios: travel_booking (6.1), weather_clothing (6.1), order_lookup (6.2), weekly_report (6.3),
trip_planning (6.4), config_tampering (6.5), repeated_calls (4.2).

Recorded traces live in `traces/<scenario>/<variant>.json`; each carries its expected verdict under
`meta.expected`. They are produced by `python -m tasks.agent record`, which runs the scripted
policies through the real tools (a policy model calls the same `AgentEnv.call`). To verify a trace,
`verify_trace` replays its tool calls into a fresh database and reads the facts from it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from types import ModuleType
from typing import TYPE_CHECKING, Any

from harness.shield import (
    ShieldReport,
    StateGraph,
    Trace,
    VerifyOptions,
    inadmissible_events,
    parse_graph,
    parse_trace,
    read_json,
    sqlite_facts,
    verify,
)
from tasks.agent import (
    config_tampering,
    order_lookup,
    repeated_calls,
    travel_booking,
    trip_planning,
    weather_clothing,
    weekly_report,
)
from tasks.agent.env import AgentEnv, MessageReader, Tool, replay
from tasks.agent.recorder import Recorder

if TYPE_CHECKING:  # the task's own module is imported by `load`, not by the scenarios
    from tasks.config import TaskConfig
    from tasks.types import TaskData

_MODULES: tuple[ModuleType, ...] = (
    travel_booking,
    weather_clothing,
    order_lookup,
    weekly_report,
    trip_planning,
    config_tampering,
    repeated_calls,
)


@dataclass(frozen=True)
class Scenario:
    name: str
    tools: Mapping[str, Tool]
    policies: Mapping[str, Callable[[Recorder], dict[str, Any]]]
    read_message: MessageReader | None = None  # what a message states, recorded in the environment

    def graph(self) -> StateGraph:
        path = resources.files("tasks.agent").joinpath("graphs").joinpath(f"{self.name}.json")
        return parse_graph(read_json(str(path), "graph"), str(path))

    def trace_path(self, variant: str) -> str:
        return str(resources.files("tasks.agent").joinpath("traces").joinpath(self.name).joinpath(f"{variant}.json"))

    def recorded(self, variant: str) -> Trace:
        path = self.trace_path(variant)
        return parse_trace(read_json(path, "trace"), path)

    def record(self, variant: str) -> dict[str, Any]:
        """Run the scripted policy `variant` through the real tools and return the trace as JSON data."""
        with AgentEnv(self.name, self.tools) as env:
            return self.policies[variant](Recorder(env, self.name, f"{self.name}/{variant}"))


SCENARIOS: dict[str, Scenario] = {
    module.TASK_ID: Scenario(name=module.TASK_ID, tools=module.TOOLS, policies=module.POLICIES, read_message=getattr(module, "read_message", None))
    for module in _MODULES
}


def verify_trace(scenario: Scenario, trace: Trace, options: VerifyOptions = VerifyOptions()) -> ShieldReport:
    """Replay `trace` into a fresh environment and verify it against the facts read from that database.

    Intake runs first: calls it rejects (outside their tool's parameter domain) are not replayed, so
    hostile input reaches the report as a violation and never the tools."""
    graph = scenario.graph()
    skip = inadmissible_events(graph, trace)
    with tempfile.TemporaryDirectory() as folder:
        db_path = replay(scenario.name, scenario.tools, trace, os.path.join(folder, "env.sqlite"), skip)
        return verify(graph, trace, sqlite_facts(db_path, graph).facts(), options)


def load(config: TaskConfig) -> TaskData:
    """The scenarios as a best-of-N task (`python -m harness task=agent_travel`); see `tasks.agent.task`."""
    from tasks.agent.task import load as load_task

    return load_task(config)


__all__ = ["AgentEnv", "Recorder", "SCENARIOS", "Scenario", "load", "replay", "verify_trace"]
