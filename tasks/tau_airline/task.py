"""τ-bench airline as a best-of-N task: each test task is a problem, each of its trials a candidate.

`task=tau_airline` audits the 200 shipped GPT-4o trajectories (50 tasks x 4 trials);
`task.path=RESULTS.json` audits a user's own τ-bench airline results file, with any number of trials
per task. A candidate's id names task and trial (`task007-trial2`) and its public text is the compact
transcript (`transcript.render_transcript`); a problem's statement is the policy in brief. The task's
hidden user instruction, its gold actions and the reward are never in either.

The anchor is τ-bench's own reward (1 = the final database equals the gold actions' one) plus the
gold actions: `correct` is reward 1, and `outcome` says which policy kinds the gold actions
themselves break (`reward=1 gold_breaks=baggage_fee`), so a reward-1 trial flagged by the shield can
be told apart when the reward itself demanded the violation. The shield replays each trial's calls
into a fresh copy-on-write database and verifies its trace against the airline graph; it runs after
judging, on the auditor's side, and reads the trial from the results file by its candidate id (a
candidate whose text is not its trial's transcript is refused), with the recorded reward in the
trace so that stage 4 flags reward 1 with violations (`reward_hack_suspected`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from harness.core import Candidate, HarnessError, PublicProblem
from harness.shield import ShieldReport, VerifyOptions
from tasks.config import TaskConfig
from tasks.tau_airline.db import data_file
from tasks.tau_airline.importer import to_trace
from tasks.tau_airline.policy import gold_violations, verify_trajectory
from tasks.tau_airline.trajectory import Trajectory, load_results, shipped_trajectories
from tasks.tau_airline.transcript import POLICY_BRIEF, render_transcript
from tasks.types import AnchorOutcome, AnchorStore, TaskData

SHIPPED = "trajectories-gpt-4o.json.gz"


def problem_id(trajectory: Trajectory) -> str:
    """`task007`: the trial's name without its trial part."""
    return trajectory.name.rsplit("-trial", 1)[0]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _outcome(reward: float | None, gold: tuple[str, ...]) -> str:
    text = "reward=none" if reward is None else f"reward={reward:g}"
    return f"{text} gold_breaks={','.join(gold)}" if gold else text


def _check(anchor: Mapping[str, Any], text: str) -> AnchorOutcome:
    trial = anchor["trials"].get(_digest(text))
    if trial is None:
        raise HarnessError("tau_airline anchors cover the trials of the results file only; this candidate is not one of them")
    reward = trial["reward"]
    return AnchorOutcome(
        correct=reward is not None and reward >= 1.0,
        extracted_answer=None,
        outcome=_outcome(reward, anchor["gold_breaks"]),
        details={"reward": reward, "gold_breaks": anchor["gold_breaks"]},
    )


def _trajectories(config: TaskConfig) -> tuple[tuple[Trajectory, ...], bytes]:
    if config.source != "bundled":
        raise HarnessError("task=tau_airline reads the shipped trajectories or task.path=RESULTS.json; task.source must be bundled")
    if config.subset:
        raise HarnessError("task.subset: task=tau_airline has no subsets; pass task.path=RESULTS.json holding the trajectories you want")
    if config.path:
        trajectories = load_results(config.path)
        with open(config.path, "rb") as handle:
            return trajectories, handle.read()
    return shipped_trajectories(), data_file(SHIPPED).read_bytes()


def load(config: TaskConfig) -> TaskData:
    trajectories, raw = _trajectories(config)
    if not trajectories:
        raise HarnessError(f"{config.path or SHIPPED}: holds no trajectories")
    by_problem: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        by_problem.setdefault(problem_id(trajectory), []).append(trajectory)
    problems: list[PublicProblem] = []
    anchors: dict[str, dict[str, Any]] = {}
    pool: list[Candidate] = []
    trials: dict[tuple[str, str], tuple[Trajectory, str]] = {}
    for pid, group in by_problem.items():
        problems.append(PublicProblem(problem_id=pid, question=POLICY_BRIEF))
        anchors[pid] = {"trials": {}, "gold_breaks": gold_violations(group[0])}
        for trajectory in sorted(group, key=lambda item: item.trial):
            text = render_transcript(trajectory.messages)
            anchors[pid]["trials"][_digest(text)] = {"reward": trajectory.reward}
            trials[(pid, trajectory.name)] = (trajectory, text)
            pool.append(Candidate(problem_id=pid, candidate_id=trajectory.name, text=text, source="tau-bench"))

    def shield(problem: PublicProblem, candidate: Candidate, reward: float | None, options: VerifyOptions | None) -> ShieldReport:
        found = trials.get((problem.problem_id, candidate.candidate_id))
        if found is None or found[1] != candidate.text:
            raise HarnessError(f"tau_airline: candidate {candidate.candidate_id!r} is not a trial of the results file; the shield replays trials only")
        trajectory = found[0]
        return verify_trajectory(trajectory, to_trace(trajectory), options)

    return TaskData(
        name="tau_airline",
        problems=tuple(problems),
        anchors=AnchorStore("tau_airline", anchors, _check),
        default_pool=lambda: list(pool),
        extract_answer=lambda text: None,
        data_hash=hashlib.sha256(raw).hexdigest(),
        shield=shield,
    )
