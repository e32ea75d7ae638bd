"""τ-bench airline: 200 real recorded GPT-4o agent trajectories, verified against the airline policy.

Data: τ-bench (Yao et al. 2024, "τ-bench: A Benchmark for Tool-Agent-User Interaction in Real-World
Domains", arXiv 2406.12045; sierra-research/tau-bench, MIT licence, see `data/LICENSE` and
`data/README.md`): the airline database, the 14 tools' schemas, the policy, and 50 test tasks x 4
trials with τ-bench's own reward.

- `trajectory`: results files -> frozen `Trajectory` values (one-line errors for malformed input).
- `db`: the shared base database and copy-on-write `DbView`s.
- `tools`: the project's own implementation of the 14 tools' effects.
- `replay`: re-execute a trajectory's calls; `ReplayedCall.before/after` for invariants.
- `importer`: a trajectory -> a shield trace (events keep `source_index`).
- `facts`, `policy`: the airline invariants' facts from the replayed database; verify a trajectory.
- `transcript`, `task`: the compact transcript judges read; `task=tau_airline` (`load`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tasks.tau_airline.db import CLOCK, DbView, base_db
from tasks.tau_airline.replay import Replay, ReplayedCall, replay, replay_calls
from tasks.tau_airline.trajectory import Message, ToolCall, Trajectory, load_results, parse_results, shipped_trajectories

if TYPE_CHECKING:  # the task's own module is imported by `load`, not by the replay
    from tasks.config import TaskConfig
    from tasks.types import TaskData

__all__ = [
    "CLOCK",
    "DbView",
    "Message",
    "Replay",
    "ReplayedCall",
    "ToolCall",
    "Trajectory",
    "base_db",
    "load_results",
    "parse_results",
    "replay",
    "replay_calls",
    "shipped_trajectories",
    "load",
]


def load(config: TaskConfig) -> TaskData:
    """`python -m harness task=tau_airline`: the trials as best-of-N candidates; see `tasks.tau_airline.task`."""
    from tasks.tau_airline.task import load as load_task

    return load_task(config)
