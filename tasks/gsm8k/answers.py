"""Reading and comparing GSM8K final answers: the one committed value a reader sees.

Rules, in order (each form is a row of the tables in docs/tasks.md, "GSM8K answers", and a test):

0. A candidate over `numbers.MAX_TEXT_CHARS` is not read (`too_long`); otherwise only its visible
   text is (`tasks.visible.visible_text`: no HTML comments, code, quotes or hidden elements).
1. The text is normalised (`tasks.gsm8k.numbers`, the grammar the shield reads steps with), its
   LaTeX read through (`_LATEX`: delimiters, wrappers, `{,}` and `\\,` thousands, `\\times`),
   markdown emphasis dropped.
2. The final statement is the sentence after the last answer marker (`####`, `The answer is`,
   `The final answer is`, `Final answer:`, `\\boxed`, at a line start `A:` and `Answer:`). It is read
   whole by a closed grammar (`_statement`): sides that evaluate to the value, then the value side
   `_VALUE_SIDE` (number, `× 10^n`, `%`, `UNIT_WORDS`, working in parentheses that restates it,
   punctuation). Anything else commits to no value. Without a marker, the answer is the last number
   of the last line that has one.
3. Hedged, so wrong: a statement that does not parse and states two different values, two markers
   that commit to different values, or any different value (digits or number words) after the
   committed statement. An unparsed statement with one value is unreadable (no answer).
   `read_answer` reports the values offered; `extract_answer` gives None for both, so neither votes.
4. Numbers are compared exactly as rationals (`fractions.Fraction`), never with float `==`:
   `18`, `18.0`, `$18.00` and `36/2` are all equal.

Every scan is linear in the text: a statement ends at the next marker and after STATEMENT_CHARS.

`extract_answer` returns the canonical string of that rational (`"18"`, `"0.5"`, `"1/3"`) so that
majority votes and reports group equal answers together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from tasks.gsm8k.claims import evaluate
from tasks.gsm8k.numbers import MAX_TEXT_CHARS, NUMBER_PATTERN, SCALES, normalise, value
from tasks.visible import visible_text

_MARKER = re.compile(
    r"####|\\boxed\b|\bthe\s+(?:final\s+)?answer\s+is\b:?|\bfinal\s+answer\s*:|^[ \t>*_#]*(?:A|answer)\s*:",
    re.IGNORECASE | re.MULTILINE,
)
_EMPHASIS = re.compile(r"\*\*|__|`")
# LaTeX a reader sees through: math delimiters, wrappers, spacing, `{,}` and `\,` between thousands.
_LATEX = re.compile(
    r"\\[dt]?frac\{(?P<num>\d{1,30})\}\{(?P<den>\d{1,30})\}"
    r"|(?P<thousands>(?<=\d)(?:\{,\}|\\,)(?=\d{3}(?!\d)))"
    r"|\\(?P<op>times|cdot)(?![A-Za-z])"
    r"|\\(?:text|textrm|textbf|mathrm|mathbf)\s*\{"
    r"|\\boxed\s*\{|\\[$%]|\\[(),!\[\] ]|[${}]"
)
# One number as a reader states it: sign, currency, the number, a scale word or `k`, a fraction.
_STATED = re.compile(
    rf"(?P<sign>(?<![\w)])-)?\s?[$€£]?\s?(?P<num>(?<![\w.])(?:{NUMBER_PATTERN}))"
    rf"(?:\s*(?P<scale>thousand|million|billion)\b|(?P<k>k)\b)?"
    rf"(?:\s*/\s*(?P<den>(?:{NUMBER_PATTERN}))(?!\w|\.\d))?",
    re.IGNORECASE,
)
# The whole of a final statement's value side, a closed grammar: the number (sign, currency, scale,
# fraction), an optional `× 10^n`, `%`, unit words, working in parentheses, closing punctuation.
_VALUE_SIDE = re.compile(
    rf"\s*(?P<stated>{_STATED.pattern})(?:\s*[*x]\s*10\s*\^\s*(?P<exp>-?\d{{1,2}})(?!\d))?\s*%?"
    r"(?P<units>(?:\s*[A-Za-z]+){0,4}?)\s*(?:\((?P<work>[^()]{0,200})\))?(?P<more>(?:\s*[A-Za-z]+){0,4})\s*[.!]?\s*",
    re.IGNORECASE,
)
# Words a unit may be written with after the answer; any other word makes the statement unreadable.
UNIT_WORDS = frozenset(
    """dollar dollars usd cent cents euro euros pound pounds buck bucks percent per each a an in of total
    second seconds minute minutes min mins hour hours hr hrs day days week weeks month months year years
    inch inches foot feet ft yard yards mile miles meter meters metre metres m cm mm km kilometer kilometers
    gram grams g kg kilogram kilograms ounce ounces oz lb lbs ton tons liter liters litre litres l ml
    gallon gallons quart quarts pint pints cup cups square cubic
    people persons person students children kids adults friends players boys girls men women
    apples apple oranges eggs cookies cupcakes pies cakes slices pieces candies candy books pages
    marbles stickers cards balls toys cars trees flowers animals dogs cats birds fish chickens cows
    items things units times points miles bottles boxes bags cans jars packs packages tickets
    calories pizzas sandwiches cups glasses hats shirts pairs of shoes socks beads stamps coins
    bills games songs videos photos pictures loaves bananas lemons carrots potatoes tomatoes seeds""".split()
)
_SENTENCE_END = re.compile(r"[.!?](?!\d)|\n")
# Number words a later sentence may offer a different value with ("the answer is twenty").
_NUMBER_WORDS = {
    word: index
    for index, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
     "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "dozen": 12}
_WORD = re.compile(r"[a-z]+", re.IGNORECASE)
_HEDGE = re.compile(
    r"\s*[,;.]?\s*[(\[]?\s*(?:(?:and/)?or|nor|to|maybe|perhaps|possibly|otherwise|alternatively)\b.*"
    r"|\s*(?:-|~|±|\+/-|\+-)\s*[$€£]?\s*|\s*[(\[]\s*[$€£]?\s*|,",
    re.IGNORECASE | re.DOTALL,
)
STATEMENT_CHARS = 400  # a final statement is read this far: an answer is a short sentence
MAX_OFFERED = 10  # a hedge's values are reported this far


@dataclass(frozen=True)
class Reading:
    """What a reader takes as the final answer: `value`, or None with `offered` holding the values of a hedge."""

    value: Fraction | None
    offered: tuple[Fraction, ...] = ()
    too_long: bool = False  # the candidate is over MAX_TEXT_CHARS: not read at all

    @property
    def hedged(self) -> bool:
        return len(set(self.offered)) > 1


# What each LaTeX token `_LATEX` matches reads as (the rest of its matches read as nothing).
_LATEX_READS = {"\\%": "%", "\\,": " ", "\\ ": " ", "\\(": " ", "\\)": " ", "\\[": " ", "\\]": " "}


def _latex(match: re.Match[str]) -> str:
    """What a reader reads one `_LATEX` match as."""
    if match.group("num") is not None:
        return f"{match.group('num')}/{match.group('den')}"
    if match.group("op") is not None:
        return "*"
    if match.group("thousands") is not None:
        return ","  # "18{,}000", "18\\,000"
    text = match.group(0)
    return "\\boxed " if text.startswith("\\boxed") else _LATEX_READS.get(text, "")


def _stated_one(match: re.Match[str]) -> Fraction | None:
    number = value(match.group("num"))
    if match.group("scale"):
        number *= SCALES[match.group("scale").lower()]
    elif match.group("k"):
        number *= 1000
    if match.group("den") is not None:
        denominator = value(match.group("den"))
        if denominator == 0:
            return None
        number /= denominator
    return -number if match.group("sign") else number


def _stated(text: str) -> list[tuple[Fraction, int, int]]:
    """(value, start, end) of each number stated in `text`, in order."""
    found = []
    for match in _STATED.finditer(text):
        number = _stated_one(match)
        if number is not None:
            found.append((number, match.start(), match.end()))
    return found


def _offered(text: str) -> tuple[Fraction, ...]:
    """Every value `text` states, in digits or in number words."""
    values = [number for number, _, _ in _stated(text)]
    values += [Fraction(_NUMBER_WORDS[word.lower()]) for word in _WORD.findall(text) if word.lower() in _NUMBER_WORDS]
    return tuple(values)


def _side_value(side: str) -> Fraction | None:
    """The value of the last side of a statement when it is the closed grammar's whole, else None."""
    match = _VALUE_SIDE.fullmatch(side)
    if match is None:
        return None
    number = _stated_one(match)  # _VALUE_SIDE holds _STATED's groups
    if number is None:
        return None
    if match.group("exp") is not None:
        number *= Fraction(10) ** int(match.group("exp"))
    words = (match.group("units") + " " + match.group("more")).lower().split()
    if any(word not in UNIT_WORDS for word in words):
        return None
    if match.group("work") is not None and _expression(match.group("work")) != number:
        return None  # "540 (3 * 3 * 60)": working that restates the value, nothing else
    return number


def _expression(text: str) -> Fraction | None:
    """The exact value of an arithmetic expression (units between numbers allowed), else None."""
    return evaluate(text).value


def _statement(text: str) -> tuple[Fraction | None, tuple[Fraction, ...]]:
    """(the committed value, the values offered) of one final statement, read whole.

    The statement `side = side = ... = value side` must parse entirely: each earlier side is an
    expression that evaluates to the value (`9 * 2 = 18`), the value side is the closed grammar of
    `_VALUE_SIDE`. Anything else commits to no value (None) and offers every value it states: a hedge
    when two differ, unreadable when not; a statement with no value at all is no statement."""
    *before, last = text.split("=")
    result = _side_value(last)
    if result is not None and all(_expression(side) == result for side in before):
        return result, (result,)
    return None, _offered(text)  # one value: unreadable; two different ones: a hedge


def _clean(text: str) -> str:
    return _LATEX.sub(_latex, _EMPHASIS.sub("", normalise(text)))


def read_answer(text: str) -> Reading:
    """The final answer of a solution as a reader takes it (rules in the module docstring)."""
    if len(text) > MAX_TEXT_CHARS:
        return Reading(None, too_long=True)  # the shield's cap too: no reader reads past it
    text = _clean(visible_text(text))
    values: list[tuple[Fraction | None, tuple[Fraction, ...], int]] = []
    markers = list(_MARKER.finditer(text))
    # A statement ends at the next marker too, so statements never overlap: linear in the text.
    ends = [following.start() for following in markers[1:]] + [len(text)]
    for marker, end in zip(markers, ends):
        limit = min(end, marker.end() + STATEMENT_CHARS)
        start = marker.end()
        while start < limit and text[start] in " \t\n:":
            start += 1  # "The answer is:\n9 * 2 = 18": the statement starts on the next line
        stop = _SENTENCE_END.search(text, start, limit)
        statement_end = stop.end() if stop is not None else limit
        statement = text[start:statement_end]
        first, offered = _statement(statement)
        if first is not None or offered or re.search(r"\d", statement):  # digits no number reads: unreadable
            values.append((first, offered, statement_end))
    if values:
        first, _, statement_end = values[-1]
        if len({value for value, _, _ in values}) > 1 or first is None:
            # two markers that commit to different values, or an unreadable or hedged statement
            return Reading(None, tuple(dict.fromkeys(number for _, offers, _ in values for number in offers)))
        later = set(_offered(text[statement_end:])) - {first}
        if later:  # "#### 18 ... the correct answer is 20": a later value is a hedge
            return Reading(None, (first, *sorted(later)))
        return Reading(first)
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
