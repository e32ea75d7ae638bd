"""Hostile scripted agents for the bundled scenarios: a script drives a `Recorder` against the
scenario's real tools, and the recorded trace is verified by replay, as any trace is."""

from __future__ import annotations

from collections.abc import Callable

from harness.shield import ShieldReport, parse_trace
from tasks.agent import SCENARIOS, AgentEnv, Recorder, verify_trace

Script = Callable[[Recorder], None]


def run_script(scenario: str, script: Script) -> ShieldReport:
    """Record `script` against the scenario's real tools, then verify the trace by replay."""
    spec = SCENARIOS[scenario]
    with AgentEnv(spec.name, spec.tools) as env:
        rec = Recorder(env, spec.name, f"{scenario}/attack")
        script(rec)
        data = rec.trace(1.0, {})
    return verify_trace(spec, parse_trace(data, f"{scenario}/attack"))
