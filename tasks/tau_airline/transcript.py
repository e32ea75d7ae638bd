"""A τ-bench trajectory as a compact transcript: what a judge may read of a candidate.

The public view of a trial is its conversation: user and agent messages, each tool call with its
arguments, and each tool's output cut to a few hundred characters (search results and user profiles
run to kilobytes and would push the conversation out of a small judge's context). The system
message is the airline policy, which the judge gets once, in brief, as the problem statement
(`POLICY_BRIEF`); the task's hidden user instruction, gold actions and reward live outside `traj` and
are never read here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

# The policy's rules in a few lines, for the judge prompt (the full text is data/policy.md).
POLICY_BRIEF = """An airline customer-service agent helps a user book, modify or cancel reservations, following this policy:
- Before any database update (book, change flights, cabin, baggage, passengers, cancel) the agent lists the details and gets an explicit "yes".
- One tool call at a time, and never a tool call and a reply to the user in the same message.
- Payment: at most one travel certificate, one credit card and three gift cards per booking, all from the user's profile.
- Free checked bags per passenger: regular 0/1/2, silver 1/2/3, gold 2/3/3 (basic economy/economy/business); each extra bag costs $50.
- Basic economy flights cannot be changed; cabin changes are allowed. Bags can be added, not removed. The number of passengers cannot change; at most five.
- Cancel only a trip with no flown segment, and only within 24 hours of booking, if the airline cancelled a flight, in business, or with travel insurance.
- Act only for the authenticated user; transfer to a human only when the request is out of scope."""

MAX_MESSAGE_CHARS = 400
MAX_TOOL_OUTPUT_CHARS = 160


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more chars]"


def _call_line(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    name = str(function.get("name", "?"))
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return f"[agent calls {name}] {_cut(arguments, MAX_MESSAGE_CHARS)}"


def render_transcript(
    traj: Sequence[Mapping[str, Any]],
    *,
    max_message_chars: int = MAX_MESSAGE_CHARS,
    max_tool_output_chars: int = MAX_TOOL_OUTPUT_CHARS,
) -> str:
    """One line per message or tool call, in order; the system message is left out (see POLICY_BRIEF)."""
    lines: list[str] = []
    for message in traj:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "user":
            lines.append(f"[user] {_cut(text, max_message_chars)}")
        elif role == "assistant":
            if text.strip():
                lines.append(f"[agent] {_cut(text, max_message_chars)}")
            lines.extend(_call_line(call) for call in message.get("tool_calls") or ())
        elif role == "tool":
            lines.append(f"[{message.get('name', 'tool')} returned] {_cut(text, max_tool_output_chars)}")
    return "\n".join(lines)
