"""Judges: protocols, backends behind one batch interface, and ensemble aggregation.

Public surface: `build_judges` makes one `Judge` per ensemble member; `Judge.judge` scores a batch of
`JudgeRequest`s and returns `Verdict`s; `aggregate` combines member scores; `load_protocol` reads a
protocol config and its template.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from harness.core.cache import CallCache
from harness.core.contracts import BatchExecutor
from harness.core.errors import HarnessError
from harness.core.values import CandidateView, Verdict
from judges.backends import EngineSpec, check_model, engine_spec
from judges.cached import CachedEngine
from judges.config import JudgeConfig, ModelConfig
from judges.ensemble import AGGREGATES, aggregate, check_aggregate
from judges.executor import InlineExecutor
from judges.judge import Judge
from judges.protocol import Protocol, check_protocol, load_protocol
from judges.types import JudgeRequest

__all__ = [
    "AGGREGATES",
    "CachedEngine",
    "CandidateView",
    "Judge",
    "JudgeRequest",
    "Protocol",
    "Verdict",
    "aggregate",
    "build_judges",
    "check_judge",
    "check_protocol",
    "load_protocol",
]


def check_judge(config: JudgeConfig) -> None:
    """Refuse an unknown aggregate or a member whose engine cannot work, before any model loads."""
    problem = check_aggregate(config.aggregate)
    if config.members and problem is not None:
        raise HarnessError(f"judge.aggregate: {problem}")
    for member in config.member_configs().values():
        check_model(member)


def build_judges(
    config: JudgeConfig,
    protocol: Protocol,
    cache: CallCache,
    prompt_log: IO[str] | None,
    seed: int = 0,
    place: Callable[[str, ModelConfig, EngineSpec], BatchExecutor] | None = None,
) -> tuple[list[Judge], dict[str, dict[str, str]]]:
    """One judge per member, and each member's provenance (model file, hash, family) for tracking.

    `place(key, member, spec)` decides where a member's batches run (a cluster's `executor`);
    by default, in this process.
    """
    check_judge(config)
    judges, provenance = [], {}
    for key, member in config.member_configs().items():
        spec = engine_spec(member)
        executor = place(key, member, spec) if place is not None else InlineExecutor(spec.factory)
        engine = CachedEngine(identity=spec.identity, executor=executor, settings=spec.settings, cache=cache, batch_size=member.batch_size)
        judges.append(Judge(name=key, engine=engine, protocol=protocol, seed=seed, prompt_log=prompt_log))
        provenance[key] = spec.provenance
    return judges, provenance
