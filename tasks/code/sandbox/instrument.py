"""Rewrite a HumanEval `check(candidate)` so each assert reports values instead of deciding.

Every `assert` inside `check` becomes `__case__(site, <thunks>)`: the sandbox evaluates the thunks and
reports their type-tagged values; the trusted parent applies the comparison (`Site` says how).
- `assert X == <literal>`: only X is sent to the sandbox; the expected literal stays in the parent,
  so candidate code cannot read it from the caller's frame (kind "equals_literal").
- `assert A <op> B [<op> C ...]`: every operand is evaluated in the sandbox, the operators are
  applied in the parent on decoded plain values (kind "compare").
- `assert not X`: X is reported, the parent negates it (kind "not").
- anything else: the value is reported and must decode to a truthy plain value (kind "truth").
Asserts directly in `check`'s body must be reported exactly once; asserts under loops or branches
may repeat or not run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Literal

SiteKind = Literal["equals_literal", "compare", "not", "truth"]


@dataclass(frozen=True)
class Site:
    """One assert of the hidden test, as the parent judges it."""

    index: int
    kind: SiteKind
    line: int
    straight_line: bool
    ops: tuple[str, ...] = ()
    expected: Any = None


@dataclass(frozen=True)
class InstrumentedTest:
    """The source to run in the sandbox and the parent's private description of each assert."""

    source: str
    sites: tuple[Site, ...]


def _literal(node: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _thunk(node: ast.expr) -> ast.Lambda:
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.Lambda(args=arguments, body=node)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, check: ast.FunctionDef) -> None:
        self.sites: list[Site] = []
        self._straight = {id(stmt) for stmt in check.body}

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        index = len(self.sites)
        straight = id(node) in self._straight
        test = node.test
        thunks: list[ast.expr]
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and _literal(test.comparators[0])[0]:
            site = Site(index, "equals_literal", node.lineno, straight, ("Eq",), _literal(test.comparators[0])[1])
            thunks = [test.left]
        elif isinstance(test, ast.Compare):
            ops = tuple(type(op).__name__ for op in test.ops)
            site = Site(index, "compare", node.lineno, straight, ops)
            thunks = [test.left, *test.comparators]
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            site, thunks = Site(index, "not", node.lineno, straight), [test.operand]
        else:
            site, thunks = Site(index, "truth", node.lineno, straight), [test]
        self.sites.append(site)
        call = ast.Call(
            func=ast.Name("__case__", ast.Load()),
            args=[ast.Constant(index), *[_thunk(t) for t in thunks]],
            keywords=[],
        )
        return ast.copy_location(ast.Expr(call), node)


def instrument(test_source: str) -> InstrumentedTest:
    """Instrument the `check` function of a HumanEval test module; ValueError if there is none."""
    module = ast.parse(test_source)
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks:
        raise ValueError("hidden test defines no check(candidate) function")
    rewriter = _Rewriter(checks[-1])
    checks[-1].body = [rewriter.visit(stmt) for stmt in checks[-1].body]
    if not rewriter.sites:
        raise ValueError("hidden test's check() contains no assert")
    return InstrumentedTest(ast.unparse(ast.fix_missing_locations(module)), tuple(rewriter.sites))
