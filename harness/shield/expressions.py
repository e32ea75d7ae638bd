"""CEL invariants: compile once per graph, evaluate against one trace's variables.

Library choice (measured in `bench/shield.py`, results in `bench/results/shield.json`): we use
`common-expression-language` (import name `cel`, a Rust CEL implementation with Python bindings)
over `cel-python` (`celpy`, pure Python). On the representative invariant set both evaluate `in`,
`size`, maps, lists, string functions and comprehensions correctly, and both reject syntax errors
with a position, but a compiled `cel` program evaluated in about 8 microseconds on the invariant set
while `celpy` needed about 0.9-1.7 milliseconds per evaluation (10/10 correct for both): the
1,000 traces/s target with invariants is out of reach with `celpy`. `cel` also lists the variables an expression reads, which
static analysis and violation reports use.

Converting Python values into CEL values is the expensive part (microseconds per element). The
library converts a variable when it is added to a `cel.Context`, but any `add_variable` discards the
context's CEL environment, and the next evaluation rebuilds it by copying every variable: binding the
current `event` into a context that also holds a facts list of one record per event made each
evaluation pay for the whole list, and a trace of n events cost O(n^2) (a 1,500-call τ-bench trace took
about a minute). So a `Scope` keeps two kinds of variables: a variable's first value goes into the
context (converted once and kept in its cached environment), and a variable bound again with a new
value (`event`, `history`, tool outputs: the per-event ones) is served from then on by the context's
variable resolver, which converts only that value, only when an expression reads it. The context holds
`null` for such a variable, which is also what the resolver's `None` falls through to. The cost of an
evaluation is then the size of what it reads, never that of the facts beside it (`ScopeWork` counts it).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


def _load_cel() -> ModuleType:
    """The `cel` extension module without its package `__init__`, which imports the library's own
    command line (typer, rich, prompt_toolkit: ~0.4 s) that the shield never uses."""
    spec = importlib.util.find_spec("cel")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the shield needs `common-expression-language`: pip install common-expression-language")
    for folder in spec.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            candidate = Path(folder) / f"cel{suffix}"
            if candidate.is_file():
                loader = importlib.machinery.ExtensionFileLoader("cel.cel", str(candidate))
                module_spec = importlib.util.spec_from_file_location("cel.cel", candidate, loader=loader)
                if module_spec is not None:
                    module = importlib.util.module_from_spec(module_spec)
                    loader.exec_module(module)
                    return module
    import cel  # an unusual layout: pay for the full package import

    return cel


cel = _load_cel()

_COMPREHENSION_VAR = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,")
_UNBOUND = "<unbound>"


MAX_SHOWN = 120  # characters of an expression or a parser message quoted in a one-line error
# The CEL library recurses over an expression's syntax: a chain of 16,384 additions compiles and then
# overflows its evaluator's stack (the process dies), 50,000 parentheses panic in its parser; and its
# parser takes time quadratic in a chain's length (2,000 additions: 18 ms, 4,000: 75 ms). Every
# expression (a graph's, an `--llm` proposal, an `extend` patch) is compiled here, so none longer is
# handed to it; the longest shipped invariant has 1,112 characters.
MAX_EXPRESSION_CHARS = 2_048


def shown(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` cut to `limit` characters for a one-line message (a 30,000-character expression is not
    repeated back)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class ExpressionError(ValueError):
    """A CEL expression that does not compile; the message carries the parser's position."""


@dataclass(frozen=True)
class Expression:
    """A compiled CEL expression and the top-level variables it reads."""

    source: str
    program: Any
    variables: tuple[str, ...]


def compile_expression(source: str) -> Expression:
    """Compile `source`; raise `ExpressionError` with the first line of CEL's message (at most
    `MAX_SHOWN` characters: the parser's message can quote the whole expression) on a syntax error,
    and on an expression over `MAX_EXPRESSION_CHARS` before the library sees it."""
    if len(source) > MAX_EXPRESSION_CHARS:
        raise ExpressionError(f"the expression is {len(source):,} characters, more than the {MAX_EXPRESSION_CHARS:,} an expression may have")
    try:
        program = cel.compile(source)
    except ValueError as error:
        detail = str(error).split("\n")
        raise ExpressionError(shown(" ".join(line.strip() for line in detail[:2]))) from None
    comprehension = set(_COMPREHENSION_VAR.findall(source))
    variables = tuple(name for name in program.variables() if name not in comprehension)
    return Expression(source=source, program=program, variables=variables)


def _short(error: Exception) -> str:
    text = str(error).strip().strip("'\"")
    return text.split(". ")[0].split("\n")[0]


@dataclass
class ScopeWork:
    """What a scope had converted into CEL, in JSON nodes (a scalar is 1, a list or map 1 plus its
    items): `rebuilt` for the environments the context rebuilt (each copies every variable it holds),
    `resolved` for the per-event values the resolver served. A model of the library's cost, counted
    so that a test can hold it linear in the trace's length without timing anything."""

    evaluations: int = 0
    rebuilds: int = 0
    rebuilt: int = 0
    resolved: int = 0


_INT64 = (-(2**63), 2**63 - 1)
_SCALARS = (str, float, type(None))


def json_nodes(value: Any) -> tuple[int, str | None]:
    """The number of JSON nodes in `value`, and why CEL cannot hold it faithfully (None when it can).

    A value served by the resolver is converted by the library without raising (an integer past 64
    bits becomes a double, an object it cannot convert becomes null), so the scope refuses those
    itself, as `add_variable` would."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and not _INT64[0] <= item <= _INT64[1]:
            return count, "an integer does not fit CEL's 64 bits"
        elif not isinstance(item, (_SCALARS, int)):
            return count, f"a {type(item).__name__} is not a JSON value"
    return count, None


class Scope:
    """The variables of one trace: first values bound into a `cel.Context`, values that changed
    served by its resolver (see the module docstring for why)."""

    __slots__ = ("_values", "_context", "_stale", "_versions", "_memo", "_in_context", "_volatile", "_sizes", "_unfit", "_rebuild", "work")

    def __init__(self) -> None:
        self._values: dict[str, Any] = {}
        self._context = cel.Context()
        self._stale: set[str] = set()
        self._versions: dict[str, int] = {}
        self._memo: dict[int, tuple[tuple[int, ...], tuple[bool, str | None]]] = {}
        self._in_context: set[str] = set()  # bound by value into the context
        self._volatile: set[str] = set()  # served by the resolver (the context holds null for them)
        self._sizes: dict[str, int] = {}  # JSON nodes of each value, for `work`
        self._unfit: dict[str, str] = {}  # variables whose value CEL cannot hold, and why
        self._rebuild = False  # the context's environment was discarded and is rebuilt on next use
        self.work = ScopeWork()

    def set(self, name: str, value: Any) -> None:
        """Bind `name`; setting the value it already has is free and keeps memoised results valid."""
        if name in self._values and self._values[name] == value:
            return
        self._values[name] = value
        self._stale.add(name)
        self._versions[name] = self._versions.get(name, 0) + 1
        self._sizes[name], reason = json_nodes(value)
        if reason is None:
            self._unfit.pop(name, None)
        else:
            self._unfit[name] = f"variable {name!r}: {reason}"

    def update(self, values: dict[str, Any]) -> None:
        for name, value in values.items():
            self.set(name, value)

    def __contains__(self, name: str) -> bool:
        return name in self._values

    def get(self, name: str) -> Any:
        return self._values.get(name)

    def evaluate(self, expression: Expression) -> tuple[bool, str | None]:
        """(holds, error). A non-boolean result or an evaluation error is `(False, reason)`.

        CEL is pure, so when none of the expression's variables changed since its last evaluation
        in this scope, the last result is returned without running it again."""
        versions = tuple(self._versions.get(name, 0) for name in expression.variables)
        memo = self._memo.get(id(expression))
        if memo is not None and memo[0] == versions:
            return memo[1]
        result = self._run(expression)
        self._memo[id(expression)] = (versions, result)
        return result

    def _resolve(self, name: str) -> Any:
        """The context's variable resolver: the current value of a per-event variable; `None` (fall
        through to the context) for the others."""
        if name in self._volatile:
            self.work.resolved += self._sizes[name]
            return self._values[name]
        return None

    def _add(self, name: str, value: Any) -> None:
        self._context.add_variable(name, value)  # a value CEL cannot hold raises here
        self._rebuild = True

    def _bind_stale(self, expression: Expression) -> None:
        stale = self._stale
        for name in expression.variables:
            if name not in stale:
                continue
            if name in self._in_context:  # bound before with another value: per-event from now on
                self._in_context.discard(name)
                self._volatile.add(name)
                if len(self._volatile) == 1:
                    self._context.set_variable_resolver(self._resolve)
                self._add(name, None)
            elif name not in self._volatile:
                self._add(name, self._values[name])
                self._in_context.add(name)
            stale.discard(name)

    def _run(self, expression: Expression) -> tuple[bool, str | None]:
        for name in expression.variables:
            if name in self._unfit:
                return False, self._unfit[name]
        try:
            self._bind_stale(expression)
            if self._rebuild:
                self._rebuild = False
                self.work.rebuilds += 1
                self.work.rebuilt += sum(self._sizes[name] for name in self._in_context) + len(self._volatile)
            self.work.evaluations += 1
            result = expression.program.execute(self._context)
        # What a bad value or operation raises: division by zero, int64 overflow, index out of range,
        # missing key, no such overload. Each is the trace's `invariant_error`, never a crash.
        except (ArithmeticError, LookupError, TypeError, ValueError, RuntimeError) as error:
            missing = [name for name in expression.variables if name not in self._values]
            if missing:
                return False, f"no source provides variable {missing[0]!r}"
            return False, f"evaluation failed: {_short(error)}"
        if result is True:
            return True, None
        if result is False:
            return False, None
        return False, f"expression returned {result!r}, not a boolean"

    def values_for(self, names: Iterable[str]) -> dict[str, Any]:
        """The current values of `names`, for a violation report."""
        return {name: self._values.get(name, _UNBOUND) for name in names}
