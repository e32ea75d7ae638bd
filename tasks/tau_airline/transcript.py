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
from collections.abc import Sequence

from tasks.tau_airline.trajectory import Message, ToolCall

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
# About 1,200 tokens: with the policy brief and the template this fits a 2,048-token judge context.
MAX_TRANSCRIPT_CHARS = 4500


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more chars]"


def _call_line(call: ToolCall, limit: int) -> str:
    arguments = json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"))
    return f"[agent calls {call.name}] {_cut(arguments, limit)}"


def render_transcript(
    messages: Sequence[Message],
    *,
    max_message_chars: int = MAX_MESSAGE_CHARS,
    max_tool_output_chars: int = MAX_TOOL_OUTPUT_CHARS,
    max_chars: int = MAX_TRANSCRIPT_CHARS,
) -> str:
    """One line per message or tool call, in order; the system message is left out (see POLICY_BRIEF).

    Past `max_chars`, lines are dropped from the middle (a third of the budget for the opening, where
    the request is, two thirds for the end, where the writes are) and the gap says how many."""
    answered = {call.output_index: call.name for message in messages for call in message.tool_calls if call.output_index is not None}
    lines: list[str] = []
    for message in messages:
        text = message.content or ""
        if message.role == "user":
            lines.append(f"[user] {_cut(text, max_message_chars)}")
        elif message.role == "assistant":
            if text.strip():
                lines.append(f"[agent] {_cut(text, max_message_chars)}")
            lines.extend(_call_line(call, max_message_chars) for call in message.tool_calls)
        elif message.role == "tool":
            lines.append(f"[{answered.get(message.source_index, 'tool')} returned] {_cut(text, max_tool_output_chars)}")
    return _elide_middle(lines, max_chars)


def _elide_middle(lines: list[str], max_chars: int) -> str:
    if sum(len(line) + 1 for line in lines) <= max_chars:
        return "\n".join(lines)
    head, tail, used = [], [], 0
    for line in lines:
        if used + len(line) + 1 > max_chars // 3:
            break
        head.append(line)
        used += len(line) + 1
    for line in reversed(lines[len(head) :]):
        if used + len(line) + 1 > max_chars - 40:
            break
        tail.append(line)
        used += len(line) + 1
    omitted = len(lines) - len(head) - len(tail)
    return "\n".join([*head, f"[... {omitted} lines omitted ...]", *reversed(tail)])
