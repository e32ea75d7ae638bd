"""τ-bench results files, read into frozen values with one-line errors.

A results file (τ-bench's `run.py` output, Yao et al. 2024) is a JSON list of trajectories
`{"task_id", "trial", "reward", "info", "traj"}`; `traj` is the OpenAI-format chat: system, user,
assistant (optionally with `tool_calls`), and `tool` messages answering a call by `tool_call_id`.
Unknown extra keys are ignored. Anything malformed is refused with one line naming the trajectory's
index in the file and the field (`trajectory 3: traj[6].tool_calls[0].function.arguments: ...`).

Every message and call keeps `source_index`, its index in `traj`, so whatever the shield reports
can be found in the transcript.
"""

from __future__ import annotations

import gzip
import io
import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.core import HarnessError
from harness.shield import MAX_BYTES, MAX_EVENTS, decode, loads, read_bytes
from tasks.tau_airline.db import read_json_gz

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One tool call: where it was made, what was asked, and what the recorded environment answered."""

    source_index: int  # the assistant message that made the call
    call_id: str
    name: str
    arguments: Mapping[str, Any]
    recorded_output: str | None  # None when no tool message answers the call
    output_index: int | None  # the tool message holding the recorded output


@dataclass(frozen=True)
class Message:
    source_index: int
    role: Role
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Trajectory:
    """One recorded run of the agent on one task. `info` is τ-bench's task record (instruction, gold actions)."""

    index: int  # position in the results file
    task_id: int | str
    trial: int
    reward: float | None
    messages: tuple[Message, ...]
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """`task007-trial2`: names the trace file and the candidate."""
        task = f"{self.task_id:03d}" if isinstance(self.task_id, int) else re.sub(r"[^A-Za-z0-9_.-]", "_", self.task_id)
        return f"task{task}-trial{self.trial}"

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(call for message in self.messages for call in message.tool_calls)

    @property
    def user_id(self) -> str | None:
        """The task's user (`info.task.user_id`), when the results file records it."""
        task = self.info.get("task")
        user_id = task.get("user_id") if isinstance(task, Mapping) else None
        return user_id if isinstance(user_id, str) else None


class _Refusal(Exception):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")


def _need(value: Any, kinds: type | tuple[type, ...], where: str, what: str) -> Any:
    allowed = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        raise _Refusal(where, f"must be {what}, got {type(value).__name__}")
    return value


def _arguments(text: Any, where: str) -> Mapping[str, Any]:
    _need(text, (str, dict), where, "a JSON object or its text")
    try:
        value = loads(text, where, "the text") if isinstance(text, str) else text
    except HarnessError as error:  # strict like every JSON the shield reads: no NaN, no Infinity
        raise _Refusal(where, str(error).removeprefix(f"{where}: the text ")) from None
    return _need(value, dict, where, "a JSON object")


def _tool_calls(raw: Any, index: int, traj: Sequence[Any], pending: dict[str, deque[int]]) -> tuple[ToolCall, ...]:
    calls = []
    for number, entry in enumerate(_need(raw, list, f"traj[{index}].tool_calls", "a list")):
        where = f"traj[{index}].tool_calls[{number}]"
        _need(entry, dict, where, "an object")
        call_id = _need(entry.get("id"), str, f"{where}.id", "a string")
        function = _need(entry.get("function"), dict, f"{where}.function", "an object")
        name = _need(function.get("name"), str, f"{where}.function.name", "a string")
        arguments = _arguments(function.get("arguments"), f"{where}.function.arguments")
        output_index = _answer(pending, index, call_id)
        calls.append(
            ToolCall(
                source_index=index,
                call_id=call_id,
                name=name,
                arguments=arguments,
                recorded_output=None if output_index is None else traj[output_index]["content"],
                output_index=output_index,
            )
        )
    return tuple(calls)


def _answer(pending: dict[str, deque[int]], index: int, call_id: str) -> int | None:
    """The first not yet used tool message after `index` answering `call_id`.

    Searched forward from the call, not by id alone: recorded agents reuse call ids within one
    trajectory (73 repeats in the shipped 200), so the id's first answer may belong to an earlier call.
    `pending` holds each id's answers in order; calls come in order, so an answer before the call
    can answer no later call either and is dropped.
    """
    queue = pending.get(call_id)
    while queue and queue[0] < index:
        queue.popleft()
    return queue.popleft() if queue else None


def _messages(traj: Sequence[Any]) -> tuple[Message, ...]:
    for index, message in enumerate(traj):
        _need(message, dict, f"traj[{index}]", "an object")
        role = message.get("role")
        if role not in ROLES:
            raise _Refusal(f"traj[{index}].role", f"must be one of {', '.join(ROLES)}, got {role!r}")
        content = message.get("content")
        if content is not None or role == "tool":
            _need(content, str, f"traj[{index}].content", "a string" if role == "tool" else "a string or null")
        if role == "tool":
            _need(message.get("tool_call_id"), str, f"traj[{index}].tool_call_id", "a string")
    pending: dict[str, deque[int]] = {}
    for index, message in enumerate(traj):
        if message["role"] == "tool":
            pending.setdefault(message["tool_call_id"], deque()).append(index)
    messages = []
    for index, message in enumerate(traj):
        raw_calls = message.get("tool_calls")
        role = message["role"]
        calls = () if raw_calls is None or role != "assistant" else _tool_calls(raw_calls, index, traj, pending)
        messages.append(Message(source_index=index, role=role, content=message.get("content"), tool_calls=calls))
    return tuple(messages)


# A trajectory's trace has about one event per message (a tool's reply joins its call), so one of
# more than twice the shield's event cap cannot be verified: refused before it is converted.
MAX_MESSAGES = 2 * MAX_EVENTS


def parse_trajectory(raw: Any, index: int, source: str | None = None) -> Trajectory:
    """One trajectory of a results file; raises `HarnessError` naming the file (`source`), `index` and the bad field."""
    try:
        _need(raw, dict, "trajectory", "an object")
        task_id = _need(raw.get("task_id"), (int, str), "task_id", "an integer or a string")
        trial = _need(raw.get("trial", 0), int, "trial", "an integer")
        reward = raw.get("reward")
        if reward is not None:
            reward = float(_need(reward, (int, float), "reward", "a number or null"))
            if not 0.0 <= reward <= 1.0:
                raise _Refusal("reward", f"must be in [0, 1], got {reward}")
        info = raw.get("info") or {}
        _need(info, dict, "info", "an object")
        traj = _need(raw.get("traj"), list, "traj", "a list of messages")
        if len(traj) > MAX_MESSAGES:
            raise _Refusal("traj", f"{len(traj):,} messages, more than the {MAX_MESSAGES:,} a trajectory may hold (its trace would pass the shield's {MAX_EVENTS:,} events)")
        messages = _messages(traj)
    except _Refusal as refusal:
        where = f"{source}: " if source else ""
        raise HarnessError(f"{where}trajectory {index}: {refusal}") from None
    return Trajectory(index=index, task_id=task_id, trial=trial, reward=reward, messages=messages, info=info)


def parse_results(raw: Any, source: str) -> tuple[Trajectory, ...]:
    """Every trajectory of a results file; duplicate (task, trial) pairs are refused (their traces would collide)."""
    if not isinstance(raw, list):
        raise HarnessError(f"{source}: a τ-bench results file is a JSON list of trajectories, got {type(raw).__name__}")
    trajectories: list[Trajectory] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(raw):
        trajectory = parse_trajectory(entry, index, source)
        if trajectory.name in seen:
            raise HarnessError(f"{source}: trajectory {index}: trial: task {trajectory.task_id!r} trial {trajectory.trial} repeats trajectory {seen[trajectory.name]}")
        seen[trajectory.name] = index
        trajectories.append(trajectory)
    return tuple(trajectories)


# A results file is user input: read like every file the shield reads (regular files only, capped at
# the shield's 64 MiB, strict JSON without NaN or Infinity): room for 16 times the 200 trials shipped
# (4 MB), imported in seconds (bench/shield_input_size.py). A larger run is several files.
RESULTS_LIMIT = MAX_BYTES
RESULTS_KIND = "the τ-bench results file"


def load_results(path: str) -> tuple[Trajectory, ...]:
    """Read a τ-bench results file (`.json`, or `.json.gz`)."""
    where = str(path)
    data = read_bytes(where, RESULTS_KIND, RESULTS_LIMIT)
    if where.endswith(".gz"):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
                data = unpacked.read(RESULTS_LIMIT + 1)
        except (OSError, EOFError) as error:
            raise HarnessError(f"{where}: cannot read {RESULTS_KIND}: not gzip data ({error})") from None
        if len(data) > RESULTS_LIMIT:
            raise HarnessError(f"{where}: {RESULTS_KIND} unpack to more than {RESULTS_LIMIT} bytes")
    return parse_results(loads(decode(data, where, RESULTS_KIND), where, RESULTS_KIND), where)


def shipped_trajectories() -> tuple[Trajectory, ...]:
    """The 200 GPT-4o trajectories shipped with the package (50 test tasks x 4 trials)."""
    return parse_results(read_json_gz("trajectories-gpt-4o.json.gz"), "trajectories-gpt-4o.json.gz")
