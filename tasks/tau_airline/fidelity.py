"""Replay fidelity: how often the replayed output equals what the recorded environment answered.

A mismatch is either explained by a known difference between the shipped data and the data the
recording ran against, or reported as unexplained with both outputs, so a drift in the tools'
re-implementation cannot hide in an average.

Known difference: the shipped `users.json` names a user's state `address.state`; every recorded
`get_user_details` answer says `address.province`, so the recording ran against a revision of the
data with the other field name.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tasks.tau_airline.replay import ReplayedCall, replay
from tasks.tau_airline.trajectory import Trajectory

ADDRESS_RENAME = "address_state_renamed"


@dataclass(frozen=True)
class Mismatch:
    trajectory: str
    source_index: int
    tool: str
    cause: str  # ADDRESS_RENAME, or "unexplained"
    recorded: str
    replayed: str


@dataclass(frozen=True)
class Fidelity:
    calls: Counter[str]  # tool -> calls with a recorded output
    byte_equal: Counter[str]  # tool -> replayed text identical to the recorded text
    equal: Counter[str]  # tool -> equal as JSON values (or identical text)
    mismatches: tuple[Mismatch, ...]

    def share(self, tool: str | None = None) -> float:
        """Share of calls (of `tool`, or all) whose replayed output equals the recorded one."""
        calls = self.calls[tool] if tool else sum(self.calls.values())
        equal = self.equal[tool] if tool else sum(self.equal.values())
        return equal / calls if calls else 1.0

    def explained(self, tool: str | None = None) -> int:
        return sum(1 for m in self.mismatches if m.cause != "unexplained" and (tool is None or m.tool == tool))


def _renamed_address(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("address"), dict) and "state" in value["address"]:
        address = {("province" if key == "state" else key): item for key, item in value["address"].items()}
        return {**value, "address": address}
    return value


def explain(call: ReplayedCall) -> str:
    """The known cause of a mismatch, or "unexplained"."""
    try:
        recorded, replayed = json.loads(call.recorded_output or ""), json.loads(call.replayed_output)
    except json.JSONDecodeError:
        return "unexplained"
    if call.tool == "get_user_details" and _renamed_address(replayed) == recorded:
        return ADDRESS_RENAME
    return "unexplained"


def measure(trajectories: Iterable[Trajectory]) -> Fidelity:
    calls, byte_equal, equal, mismatches = Counter[str](), Counter[str](), Counter[str](), []
    for trajectory in trajectories:
        for call in replay(trajectory).calls:
            if call.recorded_output is None:
                continue
            calls[call.tool] += 1
            byte_equal[call.tool] += call.recorded_output == call.replayed_output
            if call.matches:
                equal[call.tool] += 1
            else:
                mismatches.append(
                    Mismatch(trajectory.name, call.source_index, call.tool, explain(call), call.recorded_output, call.replayed_output)
                )
    return Fidelity(calls=calls, byte_equal=byte_equal, equal=equal, mismatches=tuple(mismatches))
