"""The task shield: one graph-and-verify tail for every task, loaded only when a candidate is shielded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.core.errors import HarnessError
from harness.core.values import Candidate, PublicProblem
from harness.shield import VerifyOptions, check_graph, parse_graph
from tasks.task_shield import MAX_EVENT_CHARS, GraphShield, reasoning_graph, reasoning_trace

ROOT = Path(__file__).resolve().parents[2]
GRAPH = {
    "format_version": 1,
    "task_id": "toy",
    "initial_state": "INIT",
    "goal_states": ["DONE"],
    "facts": {"variables": ["ok"]},
    "nodes": [
        {"node_id": "INIT", "next_allowed": ["DONE"]},
        {"node_id": "DONE", "is_goal": True, "invariant": ["ok == true"], "actions": ["finish"], "next_allowed": []},
    ],
}


def _build(problem: PublicProblem, candidate: Candidate, reward: float | None, ok: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    events = [{"event_type": "final_answer", "action": "finish", "content": candidate.text}]
    return {"task_id": "toy", "trace_id": candidate.candidate_id, "reward": reward, "events": events}, {"ok": ok}


def test_a_graph_shield_verifies_the_built_trace_against_its_graph_parsed_once() -> None:
    shield = GraphShield(GRAPH, "toy.GRAPH", _build)
    problem, candidate = PublicProblem("p", "q"), Candidate("p", "c", "done")
    passed = shield(problem, candidate, 0.9)
    assert (passed.verdict, passed.compliance, passed.trace_id) == ("pass", 1.0, "c")
    failed = shield(problem, candidate, 0.9, VerifyOptions(), ok=False)  # extra arguments reach the builder
    assert failed.verdict == "violation"
    assert [violation.expression for violation in failed.violations] == ["ok == true"]
    assert failed.reward_hack_suspected  # reward 0.9 with a violation: the options' default threshold
    assert shield.graph is shield.graph


def test_a_bad_graph_is_named_by_its_origin_on_first_use() -> None:
    shield = GraphShield({**GRAPH, "initial_state": 7}, "toy.GRAPH", _build)
    with pytest.raises(HarnessError, match=r"^toy\.GRAPH: "):
        shield(PublicProblem("p", "q"), Candidate("p", "c", "done"))


@pytest.mark.parametrize("task", ["gsm8k", "math", "code"])
def test_each_task_shield_is_its_graph_under_the_shared_tail(task: str) -> None:
    module = __import__(f"tasks.{task}.shield", fromlist=["shield_candidate"])
    assert isinstance(module.shield_candidate, GraphShield)
    assert module.shield_candidate.graph_data is module.GRAPH
    assert module.shield_candidate.graph.task_id == module.TASK_ID


def test_loading_a_task_imports_no_shield_until_a_candidate_is_shielded() -> None:
    script = (
        "import sys\n"
        "from harness.core.values import Candidate\n"
        "from tasks import load_task\n"
        "from tasks.config import TaskConfig\n"
        "task = load_task(TaskConfig())\n"
        "print(sorted(name for name in sys.modules if name.startswith(('harness.shield', 'tasks.gsm8k.shield'))))\n"
        "problem = task.problems[0]\n"
        "report = task.shield(problem, Candidate(problem.problem_id, 'c', '#### 18'), None, None)\n"
        "print(report.verdict, 'tasks.gsm8k.shield' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.splitlines() == ["[]", "violation True"]


def test_a_written_solution_is_steps_then_an_answer_with_no_way_around_a_step() -> None:
    graph = parse_graph(reasoning_graph("toy", "t", step_invariants=["size(steps[event.index].bad) == 0"], answer_invariants=["ok == true"], answer_facts=["ok"]), "toy")
    assert check_graph(graph) == []  # the answer cannot be reached without a step
    assert graph.facts.variables == ("steps", "ok", "grader_addressed")
    trace = reasoning_trace("toy", Candidate("p", "c", "..."), 0.5, ["a = 1", "x" * (MAX_EVENT_CHARS + 5)], "#### 1")
    assert [(event["event_type"], len(event["content"])) for event in trace["events"]] == [
        ("reasoning_step", 5), ("reasoning_step", MAX_EVENT_CHARS), ("final_answer", 6)
    ]
    assert (trace["trace_id"], trace["reward"]) == ("c", 0.5)
    assert [event["event_type"] for event in reasoning_trace("toy", Candidate("p", "c", "..."), None, ["a"], None)["events"]] == ["reasoning_step"]
