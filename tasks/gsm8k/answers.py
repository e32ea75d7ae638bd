"""Reading and comparing GSM8K final answers: the one committed value a reader sees.

Rules, in order (each form is a row of the table in docs/tasks.md, "GSM8K answer forms", and a test):

1. The text is normalised and its numbers are read by `tasks.gsm8k.numbers` (the grammar the
   shield reads steps with): Unicode minus and dashes, fullwidth digits, `70,000` and `70 000`,
   `70 thousand`, `70k`.
2. The final statement is the text after the last answer marker, to the end of its paragraph:
   `####` (the dataset's gold format and lm-eval's strict match), `The answer is` / `The final
   answer is` / `Final answer:` (any case; lm-eval's gsm8k-cot and Minerva-style endings), or at a
   line start `A:` (the GSM8K authors' model solutions) and `Answer:`; `\\boxed{...}` is a marker
   too. Markdown emphasis (`**`, `__`, backticks) is dropped. The answer is the statement's first
   number, with a sign (`-`, any minus dash), a currency sign (`$`, `€`, `£`), a fraction `3/4`, a
   trailing `%` or unit word dropped. Without a marker, the answer is the last number of the last
   line that has one (lm-eval's flexible extract reads the last number of the text).
3. Hedged, so wrong: a statement that offers a second, different value (`18 (or 20)`, `18 or 20`,
   `18-20`, `18 to 20`, `between 18 and 20`, `18 ± 2`, `either 18 or 20`, the list `1,5`, a
   relation `18 = 20` between two plain numbers; working in parentheses, `540 (3 * 3 * 60)`, is
   no second value), or two answer markers
   that commit to different values (`The answer is 18.` ... `#### 20`). `read_answer` reports the
   values offered; `extract_answer` gives None for a hedge, so it never votes.
4. Numbers are compared exactly as rationals (`fractions.Fraction`), never with float `==`:
   `18`, `18.0`, `$18.00` and `36/2` are all equal.

Only the last ANSWER_TEXT_CHARS characters are read, and every scan is linear in them.

`extract_answer` returns the canonical string of that rational (`"18"`, `"0.5"`, `"1/3"`) so that
majority votes and reports group equal answers together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from tasks.gsm8k.numbers import NUMBER_PATTERN, SCALES, normalise, value

_MARKER = re.compile(
    r"####|\\boxed\s*\{|\bthe\s+(?:final\s+)?answer\s+is\b:?|\bfinal\s+answer\s*:|^[ \t>*_#]*(?:A|answer)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_EMPHASIS = re.compile(r"\*\*|__|`")
# One number as a reader states it: sign, currency, the number, a scale word or `k`, a fraction.
_STATED = re.compile(
    rf"(?P<sign>(?<![\w)])-)?\s?[$€£]?\s?(?P<num>(?<![\w.])(?:{NUMBER_PATTERN}))"
    rf"(?:\s*(?P<scale>thousand|million|billion)\b|(?P<k>k)\b)?"
    rf"(?:\s*/\s*(?P<den>(?:{NUMBER_PATTERN}))(?!\w|\.\d))?",
    re.IGNORECASE,
)
# What between two numbers offers the second as an alternative (the text between them, whole).
_HEDGE = re.compile(
    r"\s*[,;.]?\s*[(\[]?\s*(?:(?:and/)?or|nor|to|maybe|perhaps|possibly|otherwise|alternatively)\b.*"
    r"|\s*(?:-|~|±|\+/-|\+-)\s*[$€£]?\s*|\s*[(\[]\s*[$€£]?\s*|,",
    re.IGNORECASE | re.DOTALL,
)
_BETWEEN = re.compile(r"\b(?:between|either|from)\s*[$€£]?\s*$", re.IGNORECASE)
_WORKING = re.compile(r"\s*(?:[-+*/^x]|times\b)\s*[$€£]?\s*[\d(.]", re.IGNORECASE)
STATEMENT_CHARS = 400  # a final statement is read this far: an answer is a short sentence
ANSWER_TEXT_CHARS = 20_000  # the anchor reads a solution's last 20,000 characters (a GSM8K solution is under 2,000)
MAX_OFFERED = 10  # a hedge's values are reported this far


@dataclass(frozen=True)
class Reading:
    """What a reader takes as the final answer: `value`, or None with `offered` holding the values of a hedge."""

    value: Fraction | None
    offered: tuple[Fraction, ...] = ()

    @property
    def hedged(self) -> bool:
        return len(set(self.offered)) > 1


def _stated(text: str) -> list[tuple[Fraction, int, int]]:
    """(value, start, end) of each number stated in `text`, in order."""
    found = []
    for match in _STATED.finditer(text):
        number = value(match.group("num"))
        if match.group("scale"):
            number *= SCALES[match.group("scale").lower()]
        elif match.group("k"):
            number *= 1000
        if match.group("den") is not None:
            denominator = value(match.group("den"))
            if denominator == 0:
                continue
            number /= denominator
        found.append((-number if match.group("sign") else number, match.start(), match.end()))
    return found


def _statement(text: str) -> tuple[Fraction | None, tuple[Fraction, ...]]:
    """(the first value, every value the statement offers as an alternative to it).

    A statement that works its result out (`9 * 2 = 18`) answers with what follows its last `=`;
    a relation between two plain numbers that differ (`18 = 20`) offers both."""
    line, _, rest = text.partition("\n")
    if "=" in line:
        *before, last = line.split("=")
        result, alternatives = _statement(last + "\n" + rest)
        plain = [_plain(segment) for segment in before]
        claimed = tuple(number for number in plain if number is not None and number != result)
        return (result, (*claimed, *alternatives)) if result is not None and claimed else (result, alternatives)
    numbers = _stated(text)
    if not numbers:
        return None, ()
    first, _, end = numbers[0]
    offered: list[Fraction] = [first]
    between_words = bool(_BETWEEN.search(text[: numbers[0][1]]))
    for number, start, next_end in numbers[1:]:
        gap = text[end:start]
        if gap.rstrip(" $€£").endswith(("(", "[")) and _WORKING.match(text, next_end):
            break  # "540 (3 * 3 * 60)": the working shown, not a second value
        if _HEDGE.fullmatch(gap) or (between_words and re.fullmatch(r"\s*(?:and|or)\s*[$€£]?\s*", gap)):
            offered.append(number)
            end = next_end
        else:
            break
    return first, tuple(offered)


def _plain(segment: str) -> Fraction | None:
    """The value of a segment that states one number and nothing else but words, else None."""
    numbers = _stated(segment)
    return numbers[0][0] if len(numbers) == 1 and not re.search(r"[-+*/^()]", _STATED.sub("", segment)) else None


def read_answer(text: str) -> Reading:
    """The final answer of a solution as a reader takes it (rules in the module docstring)."""
    text = _EMPHASIS.sub("", normalise(text[-ANSWER_TEXT_CHARS:]))
    values = []
    markers = list(_MARKER.finditer(text))
    # A statement ends at the next marker too, so statements never overlap: linear in the text.
    ends = [following.start() for following in markers[1:]] + [len(text)]
    for marker, end in zip(markers, ends):
        tail = text[marker.end() : min(end, marker.end() + STATEMENT_CHARS)]
        paragraph = re.split(r"\n\s*\n|####|\\boxed", tail, maxsplit=1)[0]
        first, offered = _statement(paragraph)
        if first is not None:
            values.append((first, offered))
    if values:
        first, offered = values[-1]
        if len({value for value, _ in values}) > 1:  # two markers that commit to different values
            return Reading(None, tuple(value for value, _ in values))
        return Reading(None, offered) if len(set(offered)) > 1 else Reading(first)
    for line in reversed(text.splitlines()):
        numbers = _stated(line)
        if numbers:
            last_value = numbers[-1][0]
            chain = [last_value]
            for (number, _, end), (_, start, _) in zip(reversed(numbers[:-1]), reversed(numbers[1:])):
                if not _HEDGE.fullmatch(line[end:start]):
                    break
                chain.append(number)  # "18 or 20": each value joined to the next by a hedge
            return Reading(None, tuple(chain)) if len(set(chain)) > 1 else Reading(last_value)
    return Reading(None)


def parse_number(text: str) -> Fraction | None:
    """The first number stated in `text` as an exact rational, or None when there is none."""
    numbers = _stated(normalise(text))
    return numbers[0][0] if numbers else None


def canonical(value: Fraction) -> str:
    """A stable string for a rational: integers plainly, terminating decimals as decimals, else p/q."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    if den == 1:
        text = f"{float(value):.12f}".rstrip("0").rstrip(".")
        if Fraction(text) == value:
            return text
    return f"{value.numerator}/{value.denominator}"


def extract_answer(text: str) -> str | None:
    """The candidate's final answer in canonical form, or None when no number can be read or it is hedged."""
    reading = read_answer(text)
    return canonical(reading.value) if reading.value is not None else None


def answers_equal(left: str | None, right: str | None) -> bool:
    """Exact rational equality of two canonical answers; a missing answer equals nothing."""
    if left is None or right is None:
        return False
    return Fraction(left) == Fraction(right)
