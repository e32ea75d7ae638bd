"""Agreement between ensemble members on binary verdicts (score >= threshold means "correct").

An ensemble only helps when its members err differently; members that always agree are one judge
paid for several times. Two chance-corrected coefficients, both 1 for perfect agreement and 0 for
agreement at chance level:

- Krippendorff's alpha for nominal data (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability", sections A and C): units are candidates, coders are members, and a member's
  unscored verdict is a missing value. Units with fewer than two values cannot be paired and drop
  out; the rest contribute through the coincidence matrix, so missing values cost nothing else.
- Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters") needs every
  unit rated by all members, so it is computed on the candidates every member scored.

Both are None when fewer than two members gave verdicts, when nothing is pairable, or when the
pairable values show no variation at all (expected disagreement 0: the coefficient is 0/0).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence

from harness.analysis._records import member_names, score_of
from harness.selection import ProblemResult

THRESHOLD = 0.5


def krippendorff_alpha_nominal(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal values; `units[u]` holds each coder's value or None (missing).

    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k, with o the coincidence matrix
    (each pairable unit adds its ordered value pairs weighted by 1 / (m_u - 1)) and n_c its margins.
    """
    coincidences: defaultdict[tuple[Hashable, Hashable], float] = defaultdict(float)
    for unit in units:
        values = [value for value in unit if value is not None]
        if len(values) < 2:
            continue
        weight = 1.0 / (len(values) - 1)
        counts = Counter(values)
        for c, count_c in counts.items():
            for k, count_k in counts.items():
                pairs = count_c * (count_c - 1) if c == k else count_c * count_k
                coincidences[(c, k)] += pairs * weight
    margins: defaultdict[Hashable, float] = defaultdict(float)
    for (c, _), value in coincidences.items():
        margins[c] += value
    total = sum(margins.values())
    observed = sum(value for (c, k), value in coincidences.items() if c != k)
    expected = sum(margins[c] * margins[k] for c in margins for k in margins if c != k)
    if total == 0 or expected == 0:
        return None
    return 1.0 - (total - 1) * observed / expected


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from per-unit category counts (`counts[u][j]`: raters putting unit u in category j).

    Every unit must have the same number of raters, at least two. None without units or when
    chance agreement is 1 (all ratings in one category).
    """
    if not counts:
        return None
    raters = {sum(row) for row in counts}
    if len(raters) != 1:
        raise ValueError(f"Fleiss' kappa needs the same number of raters per unit, got {sorted(raters)}")
    m = raters.pop()
    if m < 2:
        return None
    units = len(counts)
    observed = sum(sum(c * (c - 1) for c in row) / (m * (m - 1)) for row in counts) / units
    categories = len(counts[0])
    shares = [sum(row[j] for row in counts) / (units * m) for j in range(categories)]
    chance = sum(p * p for p in shares)
    if chance == 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def agreement(results: Sequence[ProblemResult], *, threshold: float = THRESHOLD) -> dict[str, float | int | None]:
    """Member agreement over all candidates of a run, on verdicts binarised at `threshold`.

    Keys: `agreement.members` (members with verdicts), `agreement.krippendorff_alpha`,
    `agreement.pairable_units` (candidates with at least two scored verdicts), `agreement.fleiss_kappa`,
    `agreement.complete_units` (candidates every member scored).
    """
    members = member_names(results)
    units: list[list[bool | None]] = []
    if len(members) >= 2:
        for result in results:
            for record in result.candidates:
                scores = [score_of(record, member) for member in members]
                units.append([None if score is None else score >= threshold for score in scores])
    complete = [unit for unit in units if None not in unit]
    counts = [[unit.count(True), unit.count(False)] for unit in complete]
    return {
        "agreement.members": len(members),
        "agreement.krippendorff_alpha": krippendorff_alpha_nominal(units),
        "agreement.pairable_units": sum(len(unit) - unit.count(None) >= 2 for unit in units),
        "agreement.fleiss_kappa": fleiss_kappa(counts),
        "agreement.complete_units": len(complete),
    }
