"""The `calculate` tool's arithmetic, evaluated without `eval`.

The expression comes from the agent, so it is parsed with `ast` and only numbers, `+ - * / // **`,
unary signs and parentheses are evaluated, with caps on length and exponents so a hostile expression
cannot exhaust the replay. The result is formatted as the tool reports it: the value as a float
rounded to two decimals (`"255.0"`, `"33.33"`).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable

ALLOWED_CHARACTERS = frozenset("0123456789+-*/(). ")
MAX_LENGTH = 500
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e300

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class ArithmeticRefused(ValueError):
    """The expression is outside the arithmetic the tool evaluates; the message is the tool's error."""


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > MAX_MAGNITUDE):
            raise ArithmeticRefused("exponent too large")
        value = _BINARY[type(node.op)](left, right)
        if isinstance(value, complex) or abs(value) > MAX_MAGNITUDE:
            raise ArithmeticRefused("result out of range")
        return value
    raise ArithmeticRefused("invalid syntax")


def calculate(expression: str) -> str:
    """The tool's output for `expression`: the rounded value, or `Error: ...`."""
    if len(expression) > MAX_LENGTH:
        return "Error: expression too long"
    if not set(expression) <= ALLOWED_CHARACTERS:
        return "Error: invalid characters in expression"
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        return str(round(float(_evaluate(tree.body)), 2))
    except SyntaxError:
        return "Error: invalid syntax"
    except ZeroDivisionError:
        return "Error: division by zero"
    except RecursionError:
        return "Error: expression nested too deeply"
    except (ArithmeticRefused, OverflowError) as error:
        return f"Error: {error}"
