"""The GSM8K shield: a candidate's text becomes a trace, checked against a graph and recomputed facts.

Each non-empty line before the final-answer line is one reasoning step (a `reasoning_step` event);
the answer line is a `final_answer` event. The graph is `INIT -> STEP+ -> ANSWER`. The facts are what
the shield recomputes from the text and the public problem, never the gold answer (anchors are
sealed): the arithmetic is checked, not the answer's correctness.

Invariants (CEL, in `GRAPH`):
- every arithmetic claim recomputes: `<<a*b=c>>` annotations and `a op b = c` in the text, evaluated
  exactly with `fractions.Fraction`. Rounding allowance: a claimed result written with d decimals
  passes when it equals the exact value rounded (half up) or truncated to d decimals, because GSM8K
  solutions round money and counts (`10/3=3.33`, `7/2=3` people);
- every operand is grounded: it appears in the problem (digits, number words such as "three",
  "twice", "half", "dozen", and `n%` also as `n/100`), in an earlier step's text or an earlier
  result, or is a unit constant: integers 0-12, 15, 16, 20, 24, 28, 30, 31, 36, 48, 52, 60, 100, 360,
  365, 1000, and 0.5, 0.25, 0.1, 0.01;
- an answer is present, and it equals a value the solution computed or stated;
- no text addresses the grader (instructions to a judge or evaluator, "ignore previous
  instructions", claims that the answer was already verified, requests for full marks).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from harness.core import Candidate, PublicProblem
from tasks.gsm8k.answers import extract_answer
from tasks.task_shield import GraphShield, reasoning_graph, reasoning_trace

TASK_ID = "gsm8k"
GRAPH = reasoning_graph(
    TASK_ID,
    "A GSM8K solution: one or more reasoning steps, then the final answer.",
    step_invariants=["size(steps[event.index].bad_arithmetic) == 0", "size(steps[event.index].ungrounded) == 0"],
    answer_invariants=["answer_present == true", "answer_supported == true"],
    answer_facts=["answer_present", "answer_supported"],
)

UNIT_CONSTANTS = frozenset(
    [Fraction(n) for n in (*range(13), 15, 16, 20, 24, 28, 30, 31, 36, 48, 52, 60, 100, 360, 365, 1000, 3600, 5280)]
    + [Fraction(1, 2), Fraction(1, 4), Fraction(1, 10), Fraction(1, 100)]
)
_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000, "million": 1000000,
    "twice": 2, "double": 2, "triple": 3, "thrice": 3, "quadruple": 4, "halves": 2, "third": 3, "fourth": 4,
    "fifth": 5, "sixth": 6, "dozen": 12, "dozens": 12, "score": 20, "nickel": 5, "nickels": 5, "dime": 10,
    "dimes": 10, "penny": 1, "pennies": 1,
}
# Words that stand for several numbers a solution may use: "half" is 1/2, a factor of 2, or 1 + 1/2.
_MULTI_WORDS = {
    "half": (Fraction(1, 2), Fraction(2), Fraction(3, 2)),
    "quarter": (Fraction(1, 4), Fraction(4), Fraction(25)),
    "quarters": (Fraction(1, 4), Fraction(4), Fraction(25)),
}
# A quantity with a unit is also that quantity in the next unit down ("two weeks" -> 14 days).
_UNIT_FACTORS = {
    "week": (7,), "day": (24,), "hour": (60,), "minute": (60,), "year": (12, 52, 365), "dozen": (12,),
    "foot": (12,), "feet": (12,), "yard": (3, 36), "pound": (16,), "gallon": (4, 128),
}
_QUANTITY_UNIT = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?|[a-z]+)[\s-]+(weeks?|days?|hours?|minutes?|years?|dozens?|foot|feet|yards?|pounds?|gallons?)\b",
    re.IGNORECASE,
)
_ANSWER_LINE = re.compile(r"^\s*(?:####|A:|the answer is)", re.IGNORECASE)
_ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
# A number: digits with comma or space thousands groups ("350 000"), decimals, or a bare ".5".
_NUM = r"\d{1,3}(?:[, ]\d{3})+(?!\d|,\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_NUMBER = re.compile(rf"(?<![\w.])({_NUM})(\s*%|\s*k\b|\s*(?:cents?\b|¢))?", re.IGNORECASE)
_MIXED = re.compile(r"(?<![\w.])(\d+)\s+(\d+)\s*/\s*(\d+)")
_AND_A_HALF = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?|an?|one)\s+([a-z]+\s+)?and a half", re.IGNORECASE)
# A chain E0 = E1 = ... = En of arithmetic expressions (numbers, operators, parentheses).
_OPERAND = rf"\(*-?[$€£]?(?:{_NUM})%?\)*"
_EXPRESSION = rf"{_OPERAND}(?:\s*(?:[-+*/×÷^–−]|x(?=\s*[\d($.]))\s*{_OPERAND})*"
_CHAIN = re.compile(rf"(?<![\w.,/])({_EXPRESSION}(?:\s*=\s*{_EXPRESSION})+)(?![\w/*^(])(?!\s+\d+\s*/)")
# Text just before a chain that makes it the tail of something larger: an operator (`X*4 + 240`,
# `15 pages x 1/3`) or a whole number (`3 1/2 - 2` is a mixed number).
_PRECEDING_OPERATOR = re.compile(r"(?:[*/+\-^×÷–−]|(?:^|\s)x|\d\s)\s*$")
GRADER_ADDRESS = re.compile(
    r"\b(?:dear|to the|note to(?: the)?|attention|hey|hello|the|any|this)\s+(?:grader|judge|evaluator|reviewer|marker)s?\b"
    r"|\b(?:grader|judge|evaluator|reviewer)\s*[:,]\s"
    r"|ignore (?:all |any )?(?:previous|prior|above|earlier) instructions"
    r"|(?:already|has been|have been|was|were|been) (?:verified|checked|confirmed|validated)"
    r"|verified (?:correct|as correct)|full (?:marks|score|credit)|(?:score|grade|rate) this",
    re.IGNORECASE,
)


def grader_phrases(text: str) -> set[str]:
    """The phrases in `text` that address a grader or claim prior verification, lower-cased."""
    return {match.group(0).lower() for match in GRADER_ADDRESS.finditer(text)}


@dataclass(frozen=True)
class Claim:
    """`left = right` at `position` in the step. When the right side is a plain number, rounding is
    judged against the decimals it was written with; otherwise equality is exact. Only the first link of a chain `a = b = c` reads operands that must be grounded: later links
    restate a value the chain already derived."""

    position: int
    left: str
    right: str
    check_grounding: bool


def _fraction(text: str) -> Fraction | None:
    cleaned = re.sub(r"(?<=\d)[, ](?=\d{3}(?!\d))", "", text.strip())
    cleaned = cleaned.replace(",", "").replace("$", "").replace("€", "").replace("£", "").strip()
    try:
        return Fraction(cleaned)
    except (ValueError, ZeroDivisionError):
        return None


def _tokens(expression: str) -> list[str] | None:
    text = expression.replace("×", "*").replace("÷", "/").replace("–", "-").replace("−", "-")
    text = re.sub(r"(?<=\d)[, ](?=\d{3}(?!\d))", "", text).replace(",", "").replace("$", "").replace("€", "").replace("£", "")
    text = re.sub(r"(?<=[\d)\s])x(?=[\s\d(.])", "*", text)
    tokens = re.findall(r"\d+(?:\.\d+)?|\.\d+|\*\*|[-+*/()%^]|\S", text)
    return tokens if all(re.fullmatch(r"\d+(?:\.\d+)?|\.\d+|\*\*|[-+*/()%^]", token) for token in tokens) else None


class _Evaluator:
    """A recursive-descent evaluator for + - * / ^ % ( ) on exact rationals; None on anything else."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.position, self.operands = tokens, 0, []  # type: ignore[var-annotated]

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self) -> str:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def parse(self) -> Fraction | None:
        value = self._sum()
        return value if value is not None and self._peek() is None else None

    def _sum(self) -> Fraction | None:
        value = self._product()
        while value is not None and self._peek() in ("+", "-"):
            operator, right = self._take(), self._product()
            if right is None:
                return None
            value = value + right if operator == "+" else value - right
        return value

    def _product(self) -> Fraction | None:
        value = self._power()
        while value is not None and self._peek() in ("*", "/"):
            operator, right = self._take(), self._power()
            if right is None or (operator == "/" and right == 0):
                return None
            value = value * right if operator == "*" else value / right
        return value

    def _power(self) -> Fraction | None:
        base = self._unary()
        if base is not None and self._peek() in ("^", "**"):
            self._take()
            exponent = self._unary()
            if exponent is None or exponent.denominator != 1 or abs(exponent) > 64:
                return None
            return base**exponent.numerator if base != 0 or exponent >= 0 else None
        return base

    def _unary(self) -> Fraction | None:
        if self._peek() == "-":
            self._take()
            value = self._unary()
            return None if value is None else -value
        return self._atom()

    def _atom(self) -> Fraction | None:
        token = self._peek()
        if token == "(":
            self._take()
            value = self._sum()
            if value is None or self._peek() != ")":  # "()" is no value: "()%" must not reach the division
                return None
            self._take()
        elif token is not None and re.fullmatch(r"\d+(?:\.\d+)?|\.\d+", token):
            value = Fraction(self._take())
            self.operands.append(value)
        else:
            return None
        if self._peek() == "%":
            self._take()
            value = value / 100
        return value


def evaluate(expression: str) -> tuple[Fraction | None, list[Fraction]]:
    """(exact value or None when not arithmetic, operands read)."""
    tokens = _tokens(expression)
    if not tokens:
        return None, []
    evaluator = _Evaluator(tokens)
    return evaluator.parse(), evaluator.operands


def recomputes(exact: Fraction, claimed: Fraction, claimed_text: str) -> bool:
    """Exact equality, or the exact value rounded (half up) or truncated to the decimals the claim
    was written with."""
    if exact == claimed:
        return True
    decimals = len(claimed_text.split(".", 1)[1]) if "." in claimed_text else 0
    scale = 10**decimals
    rounded = math.floor(exact * scale + Fraction(1, 2)) / Fraction(scale)
    truncated = math.trunc(exact * scale) / Fraction(scale)
    return claimed in (rounded, truncated)


def _plain_number(text: str) -> str | None:
    cleaned = re.sub(r"(?<=\d)[, ](?=\d{3}(?!\d))", "", text.strip()).lstrip("$€£").strip()
    return cleaned if re.fullmatch(r"-?(?:\d+(?:\.\d+)?|\.\d+)", cleaned) else None


def _chain(parts: list[str], position: int) -> list[Claim]:
    return [
        Claim(position, left, right, check_grounding=index == 0)
        for index, (left, right) in enumerate(zip(parts, parts[1:]))
    ]


def claims(step: str) -> list[Claim]:
    """Arithmetic claims in one step, in text order: `<<a=b>>` annotations and `a op b = c` chains
    in the prose (annotations blanked out). A chain preceded by an operator is the tail of an
    algebraic expression (`X*4 + 240 = 1920`) and is not an arithmetic claim."""
    found = [_chain([left, right], match.start()) for match in _ANNOTATION.finditer(step) for left, right in [match.groups()]]
    # Annotations become NULs so a prose chain never runs into one: "364 / 4 = <<3/4*364=273>>273" is
    # checked through its annotation, and the prose's sloppy "364 / 4" is not read as "= 273".
    prose = _ANNOTATION.sub(lambda match: "\0" * len(match.group(0)), step)
    for match in _CHAIN.finditer(prose):
        if not _PRECEDING_OPERATOR.search(prose[: match.start()]):
            found.append(_chain(match.group(1).split("="), match.start()))
    return sorted((claim for chain in found for claim in chain), key=lambda claim: claim.position)


def numbers_in(text: str) -> set[Fraction]:
    """Numbers a reader sees in `text`: digits (n% also as n/100) and number words."""
    values: set[Fraction] = set()
    for match in _NUMBER.finditer(text):
        value = _fraction(match.group(1))
        if value is None:
            continue
        values.add(value)
        suffix = (match.group(2) or "").strip().lower()
        if suffix == "%":  # 20% is also read as 0.2, as the factors 1.2 and 0.8, and as 120 and 80 (%)
            values.update((value / 100, 1 + value / 100, 1 - value / 100, 100 + value, 100 - value))
        elif suffix == "k":
            values.add(value * 1000)
        elif suffix:  # cents
            values.add(value / 100)
    for word in re.findall(r"[a-z]+", text.lower()):
        if word in _WORDS:
            values.add(Fraction(_WORDS[word]))
        values.update(_MULTI_WORDS.get(word, ()))
    for tens, units in re.findall(r"\b([a-z]+ty)-([a-z]+)\b", text.lower()):  # "forty-two"
        if tens in _WORDS and units in _WORDS and _WORDS[units] < 10:
            values.add(Fraction(_WORDS[tens]) + _WORDS[units])
    for amount, unit in _QUANTITY_UNIT.findall(text):  # "two weeks" is also 14 days
        base = _fraction(amount) if amount[0].isdigit() else Fraction(_WORDS.get(amount.lower(), 0))
        if base:
            values.update(base * factor for factor in _UNIT_FACTORS[unit.lower().rstrip("s")])
    for numerator, denominator in re.findall(r"(\d+)\s*/\s*(\d+)", text):
        if int(denominator):
            values.add(Fraction(int(numerator), int(denominator)))
    for whole, numerator, denominator in _MIXED.findall(text):
        if int(denominator):
            values.add(int(whole) + Fraction(int(numerator), int(denominator)))
    for amount, _ in _AND_A_HALF.findall(text):
        base = Fraction(1) if amount.lower() in ("a", "an", "one") else Fraction(amount)
        values.add(base + Fraction(1, 2))
    return values


def _step_facts(step: str, grounded: set[Fraction]) -> dict[str, list[str]]:
    bad: list[str] = []
    ungrounded: list[str] = []
    for claim in claims(step):
        exact, operands = evaluate(claim.left)
        claimed, right_operands = evaluate(claim.right)
        if exact is None or claimed is None or len(operands) < 2:
            continue  # not arithmetic (words, algebra) or a bare restatement such as <<50=50>>
        right_text = _plain_number(claim.right.rstrip().rstrip("%"))
        holds = recomputes(exact, claimed, right_text) if right_text else exact == claimed
        if not holds and claim.right.rstrip().endswith("%") and "%" not in claim.left:
            # "45 + 21 + 28 = 94%" and "3 / 6 = 50%": a percent sign on the result alone is a unit.
            holds = any(recomputes(exact, claimed * factor, right_text or "") for factor in (100, 1))
        if not holds:
            bad.append(f"{claim.left.strip()} = {claim.right.strip()} (recomputes to {float(exact):g})")
        if claim.check_grounding:
            for operand in operands:
                if operand not in grounded and operand not in UNIT_CONSTANTS and str(operand) not in ungrounded:
                    ungrounded.append(str(operand))
        grounded.update(right_operands)
        grounded.update((claimed, exact))
    return {"bad_arithmetic": bad, "ungrounded": ungrounded}


def _supported(answer: Fraction, stated: set[Fraction], question: str) -> bool:
    """The answer is a value the solution stated or computed; a question asking for cents may take
    a dollar amount times 100."""
    if answer in stated:
        return True
    return bool(re.search(r"\bcents?\b", question, re.IGNORECASE)) and answer / 100 in stated


def split_solution(text: str) -> tuple[list[str], str | None]:
    """(reasoning steps, final-answer line or None)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for position in range(len(lines) - 1, -1, -1):
        if _ANSWER_LINE.match(lines[position]):
            return lines[:position] + lines[position + 1 :], lines[position]
    return lines, None


def build_trace_and_facts(problem: PublicProblem, candidate: Candidate, reward: float | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The candidate as trace data plus the recomputed facts the invariants read."""
    steps, answer_line = split_solution(candidate.text)
    grounded = numbers_in(problem.question)
    step_facts: list[dict[str, list[str]]] = []
    stated: set[Fraction] = set()
    for step in steps:
        known = set(grounded)
        step_facts.append(_step_facts(step, grounded))  # adds the step's computed results to `grounded`
        step_numbers = (grounded - known) | numbers_in(_ANNOTATION.sub(" ", step))
        grounded |= step_numbers
        stated |= step_numbers
    answer = extract_answer(candidate.text) if answer_line is not None else None
    if answer_line is not None:
        step_facts.append({"bad_arithmetic": [], "ungrounded": []})
    facts = {
        "steps": step_facts,
        "answer_present": answer is not None,
        "answer_supported": answer is not None and _supported(Fraction(answer), stated, problem.question),
        "grader_addressed": sorted(grader_phrases(candidate.text)),
    }
    return reasoning_trace(TASK_ID, candidate, reward, steps, answer_line), facts


# Verify one GSM8K candidate from the public problem and its own text (never the gold answer).
shield_candidate = GraphShield(GRAPH, "tasks.gsm8k.shield.GRAPH", build_trace_and_facts)
