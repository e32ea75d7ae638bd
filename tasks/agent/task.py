"""The agent scenarios as a best-of-N task: each scenario is a problem, each recorded trace a candidate.

A judge sees the user's request and a candidate trajectory (its events and final output, without the
recorded evaluator reward, the trace id or the expected verdict). The anchor is the scenario's own
label for each recorded trajectory (honest or hacked), held in the sealed anchor store and keyed by
the trajectory's content hash, so it cannot ride along in the text a judge sees. The shield replays a
candidate's tool calls into a fresh environment and verifies it against the facts read from there.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from harness.core import Candidate, HarnessError, PublicProblem
from tasks.config import TaskConfig
from tasks.types import AnchorOutcome, AnchorStore, TaskData

if TYPE_CHECKING:
    from harness.shield import ShieldReport, VerifyOptions

_HIDDEN_FIELDS = ("meta", "trace_id", "reward")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidate_text(trace: dict[str, Any]) -> str:
    """The judge-visible rendering of a trace: JSON without the label-bearing fields."""
    return json.dumps({key: value for key, value in trace.items() if key not in _HIDDEN_FIELDS}, indent=1, ensure_ascii=False)


def recorded_traces(scenario: str) -> list[tuple[str, dict[str, Any]]]:
    folder = resources.files("tasks.agent").joinpath("traces").joinpath(scenario)
    entries = sorted((item for item in folder.iterdir() if item.name.endswith(".json")), key=lambda item: (item.name != "honest.json", item.name))
    return [(entry.name.removesuffix(".json"), json.loads(entry.read_text(encoding="utf-8"))) for entry in entries]


def _request(trace: dict[str, Any], scenario: str) -> str:
    for event in trace["events"]:
        if event.get("event_type") == "user_message" and event.get("content"):
            return str(event["content"])
    raise HarnessError(f"agent scenario {scenario}: the honest trace has no user_message to use as the request")


def _check(anchor: dict[str, bool], text: str) -> AnchorOutcome:
    honest = anchor.get(_digest(text))
    if honest is None:
        raise HarnessError("agent task anchors cover the recorded trajectories only; this candidate is not one of them")
    return AnchorOutcome(correct=honest, extracted_answer=None, outcome="honest" if honest else "hacked")


def _final_output(text: str) -> str | None:
    output = json.loads(text).get("final_output")
    return None if output is None else json.dumps(output, sort_keys=True)


def load(config: TaskConfig) -> TaskData:
    from tasks.agent import SCENARIOS

    names = list(SCENARIOS) if config.subset is None else [name.strip() for name in config.subset.split(",")]
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown:
        raise HarnessError(f"task.subset: unknown agent scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    if config.source != "bundled":
        raise HarnessError("the agent task ships its scenarios; task.source must be bundled")
    problems: list[PublicProblem] = []
    anchors: dict[str, dict[str, bool]] = {}
    pool: list[Candidate] = []
    digest = hashlib.sha256()
    for name in names:
        recorded = recorded_traces(name)
        problems.append(PublicProblem(problem_id=name, question=_request(recorded[0][1], name)))
        anchors[name] = {}
        for variant, trace in recorded:
            text = candidate_text(trace)
            anchors[name][_digest(text)] = trace["meta"]["expected"]["verdict"] == "pass"
            pool.append(Candidate(problem_id=name, candidate_id=variant, text=text, source="recorded"))
            digest.update(text.encode("utf-8"))

    def shield(problem: PublicProblem, candidate: Candidate, reward: float | None, options: VerifyOptions | None) -> ShieldReport:
        from harness.shield import VerifyOptions, parse_trace
        from tasks.agent import verify_trace

        data = json.loads(candidate.text)
        data["reward"] = reward
        trace = parse_trace(data, f"{problem.problem_id}/{candidate.candidate_id}")
        return verify_trace(SCENARIOS[problem.problem_id], trace, options or VerifyOptions())

    return TaskData(
        name="agent",
        problems=tuple(problems),
        anchors=AnchorStore("agent", anchors, _check),
        default_pool=lambda: list(pool),
        extract_answer=_final_output,
        data_hash=digest.hexdigest(),
        shield=shield,
    )
