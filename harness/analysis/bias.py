"""Self-preference: does a judge pick candidates written by its own model family more often?

Judges are known to favour their own generations (Panickssery et al. 2024, "LLM Evaluators Recognize
and Favor Their Own Generations"). When the pool records which model produced each candidate
(`Candidate.source`), we compare, per judge family, how often a same-family candidate is picked
when available with how often any other candidate is.

A source belongs to a family when the family name occurs in the lower-cased source string
(`Qwen2.5-7B-Instruct` -> `qwen`); the longest matching family wins, and a source that matches none
(or has no source) is `other`. Each member judge picks its own top candidate from its own scores,
ties drawn with `problem_rng(seed, problem_id)` as in the run's selection; candidates it left
unscored cannot be picked and do not count as available.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from harness.analysis._records import score_of
from harness.selection import ProblemResult, pick_best, problem_rng

OTHER = "other"


def family_of(source: str | None, families: Iterable[str]) -> str:
    """The family whose name occurs in the lower-cased `source` (longest match first), else `other`."""
    if source is None:
        return OTHER
    text = source.lower()
    for family in sorted({family.lower() for family in families}, key=lambda name: (-len(name), name)):
        if family and family in text:
            return family
    return OTHER


def self_preference(
    results: Sequence[ProblemResult], judge_families: Mapping[str, str], *, seed: int
) -> dict[str, float | int | None]:
    """Per judge family, the selection rate of same-family candidates and of all others.

    `judge_families` maps member judge names to their family (`{"llama_tiny": "llama"}`); members of
    one family pool their picks. Selection rate = picks in the group / scored candidates of the group,
    over the problems where the judge picked something. Keys, per family `<f>`:
    `self_preference.<f>.same_rate`, `.other_rate` (None when the group had no candidates),
    `.same_available`, `.other_available` (candidate counts behind each rate).
    """
    families = {family.lower() for family in judge_families.values()}
    tallies = {family: {"same_picked": 0, "same_available": 0, "other_picked": 0, "other_available": 0} for family in families}
    for judge, judge_family in judge_families.items():
        tally = tallies[judge_family.lower()]
        for result in results:
            scores = [score_of(record, judge) for record in result.candidates]
            pick = pick_best(scores, problem_rng(seed, result.problem_id))
            if pick is None:
                continue
            for index, (record, score) in enumerate(zip(result.candidates, scores)):
                if score is None:
                    continue
                group = "same" if family_of(record.candidate.source, families) == judge_family.lower() else "other"
                tally[f"{group}_available"] += 1
                tally[f"{group}_picked"] += index == pick
    metrics: dict[str, float | int | None] = {}
    for family, tally in sorted(tallies.items()):
        for group in ("same", "other"):
            available = tally[f"{group}_available"]
            metrics[f"self_preference.{family}.{group}_rate"] = tally[f"{group}_picked"] / available if available else None
            metrics[f"self_preference.{family}.{group}_available"] = available
    return metrics
