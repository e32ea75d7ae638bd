"""Record a trace while a (scripted or model) policy acts in an `AgentEnv`.

The recorder is the harness side of the loop: tool outputs in the trace are what the tool actually
returned, and states are left for the shield's deterministic parser to derive (from `action_map`),
unless the policy itself claims them. `context` is whatever the policy reports about its state.
"""

from __future__ import annotations

from typing import Any

from tasks.agent.env import AgentEnv


class Recorder:
    def __init__(self, env: AgentEnv, task_id: str, trace_id: str) -> None:
        self.env = env
        self.task_id = task_id
        self.trace_id = trace_id
        self.events: list[dict[str, Any]] = []

    def _stamp(self) -> dict[str, Any]:
        step = len(self.events)
        return {"timestamp": f"2024-06-0{1 + step // 60}T10:{step % 60:02d}:00Z", "agent_step": step}

    def user(self, content: str, action: str | None = None) -> None:
        event: dict[str, Any] = {"event_type": "user_message", **self._stamp(), "content": content}
        if action:
            event["action"] = action
        self.env.hear("user", content)
        self.events.append(event)

    def tool(self, name: str, tool_input: dict[str, Any], context: dict[str, Any] | None = None) -> Any:
        output = self.env.call(name, tool_input)
        event = {"event_type": "tool_call", **self._stamp(), "tool_name": name, "tool_input": tool_input, "tool_output": output}
        if context:
            event["context"] = context
        self.events.append(event)
        return output

    def say(self, action: str, content: str, context: dict[str, Any] | None = None, **states: str) -> None:
        """An agent message performing graph `action`; `states` may claim state_before/state_after."""
        event: dict[str, Any] = {"event_type": "agent_message", **self._stamp(), "action": action, "content": content}
        event.update(states)
        if context:
            event["context"] = context
        self.env.hear("agent", content)
        self.events.append(event)

    def trace(self, reward: float, expected: dict[str, Any], final_output: str | None = None) -> dict[str, Any]:
        """The recorded trace; a final output is heard by the environment as the agent's last message."""
        if final_output:
            self.env.hear("agent", final_output)
        return {
            "format_version": 1,
            "trace_id": self.trace_id,
            "task_id": self.task_id,
            "reward": reward,
            "final_output": final_output,
            "meta": {"expected": expected},
            "events": self.events,
        }
