"""What a judge is asked: one public problem and what the protocol shows of one candidate.

A judge receives `JudgeRequest`s built from public views only and returns one `Verdict` per request;
the values themselves (`PublicProblem`, `CandidateView`, `Verdict`) live on the floor
(`harness.core.values`) because tasks, the shield and the pipeline share them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core import CandidateView, PublicProblem


@dataclass(frozen=True)
class JudgeRequest:
    problem: PublicProblem
    candidate: CandidateView
