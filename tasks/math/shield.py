"""The MATH shield: a candidate's LaTeX becomes a trace, checked against a graph and recomputed facts.

Each paragraph (text between blank lines, `[asy]` figures removed) that says more than the final
boxed answer is one reasoning step (a `reasoning_step` event); the final answer (`extract_answer`:
the last `\\boxed{}` or a marked "The answer is ..." line) is a `final_answer` event. The graph is
`INIT -> STEP+ -> ANSWER`. The facts are what the shield recomputes from the text, never the gold
answer (anchors are sealed): the equations are checked, not the answer's correctness.

Invariants (CEL, in `GRAPH`):
- every equation chain `a = b = c` in the math of a step holds where both sides of an `=` are closed
  forms: numbers, `\\frac`, `\\sqrt`, `\\pi`, powers, `\\cdot`/`\\times`/`\\div` (`equation_sides`).
  Conservative on purpose: a side with a variable, a unit, a degree or percent sign, a subscript, a
  mixed number, a command SymPy is not given (`\\binom`, `\\sin`, `\\dots`), or a row in a
  modular context (and the rows continuing it) is not checked. Environments are parsed, not skipped
  (`environment_rows`): `aligned`/`align*`/`gather`... rows split at `\\\\`, `cases` rows at `\\\\`
  and `&`; any other environment (a matrix) is one unread token. A link holds only when the two
  sides are exactly equal (rationals and surds exactly, no relative tolerance: `2^{50}+1 = 2^{50}`
  fails), or one side is a decimal within half a unit of its own last place of the other
  (`\\frac13 = 0.33` holds; `9 = 8.9`, `\\frac14 = 0.24`, `\\frac23 = 0.66` fail);
- every step was checked within the candidate's `CHECK_BUDGET_S` (`checked`): a step the budget
  left unchecked is a violation, never a silent pass;
- an answer is present (otherwise the path never reaches ANSWER) and parses (`answer_parses`);
- no text addresses the grader: the GSM8K shield's detector (`tasks.gsm8k.shield.grader_phrases`),
  except phrases that also occur in the problem statement (a problem about a contest's judges).

Hostile input cannot hang or crash the shield: only the first `tasks.visible.MAX_TEXT_CHARS` characters
are read; math is found by one left-to-right scan (unclosed `\\[` openers cost linear time, not one
scan each); a side longer than `4 * MAX_SIDE_CHARS` is dropped before any rewrite, the LaTeX
rewriter is iterative (1,200 nested `\\frac` cannot overflow the stack), sides are parsed
unevaluated and rejected when any exponent exceeds `MAX_EXPONENT` in size before anything is
evaluated numerically.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from tokenize import TokenError
from typing import Any

import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    rationalize,
    standard_transformations,
)

from harness.core import Candidate, PublicProblem
from tasks.gsm8k.shield import grader_phrases
from tasks.math.extract import extract_answer, last_boxed
from tasks.math.normalise import latex_to_sympy_text
from tasks.task_shield import GraphShield, reasoning_graph, reasoning_trace
from tasks.visible import MAX_TEXT_CHARS, drop_regions, normalise_characters

TASK_ID = "math"
GRAPH = reasoning_graph(
    TASK_ID,
    "A competition-math solution: one or more reasoning steps, then a boxed final answer.",
    step_invariants=["size(steps[event.index].false_equations) == 0", "steps[event.index].checked == true"],
    answer_invariants=["answer_parses == true"],
    answer_facts=["answer_parses"],
)

CHECK_BUDGET_S = 10.0  # equation checking per candidate; a step left unchecked is a violation
MAX_SIDE_CHARS = 160  # a side longer than this (after normalising) is not checked
MAX_EXPONENT = 1000  # |exponent| above this: not checked (10^(10^10) must not be computed)
MAX_ANSWER_CHARS = 1000
_DIGITS = 30
# `rationalize`: a decimal is the exact number it writes (`2.7 - 2.5` is exactly `0.2`), so links compare exactly.
_TRANSFORMS = standard_transformations + (implicit_multiplication_application, convert_xor, rationalize)
_FUNCTIONS = {"sqrt": sympy.sqrt, "root": sympy.root, "pi": sympy.pi}
_IDENTIFIERS = re.compile(r"[A-Za-z_]+")
_SAFE = re.compile(r"[0-9+\-*/().,\s]*")  # commas only from root(x, n): LaTeX commas are skipped

_OPENER = re.compile(r"\$|\\\[|\\\(|\\begin\{(align|aligned|equation|eqnarray|gather|multline)\*?\}")
# Relations that end an equality link: only sides joined by a plain `=` are compared.
_RELATION = re.compile(
    r"(\\(?:approx|neq|ne|leq?|geq?|lt|gt|equiv|sim|simeq|cong|propto|implies|Rightarrow|Longrightarrow|iff|to|rightarrow"
    r"|Leftrightarrow|quad|qquad|text\{\s*(?:and|or|if|so|since|then)\s*\})(?![A-Za-z])|:=|<|>|;|=)"
)
# Contexts in which `=` does not mean numeric equality of closed forms.
_SKIP_ROW = re.compile(
    r"\\(?:pmod|bmod|mod|equiv|stackrel|overset|underset|cases|substack)(?![A-Za-z])|\?|\bmod\b", re.IGNORECASE
)
# Environments whose rows are equations: their markers go, rows split at `\\` (`&` is alignment).
_ROW_ENVIRONMENTS = frozenset(
    "align align* aligned alignat alignat* alignedat equation equation* gather gather* gathered split multline multline* eqnarray eqnarray* flalign flalign*".split()
)
# Environments of cases: `&` separates a value from its condition, so it ends the row too.
_CASES_ENVIRONMENTS = frozenset("cases cases* dcases dcases* rcases".split())
_ENVIRONMENT = re.compile(r"\\(begin|end)\s*\{([A-Za-z]+\*?)\}(?:\{[^{}]{0,40}\})?")
_UNREAD = " \\unread "  # stands for an environment that is not read (a matrix): its side is not checked
# A side that cannot be read as a closed form here: units and degrees, percent, subscripts (bases,
# indices), mixed numbers (`2\frac12` is 5/2, not 2 * 1/2), digits split by spaces (`2 500`),
# factorials, tuples, vectors, floor/ceiling.
_SKIP_SIDE = re.compile(
    r"\\circ|%|_|\d\s*\\[dt]?frac|\d\s+\d|!|,|\\[lr]?vert|\\[lr]floor|\\[lr]ceil|\||\\overline|\\text|\\mathrm|\\operatorname"
)
_DROP_COMMANDS = ("\\left", "\\right", "\\displaystyle", "\\!", "\\,", "\\;", "\\:", "\\ ", "&")


@dataclass(frozen=True)
class Link:
    """One `left = right` of an equation chain, as written in the step."""

    left: str
    right: str


class _Closers:
    """`str.find` for closing delimiters, remembering where one is known to be absent, so a text of
    many unclosed openers (`\\[` 50,000 times) costs linear time, not one scan per opener."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._absent_from: dict[str, int] = {}

    def find(self, closer: str, start: int, *, unescaped: bool = False) -> int:
        if start >= self._absent_from.get(closer, len(self._text) + 1):
            return -1
        position = self._text.find(closer, start)
        while unescaped and position > 0 and self._text[position - 1] == "\\":
            position = self._text.find(closer, position + 1)
        if position < 0:
            self._absent_from[closer] = start
        return position


def _without_figures(text: str) -> str:
    return drop_regions(text, "[asy]", "[/asy]", unclosed_hides=False)


def math_segments(text: str) -> list[str]:
    """The math-mode parts of `text` ($...$, $$...$$, \\[...\\], \\(...\\), align environments...),
    `[asy]` removed; an opener never closed is text. One left-to-right scan (see `_Closers`)."""
    text = _without_figures(text)
    closers = _Closers(text)
    segments = []
    position = 0
    while (opener := _OPENER.search(text, position)) is not None:
        start, token = opener.start(), opener.group(0)
        position = start + 1
        if token == "$":
            if start > 0 and text[start - 1] == "\\":
                continue
            if text.startswith("$$", start) and (end := closers.find("$$", start + 3)) >= 0:
                segments.append(text[start + 2 : end])
                position = end + 2
            elif (end := closers.find("$", start + 2, unescaped=True)) >= 0:
                segments.append(text[start + 1 : end])
                position = end + 1
            continue
        if token in ("\\[", "\\("):
            closer = "\\]" if token == "\\[" else "\\)"
            if (end := closers.find(closer, start + 3)) >= 0:
                segments.append(text[start + 2 : end])
                position = end + 2
            continue
        ends = [found for name in (opener.group(1), opener.group(1) + "*") if (found := closers.find(f"\\end{{{name}}}", opener.end())) >= 0]
        if ends:
            end = min(ends)
            segments.append(text[opener.end() : end])
            position = text.index("}", end) + 1
    return segments


def _unbox(text: str) -> str:
    """`\\boxed{x}` -> `x`, so `= \\boxed{850}` is a link like any other. One pass with a stack of
    which open braces belong to a box."""
    out: list[str] = []
    stack: list[bool] = []
    position = 0
    while position < len(text):
        if text.startswith("\\boxed{", position):
            stack.append(True)
            position += 7
            continue
        char = text[position]
        if char == "{":
            stack.append(False)
        elif char == "}" and stack:
            if stack.pop():
                position += 1
                continue
        out.append(char)
        position += 1
    return "".join(out)


def _split_top_level(text: str) -> list[tuple[str, str]]:
    """(relation before the part, part) for relations outside braces; the first relation is ''."""
    parts: list[tuple[str, str]] = []
    depth, start, relation = 0, 0, ""
    position = 0
    while position < len(text):
        char = text[position]
        if char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        elif depth == 0:
            match = _RELATION.match(text, position)
            if match:
                parts.append((relation, text[start:position]))
                relation, start = match.group(0), match.end()
                position = match.end()
                continue
        position += 1
    parts.append((relation, text[start:]))
    return parts


def environment_rows(segment: str) -> str:
    """`segment` with its environments parsed: row environments (`aligned`, `align*`...) lose their
    markers; in `cases` every `&` ends a row like `\\\\`; any other environment (a matrix, an
    array) becomes one unread token, so the sides touching it are not checked, the rest is. One
    forward pass over the markers with a stack."""
    out: list[str] = []
    stack: list[str] = []  # open environments
    position = 0
    for marker in _ENVIRONMENT.finditer(segment):
        hidden = any(name not in _ROW_ENVIRONMENTS and name not in _CASES_ENVIRONMENTS for name in stack)
        if not hidden:
            piece = segment[position : marker.start()]
            out.append(piece.replace("&", "\\\\") if stack and stack[-1] in _CASES_ENVIRONMENTS else piece)
        position = marker.end()
        name = marker.group(2)
        if marker.group(1) == "begin":
            if not hidden and name not in _ROW_ENVIRONMENTS and name not in _CASES_ENVIRONMENTS:
                out.append(_UNREAD)
            stack.append(name)
        elif stack and stack[-1] == name:
            stack.pop()
        out.append(" ")
    if not any(name not in _ROW_ENVIRONMENTS and name not in _CASES_ENVIRONMENTS for name in stack):
        out.append(segment[position:])
    return "".join(out)


def equation_links(segment: str) -> list[Link]:
    """Adjacent `=`-joined sides of every chain in one math segment, environments parsed
    (`environment_rows`). Rows that start with a relation (`&= 12`) continue the previous row's
    chain. A row in a modular or otherwise non-numeric context (`\\pmod`, `\\equiv`, `?`...) is not
    a chain, nor are the rows that continue it."""
    links: list[Link] = []
    previous: str | None = None
    skipping = False
    for row in re.split(r"\\\\(?:\[[^\]]{0,20}\])?", _unbox(environment_rows(segment))):
        parts = _split_top_level(row)
        continues = parts[0][1].strip() == "" and len(parts) > 1
        skipping = bool(_SKIP_ROW.search(row)) or (skipping and continues)
        if skipping:
            previous = None
            continue
        if continues and previous is not None:
            parts[0] = ("", previous)  # `&= 12` continues the chain above
        for (_, left), (relation, right) in zip(parts, parts[1:]):
            if relation == "=" and left.strip() and right.strip():
                links.append(Link(left.strip(), right.strip()))
        previous = parts[-1][1] if parts[-1][1].strip() else previous
    return links


def _decimals(side: str) -> int | None:
    """Decimal places of a side that is a plain decimal number (`3.14`, `-0.5`), else None."""
    match = re.fullmatch(r"\s*-?\d*\.(\d+)\s*", side)
    return len(match.group(1)) if match else None


def _bounded(expression: sympy.Basic) -> bool:
    """Every exponent is a finite number no larger than MAX_EXPONENT (checked inside out)."""
    for node in sympy.preorder_traversal(expression):
        if isinstance(node, sympy.Pow):
            exponent = node.exp
            if not _bounded(exponent):
                return False
            value = exponent.evalf(15)
            if not value.is_number or not value.is_finite or abs(value) > MAX_EXPONENT:
                return False
    return True


@lru_cache(maxsize=4096)
def closed_form(latex: str) -> sympy.Basic | None:
    """The side as an unevaluated SymPy number with no free symbols, or None when it is not one."""
    if len(latex) > 4 * MAX_SIDE_CHARS or _SKIP_SIDE.search(latex):
        return None  # bounded before any rewrite or parse
    text = latex.replace("\\div", "/")
    for command in _DROP_COMMANDS:
        text = text.replace(command, " ")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = latex_to_sympy_text(re.sub(r"\\frac\s*(\d)\s*(\d)", r"\\frac{\1}{\2}", text))  # `\frac 79` is 7/9
    text = text.strip().rstrip(".").strip()
    if not text or len(text) > MAX_SIDE_CHARS or "\\" in text:
        return None
    names = set(_IDENTIFIERS.findall(text))
    if names - set(_FUNCTIONS) or not _SAFE.fullmatch(_IDENTIFIERS.sub("", text)):
        return None
    try:
        expression = parse_expr(text, local_dict=dict(_FUNCTIONS), transformations=_TRANSFORMS, evaluate=False)
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError, TokenError, sympy.SympifyError, RecursionError):
        return None
    if not isinstance(expression, sympy.Expr) or expression.free_symbols:
        return None
    if not all(isinstance(node, sympy.Expr) for node in sympy.preorder_traversal(expression)):
        return None  # a tuple or relation hiding inside brackets
    return expression if _bounded(expression) else None


def _value(expression: sympy.Basic) -> sympy.Basic | None:
    try:
        value = sympy.N(expression, _DIGITS)
    except (ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):
        return None
    return value if value.is_number and value.is_finite else None


def link_holds(link: Link) -> bool | None:
    """True/False when both sides are closed forms with finite values; None when not checkable.
    Exact: the two sides must be equal as numbers (rationals and surds compared exactly, no relative
    tolerance), or one side is a decimal within half a unit of its own last place of the other."""
    left, right = closed_form(link.left), closed_form(link.right)
    if left is None or right is None or _value(left) is None or _value(right) is None:
        return None
    equal = _equal(left, right)
    if equal is True:
        return True
    for decimal_side, other in ((link.left, right), (link.right, left)):
        written = decimal_side.strip().rstrip(".").strip()
        places = _decimals(written)
        if places is not None and _rounds_to(other, sympy.Rational(written.replace(" ", "")), places):
            return True
    return equal


def _difference(left: sympy.Basic, right: sympy.Basic) -> sympy.Basic | None:
    try:
        return (left.doit() - right.doit()).doit()
    except (ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):
        return None


def _equal(left: sympy.Basic, right: sympy.Basic) -> bool | None:
    """Exact equality: a rational difference is compared exactly; an irrational one is nonzero
    when it evaluates (50 digits, adaptive) to a nonzero number, zero when SymPy simplifies it to
    0; None when neither is shown."""
    difference = _difference(left, right)
    if difference is None:
        return None
    if difference.is_Rational:
        return bool(difference == 0)
    value = _value_at(difference, 50)
    if value is not None and value != 0 and abs(value) > sympy.Float(10, 50) ** -40:
        return False
    try:
        return True if sympy.simplify(difference) == 0 else None
    except (ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):
        return None


def _value_at(expression: sympy.Basic, digits: int) -> sympy.Basic | None:
    try:
        value = sympy.N(expression, digits)
    except (ArithmeticError, TypeError, ValueError, AttributeError, RecursionError):
        return None
    return value if value.is_number and value.is_finite else None


def _rounds_to(exact: sympy.Basic, written: sympy.Rational, places: int) -> bool:
    """`written` (a decimal with `places` places) is within half a unit of its last place of
    `exact`: compared exactly for a rational `exact`, at 50 digits otherwise (an irrational is never
    exactly half way)."""
    half = sympy.Rational(1, 2) * sympy.Rational(10) ** -places
    difference = _difference(exact, written)
    if difference is None:
        return False
    if difference.is_Rational:
        return bool(abs(difference) <= half)
    value = _value_at(difference, 50)
    return value is not None and bool(abs(value) <= half)


def false_equations(step: str, deadline: float | None = None) -> list[str] | None:
    """The links of `step`'s equation chains that SymPy shows to be false; None when `deadline`
    (a `time.monotonic()` value) passed before every link was checked."""
    found = []
    for segment in math_segments(step):
        for link in equation_links(segment):
            if deadline is not None and time.monotonic() > deadline:
                return None
            if link_holds(link) is False:
                found.append(f"{link.left} = {link.right}")
    return found


def split_steps(text: str) -> list[str]:
    """Paragraphs that say more than the final boxed answer (figures removed)."""
    steps = []
    for paragraph in re.split(r"\n\s*\n", _without_figures(text)):
        rest = paragraph
        boxed = last_boxed(paragraph)
        if boxed is not None:
            rest = rest.replace(boxed, "").replace("\\boxed", "").replace("\\fbox", "")
        if re.search(r"[A-Za-z0-9]", re.sub(r"(?i)final answer|the answer is", "", rest)):
            steps.append(paragraph.strip())
    return steps


def answer_parses(answer: str | None) -> bool:
    """A final answer is readable: non-empty, bounded, balanced braces, and some content."""
    if answer is None or not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
        return False
    depth = 0
    for char in answer:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0 and re.search(r"[A-Za-z0-9]|\\[A-Za-z]", answer) is not None


def grader_addressed(text: str, question: str) -> list[str]:
    """Phrases addressing a grader, except those the problem itself uses."""
    return sorted(grader_phrases(text) - grader_phrases(question))


def build_trace_and_facts(
    problem: PublicProblem, candidate: Candidate, reward: float | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The candidate as trace data plus the recomputed facts the invariants read."""
    text = normalise_characters(candidate.text[:MAX_TEXT_CHARS])  # `5 – 3 = 8` is checked as `5 - 3 = 8`
    deadline = time.monotonic() + CHECK_BUDGET_S
    texts = split_steps(text)
    steps: list[dict[str, Any]] = []
    for step in texts:
        found = false_equations(step, deadline)
        steps.append({"false_equations": found or [], "checked": found is not None})
    answer = extract_answer(text)
    if answer is not None:
        steps.append({"false_equations": [], "checked": True})
    facts = {
        "steps": steps,
        "answer_parses": answer_parses(answer),
        "grader_addressed": grader_addressed(text, problem.question),
    }
    return reasoning_trace(TASK_ID, candidate, reward, texts, answer), facts


# Verify one MATH candidate from the public problem and its own text (never the gold answer).
shield_candidate = GraphShield(GRAPH, "tasks.math.shield.GRAPH", build_trace_and_facts)
