"""Verdict options as tokens, shared by the engines that read option probabilities.

An option such as "Yes" is scored by the summed next-token probability of its single-token spellings
(`Yes`, `yes`, `YES`, ` Yes`, ...), so a judge is not penalised for its tokenizer's or its own
preference for a leading space or a case.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np


def variants(option: str) -> set[str]:
    """The spellings of `option` whose probabilities count towards it."""
    forms = {option, option.lower(), option.upper(), option.capitalize()}
    return forms | {" " + form for form in forms}


def option_logprobs_by_id(step_logprobs: Mapping[int, float], option_ids: Mapping[str, Sequence[int]]) -> dict[str, float]:
    """Each option's log-probability mass: the log-sum-exp of its token ids' log-probabilities.

    `step_logprobs` maps token id to log-probability at one position (all of the vocabulary, the
    requested ids, or a top-k). An id missing from it contributes nothing; an option with none of
    its ids present gets -inf (no mass), which the judge records as unscored rather than as a verdict.
    """
    result = {}
    for option, ids in option_ids.items():
        present = [step_logprobs[token] for token in ids if token in step_logprobs]
        result[option] = float(np.logaddexp.reduce(present)) if present else -math.inf
    return result
