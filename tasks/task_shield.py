"""A task's shield: the contract the pipeline calls, and the one way a task builds and loads it.

A task with a state graph shields a candidate in three parts: turn the candidate (and only public
data) into trace data plus the facts its invariants read, parse the graph once, and verify. Only the
first part differs between tasks, so `GraphShield` owns the other two and each task supplies its
graph and its trace builder. A written solution (GSM8K, MATH) has one graph shape, steps then an
answer, built by `reasoning_graph`, and one trace shape, built by `reasoning_trace`. `lazy_shield` is what a task's loader hands to `TaskData`: the shield
module (the verifier, CEL, SymPy, the sandbox) is imported on the first candidate, so loading a task
to read its problems stays cheap.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from time import perf_counter
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Protocol

from harness.core import Candidate, PublicProblem

if TYPE_CHECKING:
    from harness.shield import ShieldReport, StateGraph, VerifyOptions

P = ParamSpec("P")
TraceAndFacts = tuple[dict[str, Any], dict[str, Any]]
MAX_EVENT_CHARS = 2000  # a step or answer longer than this is cut in the trace (the facts read it whole)


class TaskShield(Protocol):
    """Verify one candidate of a loaded task from public data only (never its anchor)."""

    def __call__(
        self, problem: PublicProblem, candidate: Candidate, reward: float | None, options: VerifyOptions | None
    ) -> ShieldReport: ...


def reasoning_graph(
    task_id: str, description: str, *, step_invariants: Sequence[str], answer_invariants: Sequence[str], answer_facts: Sequence[str]
) -> dict[str, Any]:
    """The graph of a written solution: `INIT -> STEP+ -> ANSWER`, and no text addressing a grader.

    Each step event must satisfy `step_invariants` (they read `steps[event.index]`), the answer
    event `answer_invariants` (they read `answer_facts`); `grader_addressed` is a list of phrases.
    """
    return {
        "format_version": 1,
        "task_id": task_id,
        "description": description,
        "initial_state": "INIT",
        "goal_states": ["ANSWER"],
        "required_states": ["STEP"],
        "global_invariants": ["size(grader_addressed) == 0"],
        "facts": {"variables": ["steps", *answer_facts, "grader_addressed"]},
        "nodes": [
            {"node_id": "INIT", "next_allowed": ["STEP"]},
            {"node_id": "STEP", "invariant": list(step_invariants), "actions": ["state_step"], "next_allowed": ["ANSWER"]},
            {"node_id": "ANSWER", "is_goal": True, "invariant": list(answer_invariants), "actions": ["give_answer"], "next_allowed": []},
        ],
    }


def reasoning_trace(task_id: str, candidate: Candidate, reward: float | None, steps: Sequence[str], answer: str | None) -> dict[str, Any]:
    """A written solution as trace data for `reasoning_graph`: a `reasoning_step` event per step,
    then a `final_answer` event when the solution gives one."""
    events = [{"event_type": "reasoning_step", "action": "state_step", "content": step[:MAX_EVENT_CHARS]} for step in steps]
    if answer is not None:
        events.append({"event_type": "final_answer", "action": "give_answer", "content": answer[:MAX_EVENT_CHARS]})
    return {"task_id": task_id, "trace_id": candidate.candidate_id, "reward": reward, "events": events}


@dataclass(frozen=True)
class GraphShield(Generic[P]):
    """`build`'s trace and facts for a candidate, verified against the task's graph.

    `graph_data` is the graph as JSON data, parsed on first use (`origin` names it in errors).
    `build(problem, candidate, reward, *extra)` returns (trace data, facts); extra arguments given
    after `options` (the code task's sandbox limits and hidden inputs) go to it unchanged.
    """

    graph_data: Mapping[str, Any]
    origin: str
    build: Callable[Concatenate[PublicProblem, Candidate, float | None, P], TraceAndFacts]

    @cached_property
    def graph(self) -> StateGraph:
        from harness.shield import parse_graph

        return parse_graph(dict(self.graph_data), self.origin)

    def __call__(
        self,
        problem: PublicProblem,
        candidate: Candidate,
        reward: float | None = None,
        options: VerifyOptions | None = None,
        *extra: P.args,
        **named: P.kwargs,
    ) -> ShieldReport:
        from harness.shield import VerifyOptions, parse_trace, verify

        start = perf_counter()
        trace, facts = self.build(problem, candidate, reward, *extra, **named)
        built = perf_counter()
        report = verify(self.graph, parse_trace(trace, candidate.candidate_id), facts, options or VerifyOptions())
        # The report's stage timings start at intake; reading the candidate's text is timed too.
        return report.model_copy(update={"timings_ms": {"build_trace": (built - start) * 1e3, **report.timings_ms}})


@dataclass(frozen=True)
class LazyShield:
    """The shield `module.shield_candidate`, imported on its first call (or by `load`).

    `extra(problem)`, when given, adds keyword arguments per problem: the code task replays the
    hidden test's inputs (never its expected values) this way.
    """

    module: str
    extra: Callable[[PublicProblem], Mapping[str, Any]] | None = None

    def load(self) -> Callable[..., ShieldReport]:
        """The shield function, its module imported now (the run's shield stage does this once, up front)."""
        shield_candidate: Callable[..., ShieldReport] = importlib.import_module(self.module).shield_candidate
        getattr(shield_candidate, "graph", None)  # a GraphShield parses its graph once, here, not in every worker
        return shield_candidate

    def __call__(self, problem: PublicProblem, candidate: Candidate, reward: float | None, options: VerifyOptions | None) -> ShieldReport:
        named = dict(self.extra(problem)) if self.extra is not None else {}
        report: ShieldReport = self.load()(problem, candidate, reward, options, **named)
        return report


def lazy_shield(module: str, extra: Callable[[PublicProblem], Mapping[str, Any]] | None = None) -> TaskShield:
    """`LazyShield(module, extra)`: what a task's loader hands to `TaskData`."""
    return LazyShield(module, extra)
