"""Count the asserts a HumanEval `check(candidate)` evaluates, without changing what they decide.

The test runs in the trusted parent (`runner.py`) on plain values, so its asserts keep their own
meaning; the rewrite only puts `__case__(<site>)` before each `assert` inside `check`, so the
parent knows how many cases ran and which assert decided. The number a correct solution reaches
is measured once per problem with the canonical solution (`profile.py`); a run that evaluates
fewer fails, which catches the tests whose asserts all sit in loops over the candidate's output
(HumanEval/32, /38, /50 have no straight-line assert at all).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from types import CodeType


@dataclass(frozen=True)
class Site:
    """One assert of the hidden test: its index and source line."""

    index: int
    line: int


@dataclass(frozen=True)
class InstrumentedTest:
    """The compiled, rewritten test module and the parent's description of each assert."""

    code: CodeType
    sites: tuple[Site, ...]


class _Rewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.sites: list[Site] = []

    def visit_Assert(self, node: ast.Assert) -> list[ast.stmt]:
        site = Site(len(self.sites), node.lineno)
        self.sites.append(site)
        call = ast.Call(func=ast.Name("__case__", ast.Load()), args=[ast.Constant(site.index)], keywords=[])
        return [ast.copy_location(ast.Expr(call), node), node]


@functools.lru_cache(maxsize=1024)
def instrument(test_source: str) -> InstrumentedTest:
    """Instrument the `check` function of a HumanEval test module; ValueError if there is none."""
    module = ast.parse(test_source)
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if not checks:
        raise ValueError("hidden test defines no check(candidate) function")
    rewriter = _Rewriter()
    checks[-1].body = [statement for node in checks[-1].body for statement in _as_list(rewriter.visit(node))]
    if not rewriter.sites:
        raise ValueError("hidden test's check() contains no assert")
    code = compile(ast.fix_missing_locations(module), "<hidden test>", "exec")
    return InstrumentedTest(code, tuple(rewriter.sites))


def _as_list(node: ast.AST | list[ast.stmt]) -> list[ast.stmt]:
    return node if isinstance(node, list) else [node]  # type: ignore[list-item]
