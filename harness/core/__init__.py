"""The floor every layer stands on: shared values, contracts, the error type, the call cache.

It imports nothing else from the project, so the judge layer, the task layer, the shield and the
engine can all depend on it without depending on each other (the import contract in pyproject.toml
enforces this). Importing it is cheap: no model runtime, no Ray, no MLflow.
"""

from harness.core.cache import CallCache, cache_key
from harness.core.choice import Choice
from harness.core.contracts import BatchExecutor, Engine, OnBatch
from harness.core.digest import file_sha256
from harness.core.errors import HarnessError
from harness.core.stopping import PREEMPTED_EXIT, Stopped, check
from harness.core.text import neutralise
from harness.core.values import (
    Candidate,
    CandidateView,
    EngineRequest,
    EngineResult,
    PublicProblem,
    Verdict,
    VerdictStatus,
)

__all__ = [
    "BatchExecutor",
    "CallCache",
    "Candidate",
    "CandidateView",
    "Choice",
    "Engine",
    "EngineRequest",
    "EngineResult",
    "HarnessError",
    "OnBatch",
    "PREEMPTED_EXIT",
    "PublicProblem",
    "Stopped",
    "Verdict",
    "VerdictStatus",
    "cache_key",
    "check",
    "file_sha256",
    "neutralise",
]
