"""Replay a trajectory's tool calls, in order, against a fresh copy of the shipped database.

The shield never trusts what the agent says or what the recording claims the environment answered:
each call is re-executed by this package's own tools (`tools.py`) on copy-on-write views
(`db.py`), and invariants read the database `before` and `after` every call. The recorded output is
kept beside the replayed one; `matches` says whether they agree, which measures the replay's
fidelity to the environment τ-bench ran.

    result = replay(trajectory)
    for call in result.calls:
        call.tool, call.ok, call.after.reservation("HATHAT"), call.changed
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tasks.tau_airline.db import BaseDb, DbView, Key, Overlay, base_db, changed_keys
from tasks.tau_airline.tools import WRITE_TOOLS, Working, call
from tasks.tau_airline.trajectory import ToolCall, Trajectory

ERROR_PREFIX = "Error:"


@dataclass(frozen=True)
class ReplayedCall:
    """One re-executed call. `ok` is the replay's own verdict (no `Error:`), never the recording's."""

    source_index: int
    tool: str
    arguments: Mapping[str, Any]
    recorded_output: str | None
    replayed_output: str
    ok: bool
    error: str | None
    before: DbView
    after: DbView
    changed: frozenset[Key]  # entities whose value the call changed: ("reservation", "HATHAT"), ("user", id)

    @property
    def is_write(self) -> bool:
        """A tool that may write (book, cancel, the three updates, send_certificate), whatever it did."""
        return self.tool in WRITE_TOOLS

    @property
    def matches(self) -> bool | None:
        """Replayed output equals the recorded one (as JSON values when both parse); None if nothing was recorded."""
        if self.recorded_output is None:
            return None
        return same_output(self.recorded_output, self.replayed_output)

    def replayed_json(self) -> Any:
        """The replayed output parsed as JSON (the reservation a write returned), or None for text and errors."""
        return _parse(self.replayed_output)


@dataclass(frozen=True)
class Replay:
    calls: tuple[ReplayedCall, ...]
    initial: DbView
    final: DbView

    def call_at(self, source_index: int) -> tuple[ReplayedCall, ...]:
        """The calls made by the assistant message at `source_index` of `traj`."""
        return tuple(replayed for replayed in self.calls if replayed.source_index == source_index)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def same_output(recorded: str, replayed: str) -> bool:
    """Equal text, or equal JSON values (key order and spacing aside)."""
    if recorded == replayed:
        return True
    left, right = _parse(recorded), _parse(replayed)
    return left is not None and left == right


def replay_calls(calls: Iterable[ToolCall], base: BaseDb | None = None) -> Replay:
    """Re-execute `calls` in order from the shipped database (or `base`)."""
    base = base or base_db()
    overlay: Overlay = {}
    initial = view = DbView(base, overlay)
    replayed = []
    for tool_call in calls:
        working = Working(view)
        output = call(working, tool_call.name, tool_call.arguments)
        after_overlay = {**overlay, **working.writes} if working.writes else overlay
        after = DbView(base, after_overlay) if working.writes else view
        failed = output.startswith(ERROR_PREFIX)
        replayed.append(
            ReplayedCall(
                source_index=tool_call.source_index,
                tool=tool_call.name,
                arguments=tool_call.arguments,
                recorded_output=tool_call.recorded_output,
                replayed_output=output,
                ok=not failed,
                error=output[len(ERROR_PREFIX) :].strip() if failed else None,
                before=view,
                after=after,
                changed=changed_keys(base, overlay, after_overlay),
            )
        )
        overlay, view = after_overlay, after
    return Replay(calls=tuple(replayed), initial=initial, final=view)


def replay(trajectory: Trajectory, base: BaseDb | None = None) -> Replay:
    """Replay every tool call of `trajectory`; see the module docstring."""
    return replay_calls(trajectory.calls, base)
