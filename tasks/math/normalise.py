"""The second opinion: a small LaTeX normaliser feeding plain SymPy, independent of Math-Verify.

Why not `sympy.parsing.latex.parse_latex`? It needs `antlr4-python3-runtime==4.11`, while Hydra pins
4.9.*; with 4.9.3 installed it raises ImportError (measured). So this module rewrites the handful of
LaTeX forms that MATH answers use (`\\frac`/`\\dfrac`/`\\tfrac`, `\\sqrt[n]{}`, `\\pi`, degrees,
`\\text{}`, `\\left`/`\\right`, percent, thousands separators, intervals, tuples) into SymPy syntax
and parses it with `parse_expr`.

`parse_expr` evaluates Python, and candidate text is hostile, so the rewritten string must pass a
whitelist first: digits, operators, brackets, commas and only the identifiers in `_NAMES` or single
letters. Anything else is "unparsed" (None), never an equality.
"""

from __future__ import annotations

import re
from tokenize import TokenError

import sympy
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    rationalize,
    standard_transformations,
)

_NAMES = frozenset({"sqrt", "pi", "root", "sin", "cos", "tan", "log", "exp", "oo", "I", "E"})
_SAFE = re.compile(r"[0-9A-Za-z+\-*/^().,\s]*")
# `rationalize`: a decimal is the exact number written (0.333333 is 333333/10^6, never 1/3).
_TRANSFORMS = standard_transformations + (implicit_multiplication_application, convert_xor, rationalize)
# An integer written against a numeric fraction is a mixed number; `3\frac{\sqrt2}{2}` stays a product.
_MIXED = re.compile(r"(?<![\d.^_}])(\d+)\s*\\frac\s*(?:\{\s*(\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))")
MAX_LATEX_CHARS = 2000  # longer input is not parsed at all
MAX_DEPTH = 40  # bracket nesting beyond this is not parsed (SymPy recurses per level)
_DROP = ("\\left", "\\right", "\\!", "\\,", "\\;", "\\:", "\\displaystyle", "$", "\\%", "%", "^\\circ", "^{\\circ}", "\\circ", "\\$")


def _brace_group(text: str, start: int) -> tuple[str, int] | None:
    """(content, index after the group) for a `{...}` group or a single token at `start`."""
    if start >= len(text):
        return None
    if text[start] != "{":
        return text[start], start + 1
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start + 1 : index], index + 1
    return None


def _rewrite_last(text: str, index: int) -> str | None:
    """`text` with the `\\frac`/`\\sqrt` at `index` rewritten, or None when its arguments are malformed.
    Arguments hold no command any more: commands are rewritten from the last one back."""
    if text.startswith("\\frac", index):
        first = _brace_group(text, index + 5)
        second = _brace_group(text, first[1]) if first else None
        if first is None or second is None:
            return None
        return f"{text[:index]}(({first[0]})/({second[0]})){text[second[1]:]}"
    end = index + 5
    degree = "2"
    if text.startswith("[", end):
        close = text.find("]", end)
        if close < 0:
            return None
        degree, end = text[end + 1 : close], close + 1
    radicand = _brace_group(text, end)
    if radicand is None:
        return None
    return f"{text[:index]}root({radicand[0]},{degree}){text[radicand[1]:]}"


def _rewrite_commands(text: str) -> str:
    """Rewrite `\\frac{a}{b}` and `\\sqrt[n]{x}` (nested, braces optional) into SymPy calls.

    Iterative, last command first, so nesting depth costs no stack (1,200 nested `\\frac` are
    fine); the input is bounded by `MAX_LATEX_CHARS`, so the quadratic rebuild stays small. A
    malformed command leaves the text as it is (it then fails the whitelist: unparsed)."""
    while True:
        index = max(text.rfind("\\frac"), text.rfind("\\sqrt"))
        if index < 0:
            return text
        rewritten = _rewrite_last(text, index)
        if rewritten is None:
            return text
        text = rewritten


def _mixed(match: re.Match[str]) -> str:
    whole, numerator, denominator = match.group(1), match.group(2) or match.group(3), match.group(4) or match.group(5)
    return f"({whole}+\\frac{{{numerator}}}{{{denominator}}})"


def latex_to_sympy_text(latex: str) -> str:
    """Normalise a MATH-style LaTeX answer into a SymPy-parsable string (no validation).

    Input longer than `MAX_LATEX_CHARS` becomes "" (unparsed): bound before any parse."""
    if len(latex) > MAX_LATEX_CHARS:
        return ""
    text = latex.strip()
    text = re.sub(r"\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}", r"\1", text)
    for token in _DROP:
        text = text.replace(token, "")
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = _MIXED.sub(_mixed, text)  # 15\frac{39}{40} is 15 + 39/40 (MATH's mixed numbers)
    text = re.sub(r"(\d),(\d{3})(?!\d)", r"\1\2", text)  # 1,000 -> 1000
    text = _rewrite_commands(text)
    text = text.replace("\\pi", " pi ").replace("\\infty", " oo ").replace("\\cdot", "*").replace("\\times", "*")
    text = text.replace("{", "(").replace("}", ")").replace("^", "**")
    return text.strip().rstrip(".")


def _depth(text: str) -> int:
    deepest = depth = 0
    for char in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def _parse_scalar(text: str) -> sympy.Expr | None:
    if not text or not _SAFE.fullmatch(text) or _depth(text) > MAX_DEPTH:
        return None
    for name in re.findall(r"[A-Za-z]+", text):
        if name not in _NAMES and len(name) > 1:
            return None
    try:
        return parse_expr(text, transformations=_TRANSFORMS, evaluate=True)
    except (SyntaxError, TypeError, ValueError, AttributeError, ZeroDivisionError, TokenError, sympy.SympifyError, RecursionError):
        return None


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets, so `root(51,2)` stays one part of a tuple."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def parse_answer(latex: str) -> sympy.Basic | str | None:
    """A SymPy value for the answer: expression, Interval, or Tuple; plain text for word answers.

    Returns None when the normalised text is neither safe SymPy nor plain words.
    """
    text = latex_to_sympy_text(latex)
    text = re.sub(r"^\s*[A-Za-z]\s*=(?!=)", "", text)  # `x = 5` states the value 5
    bracketed = text[:1] in "([" and text[-1:] in ")]" and len(text) > 1
    parts = _split_top_level(text[1:-1] if bracketed else text)
    if len(parts) > 1:
        values = [_parse_scalar(part) for part in parts]
        if any(value is None for value in values):
            return None
        if len(values) == 2 and bracketed and text[:1] + text[-1:] != "()":
            # A half-open or closed pair is an interval; "(a,b)" stays a tuple (MATH uses both).
            return sympy.Interval(values[0], values[1], text[0] == "(", text[-1] == ")")
        return sympy.Tuple(*values)
    value = _parse_scalar(text)
    if value is not None:
        return value
    words = re.sub(r"[^a-z0-9 ]", "", text.lower()).strip()
    return words or None


def _same(left: sympy.Basic, right: sympy.Basic) -> bool:
    """Structural equality first (so oo == oo), then a simplified difference of zero."""
    return bool(left == right) or bool(sympy.simplify(left - right) == 0)


def sympy_equivalent(gold: str, answer: str) -> bool | None:
    """True/False when both sides parse; None when either side could not be parsed safely."""
    left, right = parse_answer(gold), parse_answer(answer)
    if left is None or right is None:
        return None
    if isinstance(left, str) or isinstance(right, str):
        return left == right
    if type(left) is not type(right) and not (isinstance(left, sympy.Expr) and isinstance(right, sympy.Expr)):
        return False
    if isinstance(left, sympy.Tuple):
        return len(left) == len(right) and all(_same(a, b) for a, b in zip(left, right))
    if isinstance(left, sympy.Interval):
        return bool(left == right) or (
            left.left_open == right.left_open
            and left.right_open == right.right_open
            and _same(left.start, right.start)
            and _same(left.end, right.end)
        )
    return _same(left, right)
