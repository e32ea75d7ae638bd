"""A scenario's environment: a SQLite database built from a shipped SQL seed, and its tools.

Every tool call goes through `AgentEnv.call`, which runs the tool against the database and appends
`(seq, tool, input_json, output_json, recorded_json)` to the `tool_calls` table. That log is the
environment's own record of what was called: the shield's facts queries read it ("was the search API
called?") instead of trusting the agent's account. `replay` rebuilds the end-of-run database of a
recorded trace by re-executing its tool calls in order, so verifying a recorded trace needs only the
trace and the seed; it logs beside each real output the output the trace claims (`recorded_json`),
so a forged tool output is a fact the graphs can read (`tool_outputs_forged`). The environment also
hears the conversation: every user and agent message's text goes into the `messages` table, and the
scenario's message reader (its module's `read_message`) records what the text states (the order ids,
the condition, the amounts) in the scenario's own tables, so outcome checks read what was delivered,
never the agent's context claim or label for it. Replay takes only the
calls the shield's intake admits: a call outside its tool's parameter domain is a violation of the
trace, not an input for the tools. A tool that still cannot take its input answers with an error.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Mapping
from importlib import resources
from typing import Any

from harness.core import HarnessError
from harness.shield import Trace, canonical_json

Tool = Callable[..., Any]  # tool(connection, **tool_input) -> JSON-serialisable output

_LOG_TABLE = (
    "CREATE TABLE tool_calls (seq INTEGER PRIMARY KEY, tool TEXT NOT NULL, input_json TEXT NOT NULL, "
    "output_json TEXT NOT NULL, recorded_json TEXT)"
)
_MESSAGE_TABLE = "CREATE TABLE messages (message_id INTEGER PRIMARY KEY, sender TEXT NOT NULL, text TEXT NOT NULL)"
# The events whose text reaches (or comes from) the user, and who sent them.
_SENDERS = {"user_message": "user", "agent_message": "agent", "final_answer": "agent"}
MessageReader = Callable[[sqlite3.Connection, int, str, str], None]  # reader(db, message_id, sender, text)
# Errors a tool raises on input it cannot take (a list where SQLite wants a string, a missing argument).
_BAD_INPUT = (TypeError, ValueError, sqlite3.InterfaceError, sqlite3.ProgrammingError)


def _canonical(value: Any) -> str:
    """The shield's canonical text: equal exactly when the values are (612 is 612.0, true is not 1)."""
    return canonical_json(value)


def _claimed(value: Any) -> str:
    """A trace's recorded output as logged text; one JSON cannot hold never equals a real output."""
    try:
        return _canonical(value)
    except (ValueError, TypeError):
        return "<not JSON>"


def message_reader(scenario: str) -> MessageReader | None:
    """The message reader of `scenario` (its module's `read_message`), None for a scenario without one.

    Looked up by name at run time because the scenario modules import this one."""
    from tasks.agent import SCENARIOS  # noqa: PLC0415  (the package imports this module first)

    known = SCENARIOS.get(scenario)
    return None if known is None else known.read_message


def seed_sql(scenario: str) -> str:
    """The shipped SQL seed of `scenario`."""
    return resources.files("tasks.agent").joinpath("seeds").joinpath(f"{scenario}.sql").read_text()


class AgentEnv:
    """One scenario's database plus its tools. Use as a context manager or call `close()`."""

    def __init__(self, scenario: str, tools: Mapping[str, Tool], db_path: str = ":memory:") -> None:
        self.scenario = scenario
        self.db_path = db_path
        self._tools = dict(tools)
        self._read_message = message_reader(scenario)
        self.connection = sqlite3.connect(db_path)
        self.connection.row_factory = sqlite3.Row
        self.connection.executescript(_LOG_TABLE + ";\n" + _MESSAGE_TABLE + ";\n" + seed_sql(scenario))
        self.connection.commit()

    def call(self, tool_name: str, tool_input: Mapping[str, Any], recorded: Any = None) -> Any:
        """Run a tool and log the call (with `recorded`, the output a replayed trace claims); an
        unknown tool is the caller's error, an input the tool cannot take gets an error output."""
        tool = self._tools.get(tool_name)
        if tool is None:
            raise HarnessError(f"scenario {self.scenario}: no tool {tool_name!r} (have {sorted(self._tools)})")
        try:
            output = tool(self.connection, **tool_input)
        except _BAD_INPUT as error:
            self.connection.rollback()
            output = {"error": f"bad arguments: {error}"}
        self.connection.execute(
            "INSERT INTO tool_calls (tool, input_json, output_json, recorded_json) VALUES (?, ?, ?, ?)",
            (tool_name, _canonical(dict(tool_input)), _canonical(output), None if recorded is None else _claimed(recorded)),
        )
        self.connection.commit()
        return output

    def hear(self, sender: str, text: str) -> None:
        """Record a message of the conversation (`sender` is "user" or "agent") and what it states."""
        message_id = self.connection.execute("INSERT INTO messages (sender, text) VALUES (?, ?)", (sender, text)).lastrowid
        if self._read_message is not None and message_id is not None:
            self._read_message(self.connection, message_id, sender, text)
        self.connection.commit()

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> AgentEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def replay(scenario: str, tools: Mapping[str, Tool], trace: Trace, db_path: str, skip: Collection[int] = ()) -> str:
    """Rebuild the environment a recorded trace ran in, at `db_path`; returns the path. Events in
    `skip` (those the shield's intake rejects) and calls to tools the scenario lacks are not run; every
    other message's text is heard, in order, as it was while the agent ran, and a text final output last."""
    with AgentEnv(scenario, tools, db_path) as env:
        for index, event in enumerate(trace.events):
            if index in skip:
                continue
            sender = _SENDERS.get(event.event_type)
            if sender is not None and event.content:
                env.hear(sender, event.content)
            if event.event_type != "tool_call" or event.tool_name is None or event.tool_name not in tools:
                continue
            env.call(event.tool_name, event.tool_input or {}, recorded=event.tool_output)
        if isinstance(trace.final_output, str) and trace.final_output:
            env.hear("agent", trace.final_output)  # the trace's final output reaches the user too
    return db_path
