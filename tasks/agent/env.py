"""A scenario's environment: a SQLite database built from a shipped SQL seed, and its tools.

Every tool call goes through `AgentEnv.call`, which runs the tool against the database and appends
`(seq, tool, input_json, output_json)` to the `tool_calls` table. That log is the environment's own
record of what was called: the shield's facts queries read it ("was the search API called?") instead
of trusting the agent's account. `replay` rebuilds the end-of-run database of a recorded trace by
re-executing its tool calls in order, so verifying a recorded trace needs only the trace and the seed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from harness.errors import HarnessError
from harness.shield import Trace

Tool = Callable[..., Any]  # tool(connection, **tool_input) -> JSON-serialisable output

_LOG_TABLE = "CREATE TABLE tool_calls (seq INTEGER PRIMARY KEY, tool TEXT NOT NULL, input_json TEXT NOT NULL, output_json TEXT NOT NULL)"


def seed_sql(scenario: str) -> str:
    """The shipped SQL seed of `scenario`."""
    return resources.files("tasks.agent").joinpath("seeds").joinpath(f"{scenario}.sql").read_text()


class AgentEnv:
    """One scenario's database plus its tools. Use as a context manager or call `close()`."""

    def __init__(self, scenario: str, tools: Mapping[str, Tool], db_path: str = ":memory:") -> None:
        self.scenario = scenario
        self.db_path = db_path
        self._tools = dict(tools)
        self.connection = sqlite3.connect(db_path)
        self.connection.row_factory = sqlite3.Row
        self.connection.executescript(_LOG_TABLE + ";\n" + seed_sql(scenario))
        self.connection.commit()

    def call(self, tool_name: str, tool_input: Mapping[str, Any]) -> Any:
        """Run a tool and log the call; an unknown tool or bad argument names is the caller's error."""
        tool = self._tools.get(tool_name)
        if tool is None:
            raise HarnessError(f"scenario {self.scenario}: no tool {tool_name!r} (have {sorted(self._tools)})")
        try:
            output = tool(self.connection, **tool_input)
        except TypeError as error:
            output = {"error": f"bad arguments: {error}"}
        self.connection.execute(
            "INSERT INTO tool_calls (tool, input_json, output_json) VALUES (?, ?, ?)",
            (tool_name, json.dumps(dict(tool_input), sort_keys=True), json.dumps(output, sort_keys=True)),
        )
        self.connection.commit()
        return output

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> AgentEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def replay(scenario: str, tools: Mapping[str, Tool], trace: Trace, db_path: str) -> str:
    """Rebuild the environment a recorded trace ran in, at `db_path`; returns the path."""
    with AgentEnv(scenario, tools, db_path) as env:
        for event in trace.events:
            if event.event_type == "tool_call" and event.tool_name is not None:
                env.call(event.tool_name, event.tool_input or {})
    return db_path
