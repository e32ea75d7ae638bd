"""Read which metric each number of a report is given for, failing closed.

A report states its figures as clauses: `1342 signups`, `EUR 51002.0 revenue`, `churn 2.1%`. The
text is cut into clauses at `;`, at `:`, `,` or `.` followed by white space (and their fullwidth
forms), at line breaks and at the word `and`; a clause that states exactly one number and names exactly one metric (by the words
the reports service knows for it, `metric_words`) gives that metric's figure. Every other number
(a clause with two numbers, or with no metric word or the words of two metrics) is a figure of no
metric, which the graph counts as unbacked: a value of this week given next to another metric's name
(`51002 signups`) never counts as the metric it is a value of.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tasks.agent.message_text import words
from tasks.agent.number_reader import read_numbers

_CLAUSE_BREAK = re.compile(r"[;\uff1b\u3001\u3002\n]|[:,.\uff1a\uff0c\uff0e](?=\s)|\band\b", re.IGNORECASE)


@dataclass(frozen=True)
class Figure:
    """A number the report states and the metric it is written for (None: no single metric)."""

    metric: str | None
    value: float


def read_figures(text: str, metric_words: Mapping[str, str]) -> list[Figure]:
    """Every number `text` states, in order, with the metric its clause names (`metric_words` maps a
    lower-case word, or a symbol such as `€`, to its metric)."""
    figures: list[Figure] = []
    for clause in _CLAUSE_BREAK.split(text):
        numbers = read_numbers(clause).numbers
        named = {metric_words[word] for word in words(clause) if word in metric_words}
        named |= {metric for symbol, metric in metric_words.items() if not symbol.isalpha() and symbol in clause}
        metric = next(iter(named)) if len(named) == 1 and len(numbers) == 1 else None
        figures.extend(Figure(metric, number) for number in numbers)
    return figures
