"""The one contract every inference backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from judges.types import EngineRequest, EngineResult


class Engine(Protocol):
    """An inference engine holding one model.

    `run` answers a batch of requests in order. For each request it reports the log-probability mass
    of each verdict option as the next token (summed over the tokenizer's variants of the option), or
    None when it cannot, in which case the judge parses the generated text.
    """

    def run(self, requests: Sequence[EngineRequest]) -> list[EngineResult]: ...
