"""Judges: protocols, backends behind one batch interface, and ensemble aggregation.

Public surface: `build_judges` makes one `Judge` per ensemble member; `Judge.judge` scores a batch of
`JudgeRequest`s and returns `Verdict`s; `aggregate` combines member scores; `load_protocol` reads a
protocol config and its template; `cached_engine` wires any model (a judge, the policy model of
`pool=generate`) to the cache and to where its batches run. The judge layer's config
(`ModelConfig`, `JudgeConfig`, `ProtocolConfig`), the model-file and Hugging Face staging helpers the
run's tools use (`harness.prefetch`, `harness.models`), and the model-backed step labeller the
shield's command line assembles are re-exported here: other layers import `judges`, never its modules.
"""

from __future__ import annotations

from typing import IO

from harness.core import CallCache, CandidateView, HarnessError, Verdict
from judges.backends import EngineSpec, check_model, engine_spec
from judges.cached import CachedEngine, EngineStats
from judges.config import Backend, JudgeConfig, ModelConfig, ProtocolConfig, VllmConfig
from judges.engines import Place, cached_engine
from judges.ensemble import AGGREGATES, aggregate, check_aggregate
from judges.executor import InlineExecutor
from judges.hf_export import cached_export, export_hf, export_target
from judges.hf_snapshots import ALLOW_PATTERNS, is_hub_id, missing_files, staged_snapshot
from judges.judge import Judge
from judges.model_files import model_sha256, resolve_model_file
from judges.protocol import LoadedTemplate, Protocol, check_protocol, load_protocol
from judges.step_labeller import model_step_labeller
from judges.types import JudgeRequest

__all__ = [
    "AGGREGATES",
    "ALLOW_PATTERNS",
    "Backend",
    "CachedEngine",
    "CandidateView",
    "EngineSpec",
    "EngineStats",
    "InlineExecutor",
    "Judge",
    "JudgeConfig",
    "JudgeRequest",
    "LoadedTemplate",
    "ModelConfig",
    "Place",
    "Protocol",
    "ProtocolConfig",
    "Verdict",
    "VllmConfig",
    "aggregate",
    "build_judges",
    "cached_engine",
    "cached_export",
    "check_judge",
    "check_protocol",
    "engine_spec",
    "export_hf",
    "export_target",
    "is_hub_id",
    "load_protocol",
    "missing_files",
    "model_sha256",
    "resolve_model_file",
    "staged_snapshot",
    "model_step_labeller",
]


def check_judge(config: JudgeConfig) -> None:
    """Refuse an unknown aggregate or a member whose engine cannot work, before any model loads."""
    problem = check_aggregate(config.aggregate)
    if problem is not None:  # also with no members: a typo is a typo, whatever else the run does
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
