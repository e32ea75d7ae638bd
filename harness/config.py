"""Typed configuration: the schema Hydra validates overrides against, and the values stages receive.

Each layer owns its config: the judges their model, judge and protocol config (`judges.config`), the
tasks their task config (`tasks.config`); this module holds the run-level ones and `RunConfig`,
which composes them all. `RunConfig` is registered in Hydra's ConfigStore as `base_config`, so a typo
(`limt=5`, `judge.membrs=...`) or a wrong type (`limit=abc`) fails at composition with Hydra's own
message. `__main__` converts the composed `DictConfig` into these objects once; nothing past the
entry point sees OmegaConf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

from harness.core import Choice
from judges import JudgeConfig, ModelConfig, ProtocolConfig
from tasks.config import TaskConfig


class PoolKind(Choice):
    """Where candidates come from (see `PoolConfig`)."""

    task = "task"
    file = "file"
    adversarial = "adversarial"
    generate = "generate"


class PoolBase(Choice):
    """The pool an adversarial pool plants its attacks into."""

    task = "task"
    file = "file"


class ClusterKind(Choice):
    """Where judges run (see `ClusterConfig`)."""

    inline = "inline"
    local = "local"
    ray = "ray"


GENERATOR = "generator"
"""The policy model's name beside the judges' (in the call cache, replicas.jsonl and the manifest)."""


def member_path(key: str) -> str:
    """Where the config of model `key` is set on the command line: a judge member or the policy model."""
    return "pool.generator" if key == GENERATOR else f"judge.members.{key}"


@dataclass
class PoolConfig:
    """Where candidates come from.

    `kind=task`: the task's bundled pool; `kind=file`: JSONL at `path`; `kind=adversarial`: the
    `base` pool (`task` or `file`) plus planted attack candidates, `rate` per problem on average
    (the integer part always, the fraction as a seeded draw), kinds cycling through `kinds` (empty:
    all the task knows); `kind=generate`: `samples` candidates per problem from the policy model
    `generator`, written to `path` (default: `pool.jsonl` in the run directory) so a later run can
    re-judge them with `pool=file`.
    """

    kind: PoolKind = PoolKind.task
    path: Optional[str] = None
    base: PoolBase = PoolBase.task
    rate: float = 1.0
    kinds: List[str] = field(default_factory=list)
    generator: Optional[ModelConfig] = None
    template: str = "solve_gsm8k.jinja"
    samples: int = 4
    temperature: float = 0.7
    top_p: float = 0.95
    max_tokens: int = 256


@dataclass
class ShieldConfig:
    """The shield: verify each candidate's trace and multiply its judge score by the compliance.

    `enabled=false` (shield=off) skips it. `deep_sample_rate` is the share of traces that get the
    invariant and reward stages (seeded by the run seed); `deep_always` runs them even after a path
    violation; `soft_penalties` maps violation kinds to penalties in [0, 1] (unlisted kinds are hard).
    `candidate_budget_s` is the wall time one candidate's check may take (a worker process is
    killed past it, and the candidate gets a `shield_timeout` violation).
    """

    enabled: bool = False
    deep_always: bool = False
    deep_sample_rate: float = 1.0
    reward_threshold: float = 0.8
    soft_penalties: Dict[str, float] = field(default_factory=dict)
    candidate_budget_s: float = 30.0


@dataclass
class TrackingConfig:
    """MLflow tracking. `uri` defaults to `MLFLOW_TRACKING_URI` when set, else a SQLite store in the cwd.

    A tracking server that does not answer within `request_retries` retries of `request_timeout_s`
    each puts the run offline: it finishes, keeps what MLflow missed in `mlflow_pending/`, and
    `python -m harness.sync <run_dir>` uploads it later. `traces` (on|off) logs one MLflow trace per
    candidate, linked to the run, with the judges' scores and the shield's findings as assessments.
    """

    enabled: bool = True
    uri: str = "sqlite:///mlruns.db"
    experiment: str = "harness"
    request_retries: int = 2
    request_timeout_s: int = 30
    traces: bool = True  # one MLflow trace per candidate (judge calls, shield stages, audit), docs/review.md
    sweep: Optional[str] = None  # set by the entry point in multirun mode: runs of one sweep share a parent run


@dataclass
class ReviewConfig:
    """The third layer: flagged candidates go to one MLflow review queue per run (docs/review.md).

    `enabled` is on with the shield (`review=auto`, the default: without the shield almost nothing
    is flagged); `max_items` caps the flagged items, sampled with the run seed when there are more;
    `unflagged_items` adds that many seeded random picks nothing flagged, so the shield's recall is
    measured against what it missed. Needs `tracking.traces=on` and a SQL tracking store.
    """

    enabled: bool = False
    max_items: int = 50
    unflagged_items: int = 5


@dataclass
class ClusterConfig:
    """Where judges run.

    `inline`: in this process, one batch at a time, no Ray (debugging, and tests that must not start
    Ray). `local`: a Ray cluster started and stopped by the run on this machine, with `num_cpus` CPUs
    and `num_gpus` GPUs (default: what the machine has). `ray`: join the running cluster at `address`
    (`auto`, `ray://head:10001`); the run stops only its own actors. On Ray every judge member is a
    pool of replica actors fed by the scheduler: at most `max_inflight` batches queued per replica,
    and, with `steal`, idle replicas copy work queued behind slow ones at the tail of a run.
    """

    kind: ClusterKind = ClusterKind.inline
    address: Optional[str] = None
    num_cpus: Optional[int] = None
    num_gpus: Optional[int] = None
    max_inflight: int = 2
    steal: bool = True


@dataclass
class CacheConfig:
    """The content-addressed judge-call cache. Shared across runs so re-judging costs nothing."""

    enabled: bool = True
    path: str = ".harness/cache.sqlite"


@dataclass
class RunConfig:
    """One run. `limit` caps the problems, `n` the candidates per problem (None: all in the pool)."""

    task: TaskConfig = field(default_factory=TaskConfig)
    pool: PoolConfig = field(default_factory=PoolConfig)
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    protocol: ProtocolConfig = field(default_factory=ProtocolConfig)
    shield: ShieldConfig = field(default_factory=ShieldConfig)
    tracking: TrackingConfig = field(default_factory=TrackingConfig)
    review: ReviewConfig = field(default_factory=ReviewConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    limit: int = 50
    n: Optional[int] = None
    seed: int = 0
    bootstrap_samples: int = 1000
    output_dir: str = "outputs/run"


def register_configs() -> None:
    """Register the schema with Hydra's ConfigStore (idempotent)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="base_config", node=RunConfig)
