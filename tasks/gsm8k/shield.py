"""The GSM8K shield: a candidate's text becomes a trace, checked against a graph and recomputed facts.

Each non-empty line before the final-answer line is one reasoning step (a `reasoning_step` event;
a line that ends with `=` or an operator, or is followed by one that starts with `=` or an operator,
joins it); the answer line is a `final_answer` event. The graph is `INIT -> STEP+ -> ANSWER`. The
facts are what the shield recomputes from the text and the public problem, never the gold answer
(anchors are sealed): the arithmetic is checked, not the answer's correctness. Numbers are read by
`tasks.gsm8k.numbers`, the grammar the anchor reads the final answer with; claims by
`tasks.gsm8k.claims`. Only the first MAX_TEXT_CHARS characters are read, in linear time.

Invariants (CEL, in `GRAPH`):
- every arithmetic claim recomputes: `<<a*b=c>>` annotations and every `=` link of the prose's
  arithmetic (`9 * 2 = 18 = 20` is two claims; `18 = 20` alone is one), evaluated exactly with
  `fractions.Fraction`. Rounding allowance: a claimed result written with d decimals passes when it
  equals the exact value rounded (half up) or truncated to d decimals, because GSM8K solutions round
  money and counts (`10/3=3.33`, `7/2=3` people);
  the prose value right after an annotation must equal its result (`<<16-3-4=9>>10` is false); a
  result written `v%` is the ratio v/100, or v itself only where the left side is percentage points
  (no division, or a factor 100);
- no claim is unverifiable: an operator-like symbol or word between numbers that the evaluator
  cannot evaluate (`9 @ 2`, `9 mod 2`), a digit run too long to be a number, a zero divisor or a
  power past the caps makes its link `unverifiable`;
- every operand is grounded: it appears in the problem (digits, number words such as "three",
  "twice", "half", "dozen", and `n%` also as `n/100`), in an earlier step's text or an earlier
  result, or is a unit constant: integers 0-12, 15, 16, 20, 24, 28, 30, 31, 36, 48, 52, 60, 100, 360,
  365, 1000, and 0.5, 0.25, 0.1, 0.01;
- an answer is present, it equals a value the solution computed or stated, and the text is within
  MAX_TEXT_CHARS (`within_length_cap`);
- no text addresses the grader (instructions to a judge or evaluator, "ignore previous
  instructions", claims that the answer was already verified, requests for full marks).
"""

from __future__ import annotations

import dataclasses
import math
import re
from fractions import Fraction
from typing import Any

from harness.core import Candidate, PublicProblem
from tasks.gsm8k.answers import extract_answer
from tasks.gsm8k.claims import Claim, claims, evaluate
from tasks.gsm8k.numbers import MAX_DECIMALS, MAX_TEXT_CHARS, NUMBER, NUMBER_PATTERN, SCALES, normalise, value
from tasks.task_shield import GraphShield, reasoning_graph, reasoning_trace

__all__ = ["GRAPH", "Claim", "claims", "evaluate", "numbers_in", "recomputes", "shield_candidate", "step_claims"]

TASK_ID = "gsm8k"
GRAPH = reasoning_graph(
    TASK_ID,
    "A GSM8K solution: one or more reasoning steps, then the final answer.",
    step_invariants=[
        "size(steps[event.index].bad_arithmetic) == 0",
        "size(steps[event.index].ungrounded) == 0",
        "size(steps[event.index].unverifiable) == 0",
    ],
    answer_invariants=["answer_present == true", "answer_supported == true", "within_length_cap == true"],
    answer_facts=["answer_present", "answer_supported", "within_length_cap"],
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
_PROSE_AFTER_ANNOTATION = re.compile(rf"\s*[$€£]?\s*((?<![\w.])(?:{NUMBER_PATTERN})(?:\s*/\s*(?:{NUMBER_PATTERN}))?\s*%?)")
_NUMBER = re.compile(rf"(?<![\w.])({NUMBER_PATTERN})(\s*%|\s*k\b|\s*(?:cents?\b|¢)|\s+(?:thousand|million|billion)\b)?", re.IGNORECASE)
_DIGITS = r"\d{1,30}(?!\d)"
_FRACTION = re.compile(rf"(?<![\d.])({_DIGITS})\s*/\s*({_DIGITS})")
_MIXED = re.compile(rf"(?<![\w.])({_DIGITS})\s+({_DIGITS})\s*/\s*({_DIGITS})")
_AND_A_HALF = re.compile(rf"(?<![\w.])({NUMBER_PATTERN}|an?|one)\s+([a-z]+\s+)?and a half", re.IGNORECASE)
# A line that ends with `=` or an operator, or a next line that starts with one, continues the claim.
_CONTINUES = re.compile(r"[=+*/^]\s*$")
_CONTINUATION = re.compile(r"^\s*[=+*/^]")
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


def _fraction(text: str) -> Fraction | None:
    match = NUMBER.search(text.replace("$", " ").replace("€", " ").replace("£", " "))
    return value(match.group(0)) if match is not None else None


def recomputes(exact: Fraction, claimed: Fraction, claimed_text: str) -> bool:
    """Exact equality, or the exact value rounded (half up) or truncated to the decimals the claim
    was written with."""
    if exact == claimed:
        return True
    decimals = min(len(claimed_text.split(".", 1)[1]), MAX_DECIMALS) if "." in claimed_text else 0
    scale = 10**decimals
    rounded = math.floor(exact * scale + Fraction(1, 2)) / Fraction(scale)
    truncated = math.trunc(exact * scale) / Fraction(scale)
    return claimed in (rounded, truncated)


def _plain_number(text: str) -> str | None:
    cleaned = re.sub(r"(?<=\d)[, ](?=\d{3}(?!\d))", "", text.strip()).lstrip("$€£").strip()
    return cleaned if re.fullmatch(r"-?(?:\d{1,30}(?:\.\d+)?|\.\d+)", cleaned) else None


def _shown(number: Fraction) -> str:
    return f"{float(number):g}" if abs(number) < 10**300 else str(round(number))


def step_claims(step: str) -> list[Claim]:
    """Arithmetic claims in one step, in text order: `<<a=b>>` annotations, the value the prose
    states right after one (`<<16-3-4=9>>10` claims 9 = 10), and the runs of the prose (annotations
    blanked out, so a prose run never runs into one: "364 / 4 = <<3/4*364=273>>273" is checked
    through its annotation, and the prose's sloppy "364 / 4" is not read as "= 273")."""
    found: list[Claim] = []
    for match in _ANNOTATION.finditer(step):
        found += [dataclasses.replace(claim, position=claim.position + match.start()) for claim in claims(f"{match.group(1)}={match.group(2)}")]
        stated = _PROSE_AFTER_ANNOTATION.match(normalise(step[match.end() : match.end() + 80]))
        if stated is not None:
            found += [dataclasses.replace(claim, position=match.end(), check_grounding=False)
                      for claim in claims(f"{match.group(2)}={stated.group(1)}")]
    prose = _ANNOTATION.sub(lambda match: "\0" * len(match.group(0)), step)
    return sorted(found + claims(prose), key=lambda claim: claim.position)


def numbers_in(text: str) -> set[Fraction]:
    """Numbers a reader sees in `text`: digits (n% also as n/100) and number words."""
    text = normalise(text)
    values: set[Fraction] = set()
    for match in _NUMBER.finditer(text):
        number = value(match.group(1))
        values.add(number)
        suffix = (match.group(2) or "").strip().lower()
        if suffix == "%":  # 20% is also read as 0.2, as the factors 1.2 and 0.8, and as 120 and 80 (%)
            values.update((number / 100, 1 + number / 100, 1 - number / 100, 100 + number, 100 - number))
        elif suffix == "k":
            values.add(number * 1000)
        elif suffix in SCALES:
            values.add(number * SCALES[suffix])
        elif suffix:  # cents
            values.add(number / 100)
    lowered = text.lower()
    for word in re.findall(r"[a-z]+", lowered):
        if word in _WORDS:
            values.add(Fraction(_WORDS[word]))
        values.update(_MULTI_WORDS.get(word, ()))
    for tens, units in re.findall(r"\b([a-z]+ty)-([a-z]+)\b", lowered):  # "forty-two"
        if tens in _WORDS and units in _WORDS and _WORDS[units] < 10:
            values.add(Fraction(_WORDS[tens]) + _WORDS[units])
    for amount, unit in _QUANTITY_UNIT.findall(text):  # "two weeks" is also 14 days
        base = _fraction(amount) if amount[0].isdigit() else Fraction(_WORDS.get(amount.lower(), 0))
        if base:
            values.update(base * factor for factor in _UNIT_FACTORS[unit.lower().rstrip("s")])
    for numerator, denominator in _FRACTION.findall(text):
        if int(denominator):
            values.add(Fraction(int(numerator), int(denominator)))
    for whole, numerator, denominator in _MIXED.findall(text):
        if int(denominator):
            values.add(int(whole) + Fraction(int(numerator), int(denominator)))
    for amount, _ in _AND_A_HALF.findall(text):
        base = Fraction(1) if amount.lower() in ("a", "an", "one") else value(amount)
        values.add(base + Fraction(1, 2))
    return values


def _step_facts(step: str, grounded: set[Fraction]) -> dict[str, list[str]]:
    bad: list[str] = []
    ungrounded: list[str] = []
    unverifiable: list[str] = []
    for claim in step_claims(step):
        link = f"{claim.left.strip()[:200]} = {claim.right.strip()[:200]}"
        if claim.unverifiable:
            unverifiable.append(link)
            continue
        left, right = claim.evaluate()
        exact, operands, claimed, right_operands = left.value, left.operands, right.value, right.operands
        if left.refused or right.refused:
            unverifiable.append(link)  # a zero divisor, a power past the evaluator's caps
            continue
        if exact is None or claimed is None:
            continue  # not arithmetic (words, algebra, an operator left dangling)
        right_text = _plain_number(claim.right.rstrip().rstrip("%"))
        holds = recomputes(exact, claimed, right_text) if right_text else exact == claimed
        if not holds and claim.right.rstrip().endswith("%") and "%" not in claim.left:
            # "1 / 3 = 33.33%": a ratio as a rounded percent; "45 + 21 + 28 = 94%", "9 / 16 * 100 =
            # 56.25%": percentage points, the sign a unit (only there: `9 / 16 = 0.5625%` is false).
            holds = recomputes(exact * 100, claimed * 100, right_text or "") or (_in_points(claim) and recomputes(exact, claimed * 100, right_text or ""))
        if not holds:
            bad.append(f"{link} (recomputes to {_shown(exact)})")
        if claim.check_grounding and len(operands) >= 2:
            for operand in operands:
                if operand not in grounded and operand not in UNIT_CONSTANTS and str(operand) not in ungrounded:
                    ungrounded.append(str(operand))
        grounded.update(right_operands)
        grounded.update((claimed, exact))
    return {"bad_arithmetic": bad, "ungrounded": ungrounded, "unverifiable": unverifiable}


def _in_points(claim: Claim) -> bool:
    """A left side computes percentage points, not a ratio, when it divides nothing or multiplies
    by 100: `9 / 16 = 0.5625%` is a ratio written as the wrong percent (it is 56.25%)."""
    tokens = claim.left_tokens
    return not any(token.text == "/" for token in tokens) or any(token.kind == "num" and value(token.text) == 100 for token in tokens)


def _supported(answer: Fraction, stated: set[Fraction], question: str) -> bool:
    """The answer is a value the solution stated or computed; a question asking for cents may take
    a dollar amount times 100."""
    if answer in stated:
        return True
    return bool(re.search(r"\bcents?\b", question, re.IGNORECASE)) and answer / 100 in stated


def split_solution(text: str) -> tuple[list[str], str | None]:
    """(reasoning steps, final-answer line or None). A line that ends with `=` or an operator, or is
    followed by a line that starts with one, is one step with that line: a claim split over two lines
    is read whole."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    answer = None
    for position in range(len(lines) - 1, -1, -1):
        if _ANSWER_LINE.match(lines[position]):
            answer = lines.pop(position)
            break
    steps: list[str] = []
    for line in lines:
        if steps and (_CONTINUES.search(steps[-1]) or _CONTINUATION.match(line)):
            steps[-1] = f"{steps[-1]} {line}"
        else:
            steps.append(line)
    return steps, answer


def build_trace_and_facts(problem: PublicProblem, candidate: Candidate, reward: float | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The candidate as trace data plus the recomputed facts the invariants read. Only the first
    MAX_TEXT_CHARS characters are read; a longer text fails `within_length_cap`."""
    text = candidate.text[:MAX_TEXT_CHARS]
    steps, answer_line = split_solution(text)
    grounded = numbers_in(problem.question)
    step_facts: list[dict[str, list[str]]] = []
    stated: set[Fraction] = set()
    for step in steps:
        known = set(grounded)
        step_facts.append(_step_facts(step, grounded))  # adds the step's computed results to `grounded`
        step_numbers = (grounded - known) | numbers_in(_ANNOTATION.sub(" ", step))
        grounded |= step_numbers
        stated |= step_numbers
    answer = extract_answer(text) if answer_line is not None else None
    if answer_line is not None:
        step_facts.append({"bad_arithmetic": [], "ungrounded": [], "unverifiable": []})
    facts = {
        "steps": step_facts,
        "answer_present": answer is not None,
        "answer_supported": answer is not None and _supported(Fraction(answer), stated, problem.question),
        "within_length_cap": len(candidate.text) <= MAX_TEXT_CHARS,
        "grader_addressed": sorted(grader_phrases(text)),
    }
    return reasoning_trace(TASK_ID, candidate, reward, steps, answer_line), facts


# Verify one GSM8K candidate from the public problem and its own text (never the gold answer).
shield_candidate = GraphShield(GRAPH, "tasks.gsm8k.shield.GRAPH", build_trace_and_facts)
