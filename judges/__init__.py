"""Judges: protocols, backends behind one batch interface, and ensemble aggregation.

Public surface: `build_judges` makes one `Judge` per ensemble member; `Judge.judge` scores a batch of
`JudgeRequest`s and returns `Verdict`s; `aggregate` combines member scores; `load_protocol` reads a
protocol config and its template; `cached_engine` wires any model (a judge, the policy model of
`pool=generate`) to the cache and to where its batches run.
"""

from __future__ import annotations

from typing import IO

from harness.core.cache import CallCache
from harness.core.errors import HarnessError
from harness.core.values import CandidateView, Verdict
from judges.backends import check_model
from judges.cached import CachedEngine, EngineStats
from judges.config import JudgeConfig
from judges.engines import Place, cached_engine
from judges.ensemble import AGGREGATES, aggregate, check_aggregate
from judges.judge import Judge
from judges.protocol import Protocol, check_protocol, load_protocol
from judges.types import JudgeRequest

__all__ = [
    "AGGREGATES",
    "CachedEngine",
    "CandidateView",
    "EngineStats",
    "Judge",
    "JudgeRequest",
    "Place",
    "Protocol",
    "Verdict",
    "aggregate",
    "build_judges",
    "cached_engine",
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
    place: Place | None = None,
) -> tuple[list[Judge], dict[str, dict[str, str]]]:
    """One judge per member, and each member's provenance (model file, hash, family) for tracking.

    `place(key, member, spec)` decides where a member's batches run (a cluster's `executor`);
    by default, in this process.
    """
    check_judge(config)
    judges, provenance = [], {}
    for key, member in config.member_configs().items():
        engine, spec = cached_engine(key, member, cache, place)
        judges.append(Judge(name=key, engine=engine, protocol=protocol, seed=seed, prompt_log=prompt_log))
        provenance[key] = spec.provenance
    return judges, provenance
