"""The arithmetic claims of one GSM8K step, read in one linear pass and evaluated without recursion.

A step is tokenised once (`tasks.gsm8k.numbers` reads the numbers) into numbers, operators, words
and other characters. An arithmetic run is a maximal stretch of numbers, operators (`+ - * / ^ %`,
parentheses, and what a reader reads as one: `×`, `·`, `÷`, `−`, `x` between numbers, `times`,
`multiplied by`, `plus`, `minus`, `divided by`, `of` after a percent), currency signs and `=`.
Words and other punctuation end a run. Inside a run:
- `2(9)` and `(3)(4)` multiply; a rate unit after a division sign (`$10/day`), and a unit word
  after a number and before an operator (`16 eggs - 3 eggs`), or before `=` when the number is an
  operand of an expression (`16 - 3 eggs = 13`, `$250 / $10 per day = 25`), are the quantity's unit
  and are dropped, except where a run mixes units that convert (`convert_units`: two time units,
  or dozens added to plain counts), where each is converted; a bare `15 gallons = 120 pints` is a
  conversion, not a claim. Two numbers side by side (`3 1/2`) are no expression.
- a letter glued to a number or an operator (`2x`, `(1/2)x`, `x+3`, `20*X`) is a variable: the
  side it touches is algebra, and its links are not claims; neither is a side with an operator
  left dangling (`30*= 90`).
- each `=` (and what a reader reads as one, rounding allowed: `==`, `=>`, `->`, `≈`, `→`, `⇒`, any
  symbol whose Unicode name says EQUAL, ARROW or IMPLIES but not NOT, LESS or GREATER, and the words
  `equals`, `equal (to)`, `is/are equal to` between operands) makes a link between
  the sides around it, and every link is a claim: `9 * 2 = 18 = 20`
  claims `9 * 2 = 18` and `18 = 20`. A run that starts with an operator is the tail of algebra
  (`X*4 + 240 = 1920`): its first link has no left side and is not a claim; later links are.
- a run of more than 30 digits is an operand the reader cannot evaluate, and an operator-like
  symbol (any math or other symbol, `@`, `#`, `&`, `|`, `~`, `\\`) or word (`mod`,
  `modulo`, `choose`, `xor`, `over`) between two numbers is something the reader cannot evaluate:
  the links whose side holds one are `unverifiable` claims, reported, never silently clean.

The evaluator is an operator-precedence (shunting-yard) loop on exact rationals, so 300 nested
parentheses cost 300 steps, not 300 stack frames. A power needs an integer exponent of at most 64
and a base of at most 256 bits, so no claim can make the checker build a huge number.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from tasks.gsm8k.numbers import NUMBER_PATTERN, normalise, value

_TOKEN = re.compile(
    rf"(?P<long>\d{{31,}})|(?P<num>(?<!\d){NUMBER_PATTERN})|(?P<word>[A-Za-z]+)|(?P<link>==|=>|->|[≈→⇒])|(?P<op>\*\*|[-+*/^()%=])|(?P<cur>[$€£])|(?P<space>\s+)|(?P<other>.)",
    re.DOTALL,
)
_WORD_OPERATORS = {"times": "*", "plus": "+", "minus": "-", "x": "*"}
_TWO_WORD_OPERATORS = {("multiplied", "by"): "*", ("divided", "by"): "/"}
_UNKNOWN_WORDS = frozenset({"mod", "modulo", "choose", "xor", "over"})
# Words a reader reads as `=` between two operands: "16 - 3 - 4 equals 9", "... is equal to 9".
_EQUALITY_WORDS = {("equals",): 1, ("equal", "to"): 2, ("is", "equal", "to"): 3, ("are", "equal", "to"): 3, ("equal",): 1}
_LINK_HINT = re.compile(r"[=≈→⇒]|->|\bequals?\b|[^\x00-\x7f]", re.IGNORECASE)
# Units a quantity is converted by when a run mixes them (to the smallest one present): time, and
# the dozen (12 of the count beside it).
TIME_UNITS = {
    "second": 1, "seconds": 1, "sec": 1, "secs": 1, "minute": 60, "minutes": 60, "min": 60, "mins": 60,
    "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "day": 86400, "days": 86400, "week": 604800, "weeks": 604800,
}
DOZEN_WORDS = frozenset({"dozen", "dozens"})
_OTHER_OPERATOR = re.compile(r"[@#&|~\\]|[^\w\s\"'.,;:!?\x00]")  # symbols; letters, spaces and punctuation are not
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "^": 4}
MAX_EXPONENT, MAX_BASE_BITS = 64, 256


class Token(NamedTuple):
    """One token of a step (a NamedTuple: a step has many, and they are built in the hot loop)."""

    kind: str  # num, op, long, unknown (an operand or operator the reader cannot evaluate), var (a variable), break, factor
    text: str
    start: int
    end: int
    unit: str = ""  # a num's convertible unit word (`TIME_UNITS`, `DOZEN_WORDS`), lower-cased


class Evaluation(NamedTuple):
    """An expression's exact `value` (None when it is not arithmetic), the `operands` it read, and
    whether the evaluator `refused` it (a zero divisor, a power past the caps): a refusal is no
    "not arithmetic", it is an unverifiable claim."""

    value: Fraction | None
    operands: list[Fraction]
    refused: bool = False


@dataclass(frozen=True)
class Claim:
    """`left = right` at `position` in the step. When the right side is a plain number, rounding is
    judged against the decimals it was written with; otherwise equality is exact. Only the first
    link of a run reads operands that must be grounded: later links restate a value the run derived.
    `unverifiable` says a side holds an operator the reader cannot evaluate."""

    position: int
    left: str
    right: str
    check_grounding: bool
    unverifiable: bool = False
    left_tokens: tuple[Token, ...] = field(default=(), compare=False, repr=False)
    right_tokens: tuple[Token, ...] = field(default=(), compare=False, repr=False)

    def evaluate(self) -> tuple[Evaluation, Evaluation]:
        """The Evaluations of the left and right sides, from the tokens the claim was read from."""
        return evaluate_tokens(list(self.left_tokens)), evaluate_tokens(list(self.right_tokens))


def _raw_tokens(text: str) -> list[Token]:
    return [Token(match.lastgroup or "other", match.group(0), *match.span()) for match in _TOKEN.finditer(text) if match.lastgroup != "space"]


def _is_operand_end(token: Token | None) -> bool:
    return token is not None and (token.kind in ("num", "long", "unknown") or token.text in (")", "%"))


def _is_operand_start(token: Token | None) -> bool:
    return token is not None and (token.kind in ("num", "long") or token.text == "(")


def tokens(text: str) -> list[Token]:
    """`text`'s arithmetic tokens: numbers, operators (words read as operators mapped), unknown
    operators, and `break` for everything that ends a run. Linear in the text."""
    raw = _raw_tokens(text)
    out: list[Token] = []
    index = 0
    while index < len(raw):
        token = raw[index]
        before = out[-1] if out else None
        after = raw[index + 1] if index + 1 < len(raw) else None
        if token.kind == "cur":
            index += 1
            continue  # "$250" is 250
        if token.kind == "long":  # digits past what a number may hold: an operand no one can check
            out.append(Token("unknown", token.text, token.start, token.end))
            index += 1
            continue
        if token.kind == "word":
            word = token.text.lower()
            if before is not None and before.kind == "num" and not before.unit and (word in TIME_UNITS or word in DOZEN_WORDS):
                out[-1] = before = before._replace(unit=word.rstrip("s") if word in DOZEN_WORDS else word)
            equality = _equality_words(raw, index)
            if equality and _is_operand_end(before) and _is_operand_start(_next_operand(raw, index + equality)):
                out.append(Token("op", "=", token.start, raw[index + equality - 1].end))  # "9 * 2 equals 18"
                index += equality
                continue
            pair = (word, after.text.lower()) if after is not None and after.kind == "word" else None
            if pair in _TWO_WORD_OPERATORS and _is_operand_end(before):
                out.append(Token("op", _TWO_WORD_OPERATORS[pair], token.start, after.end))  # type: ignore[union-attr]
                index += 2
                continue
            if word in _WORD_OPERATORS and _is_operand_end(before) and _is_operand_start(_next_operand(raw, index + 1)):
                out.append(Token("op", _WORD_OPERATORS[word], token.start, token.end))
            elif word == "of" and before is not None and before.text == "%" and _is_operand_start(_next_operand(raw, index + 1)):
                out.append(Token("op", "*", token.start, token.end))
            elif word in _UNKNOWN_WORDS and _is_operand_end(before) and _is_operand_start(_next_operand(raw, index + 1)):
                out.append(Token("unknown", token.text, token.start, token.end))
            elif before is not None and before.text == "/" and before.kind == "op" and not _is_operand_start(after):
                out.pop()  # "$10/day": a rate's unit, not a division
            elif _is_unit(out, token, raw, index):
                if word == "per":
                    index += 1  # "$10 per day": the unit word after "per" goes too
                # "16 eggs - 3 eggs = 13": the quantity's unit
            elif (before is not None and before.end == token.start and _is_operand_end(before)) or (
                after is not None and after.start == token.end and after.kind in ("op", "num") and after.text not in ("=", ")")
            ):
                out.append(Token("var", token.text, token.start, token.end))  # "2x", "(1/2)x", "x+3": algebra
            else:
                out.append(Token("break", token.text, token.start, token.end))
            index += 1
            continue
        if token.kind == "other" and _reads_as_equality(token.text):
            out.append(Token("op", "=", token.start, token.end))  # "≃", "≡", "⟹", "＝": equality or implication
            index += 1
            continue
        if token.kind == "other":
            if _OTHER_OPERATOR.fullmatch(token.text) and _is_operand_end(before) and _is_operand_start(_next_operand(raw, index + 1)):
                out.append(Token("unknown", token.text, token.start, token.end))
            else:
                out.append(Token("break", token.text, token.start, token.end))
            index += 1
            continue
        if token.kind == "op" and token.text == "**":
            token = Token("op", "^", token.start, token.end)
        if token.kind == "link":  # "9 * 2 ≈ 18", "9 * 2 → 18", "9 * 2 => 18" claim what "=" does
            token = Token("op", "=", token.start, token.end)
        if before is not None and ((before.text == ")" and _is_operand_start(token)) or (before.kind == "num" and token.text == "(")):
            out.append(Token("op", "*", token.start, token.start))  # 2(9), (3)(4), (2)3
        out.append(token)
        index += 1
    return out


def _equality_words(raw: list[Token], index: int) -> int:
    """How many word tokens from `index` read as `=` (0 when they do not)."""
    for words, length in sorted(_EQUALITY_WORDS.items(), key=lambda item: -item[1]):
        chunk = raw[index : index + length]
        if len(chunk) == length and all(t.kind == "word" for t in chunk) and tuple(t.text.lower() for t in chunk) == words:
            return length
    return 0


def _reads_as_equality(char: str) -> bool:
    """A symbol a reader reads as `=` or as "gives": its Unicode name says EQUAL or ARROW, and not
    NOT, LESS or GREATER (`≠`, `≤`, `≥` are no equality; they stay unknown operators)."""
    if char.isascii():
        return False
    name = unicodedata.name(char, "")
    return ("EQUAL" in name or "ARROW" in name or "IMPLIES" in name) and not any(word in name for word in ("NOT", "LESS", "GREATER"))


def _is_unit(out: list[Token], token: Token, raw: list[Token], index: int) -> bool:
    """A word of two letters or more right after a number and before an operator (`16 eggs -`,
    `$10 per day /`) is the number's unit, not the end of the arithmetic; before `=` only when the
    number is an operand of an expression (`16 - 3 eggs = 13`, `250 / 10 per day = 25`): a bare
    `15 gallons = 120 pints` is a conversion, not a claim."""
    before = out[-1] if out else None
    if before is None or before.kind != "num" or len(token.text) < 2:
        return False
    following = index + (2 if token.text.lower() == "per" and index + 1 < len(raw) and raw[index + 1].kind == "word" else 1)
    after = raw[following] if following < len(raw) else None
    if after is None or after.kind != "op" or after.text in ("(", ")"):
        return False
    if after.text != "=":
        return True
    for earlier in reversed(out[:-1]):
        if earlier.kind == "break" or earlier.text == "=":
            return False
        if earlier.kind == "op" and earlier.text in _PRECEDENCE:
            return True
    return False


def _next_operand(raw: list[Token], index: int) -> Token | None:
    """The token at `index`, past a currency sign ("9 times $2")."""
    while index < len(raw) and raw[index].kind == "cur":
        index += 1
    return raw[index] if index < len(raw) else None


def evaluate_tokens(items: list[Token]) -> Evaluation:
    """An expression's Evaluation: shunting-yard on exact rationals, no recursion."""
    values: list[Fraction] = []
    operators: list[str] = []
    operands: list[Fraction] = []
    expect_operand = True
    refused = False

    def apply(operator: str) -> bool:
        nonlocal refused
        if operator == "neg":
            if not values:
                return False
            values.append(-values.pop())
            return True
        if len(values) < 2:
            return False
        right, left = values.pop(), values.pop()
        if operator == "+":
            values.append(left + right)
        elif operator == "-":
            values.append(left - right)
        elif operator == "*":
            values.append(left * right)
        elif operator == "/":
            if right == 0:
                refused = True
                return False
            values.append(left / right)
        else:  # "^"
            too_big = right.denominator != 1 or abs(right) > MAX_EXPONENT or left.numerator.bit_length() + left.denominator.bit_length() > MAX_BASE_BITS
            if too_big or (left == 0 and right < 0):
                refused = True
                return False
            values.append(left ** right.numerator)
        return True

    def failed() -> Evaluation:
        return Evaluation(None, operands, refused)

    for token in items:
        if token.kind in ("num", "factor"):
            if not expect_operand:
                return failed()  # two numbers side by side ("3 1/2", "5 100") are no expression
            number = value(token.text)
            if token.kind == "num":  # a unit's factor is a constant, not an operand the solution chose
                operands.append(number)
            values.append(number)
            expect_operand = False
        elif token.text == "(":
            if not expect_operand:
                return failed()
            operators.append("(")
        elif token.text == ")":
            if expect_operand:
                return failed()  # "()" is no value
            while operators and operators[-1] != "(":
                if not apply(operators.pop()):
                    return failed()
            if not operators:
                return failed()
            operators.pop()
        elif token.text == "%":
            if expect_operand or not values:
                return failed()
            values.append(values.pop() / 100)
        elif token.kind == "op" and token.text in _PRECEDENCE:
            operator = token.text
            if expect_operand:
                if operator != "-":
                    return failed()
                operators.append("neg")
                continue
            while operators and operators[-1] != "(" and (
                _PRECEDENCE[operators[-1]] > _PRECEDENCE[operator]
                or (_PRECEDENCE[operators[-1]] == _PRECEDENCE[operator] and operator != "^")
            ):
                if not apply(operators.pop()):
                    return failed()
            operators.append(operator)
            expect_operand = True
        else:
            return failed()
    if expect_operand:
        return failed()
    while operators:
        operator = operators.pop()
        if operator == "(" or not apply(operator):
            return failed()
    return Evaluation(values[0], operands) if len(values) == 1 else failed()


def evaluate(expression: str) -> Evaluation:
    """The Evaluation of an expression written as text (value None when it is not arithmetic)."""
    items = tokens(normalise(expression))
    if not items or any(token.kind in ("break", "var", "unknown") or token.text == "=" for token in items):
        return Evaluation(None, [])
    return evaluate_tokens(items)


def _trim(side: list[Token]) -> list[Token]:
    """A side without the parentheses that open or close around the whole run ("(5 + 3 = 8)")."""
    opens, closes = sum(t.text == "(" for t in side), sum(t.text == ")" for t in side)
    start, end = 0, len(side)
    while start < end and side[start].text == "(" and opens > closes:
        start, opens = start + 1, opens - 1
    while end > start and side[end - 1].text == ")" and closes > opens:
        end, closes = end - 1, closes - 1
    return side[start:end]


def _runs(items: list[Token]) -> list[tuple[list[Token], bool, bool]]:
    """(run, begins at a variable, ends at a variable) for every run with an `=` in it."""
    runs: list[tuple[list[Token], bool, bool]] = [([], False, False)]
    for token in items:
        if token.kind in ("break", "var"):
            run, begins, _ = runs[-1]
            runs[-1] = (run, begins, token.kind == "var")
            runs.append(([], token.kind == "var", False))
        else:
            runs[-1][0].append(token)
    return [run for run in runs if any(token.text == "=" for token in run[0])]


def convert_units(run: list[Token]) -> list[Token]:
    """`run` with its quantities in one unit where it mixes units that convert: two time units
    (`2 hours + 7 minutes`: both in minutes), or dozens added to plain counts (`1 dozen + 6`:
    12 + 6). Each converted number becomes `(n * factor)`; the factor is no operand."""
    time = {TIME_UNITS[token.unit] for token in run if token.unit in TIME_UNITS}
    base = min(time) if len(time) > 1 else None
    additive = any(token.kind == "op" and token.text in "+-" for token in run)
    dozens = additive and any(token.unit == "dozen" for token in run) and any(token.kind == "num" and not token.unit for token in run)
    if base is None and not dozens:
        return run
    out: list[Token] = []
    for token in run:
        factor = TIME_UNITS[token.unit] // base if base is not None and token.unit in TIME_UNITS else 12 if dozens and token.unit == "dozen" else 1
        if factor == 1:
            out.append(token)
            continue
        out += [Token("op", "(", token.start, token.start), token._replace(unit=""), Token("op", "*", token.end, token.end),
                Token("factor", str(factor), token.end, token.end), Token("op", ")", token.end, token.end)]
    return out


def claims(step: str, *, annotation: bool = False) -> list[Claim]:
    """Every `=` link of every arithmetic run in `step`, in text order (rules in the module docstring)."""
    text = normalise(step)
    found: list[Claim] = []
    if not _LINK_HINT.search(text):
        return found
    for raw_run, after_variable, before_variable in _runs(tokens(text)):
        run = convert_units(raw_run)
        sides: list[list[Token]] = [[]]
        for token in run:
            if token.text == "=":
                sides.append([])
            else:
                sides[-1].append(token)
        sides = [_trim(side) for side in sides]
        head = sides[0]
        # "X*4 + 240": an operator first is the tail of algebra; so is "x - 5", a minus apart from its number
        algebra_tail = after_variable or (bool(head) and head[0].kind == "op" and (
            head[0].text not in ("(", "-") or (head[0].text == "-" and (len(head) < 2 or head[1].start > head[0].end))
        ))
        first = True
        for index, (left, right) in enumerate(zip(sides, sides[1:])):
            if not left or not right or (index == 0 and algebra_tail) or (index == len(sides) - 2 and before_variable):
                continue
            found.append(
                Claim(
                    position=left[0].start,
                    left=text[left[0].start : left[-1].end],
                    right=text[right[0].start : right[-1].end],
                    check_grounding=first,
                    unverifiable=any(token.kind == "unknown" for token in (*left, *right)),
                    left_tokens=tuple(left),
                    right_tokens=tuple(right),
                )
            )
            first = False
    return found
