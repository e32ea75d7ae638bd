"""Facts: the environment's ground state that invariants are checked against.

A facts provider returns a mapping of variable -> JSON value, read from the environment at the end of
the run, never from the agent. Two providers ship: a JSON facts file (`{"facts": {...}}`, schema
`facts.schema.json`) and a SQLite database read through the named queries the graph declares under
`facts.queries` (a query named `booking_record.exists` fills `booking_record = {"exists": ...}`).
Query shapes: `scalar` (first column of the first row, null when none), `bool`, `json` (a JSON text
such as `json_group_object(...)`, parsed), `row` (a map, null when none), `rows`, `column`.

A facts source is read, never written, and the engine enforces it: the connection's authorizer allows
only `SELECT`, reading columns, recursive CTEs and the functions in `ALLOWED_FUNCTIONS`, so `ATTACH`
(which creates a file), `VACUUM INTO` (which copies the database anywhere writable), any pragma,
`CREATE TEMP ...` and every write are refused before they run, as bad input.

A query's cost is bounded three ways, because a count of VM steps alone is not a bound on work (one
step of `replace`, `instr` or `printf` over a long string does as much as millions of cheap ones):
- every value (string, blob, row) is at most `MAX_VALUE_BYTES` (`SQLITE_LIMIT_LENGTH`), which also
  bounds what one step can do: the worst single step, `replace(x, y, z)` or `instr(x, y)` with `y`
  half of `x`, is quadratic in the cap and takes well under a second at 256 KiB; `LIKE`/`GLOB`
  patterns are at most `MAX_PATTERN_BYTES`;
- all queries share one wall-clock deadline (`DEADLINE_S`), checked every `_CHECK_EVERY` VM steps;
- and one budget of VM steps (`max_steps`).
Running past either is bad input (one line naming the query), never a hang.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.core import HarnessError
from harness.shield.graph import FactQuery, FactType, StateGraph
from harness.shield.json_input import check_value, loads, read_json
from harness.shield.json_schema import validate


class FactsProvider(Protocol):
    """Anything that can read the environment's facts."""

    def facts(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class StaticFacts:
    """Facts already in memory (from a JSON file, or computed by a task such as GSM8K's recomputation)."""

    values: Mapping[str, Any] = field(default_factory=dict)

    def facts(self) -> Mapping[str, Any]:
        return self.values


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "bool": lambda value: isinstance(value, bool),
    "int": lambda value: isinstance(value, int) and not isinstance(value, bool),
    "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
    "string": lambda value: isinstance(value, str),
    "list": lambda value: isinstance(value, list),
    "map": lambda value: isinstance(value, dict),
}


def json_type(value: Any) -> str:
    """The JSON type of `value`, in the words of `facts.types`."""
    if value is None:
        return "null"
    return next((name for name in ("bool", "int", "number", "string", "list", "map") if _JSON_TYPES[name](value)), type(value).__name__)


def check_fact_types(types: Mapping[str, FactType], values: Mapping[str, Any], source: str) -> None:
    """Bad input when a fact's value is not the type its graph declares (the string `"true"` for a
    `bool` would make every negated check on it silently true)."""
    for name, expected in types.items():
        if name in values and not _JSON_TYPES[expected](values[name]):
            value = values[name]
            raise HarnessError(f"{source}: fact {name!r} must be {expected}, got {json_type(value)} {json.dumps(value, default=str)[:40]}")


def load_facts_json(path: str, graph: StateGraph | None = None) -> StaticFacts:
    """Read and validate a facts JSON file; with `graph`, each fact must have the type it declares."""
    data = read_json(str(path), "facts")
    validate("facts", data, str(path))
    if graph is not None:
        check_fact_types(graph.facts.types, data["facts"], str(path))
    return StaticFacts(values=data["facts"])


def _shape(rows: list[sqlite3.Row], name: str, query: FactQuery) -> Any:
    """The CEL value of a query's rows; a value the shape cannot hold exactly is bad input.

    Facts are typed: `bool` takes SQLite's booleans (integers, true when non-zero; no rows is false)
    and refuses TEXT such as `'false'`, which Python's `bool()` would make true; `json` takes a TEXT
    holding a JSON document."""
    if query.shape == "rows":
        return [dict(row) for row in rows]
    if query.shape == "row":
        return dict(rows[0]) if rows else None
    if query.shape == "column":
        return [row[0] for row in rows]
    first = rows[0][0] if rows else None
    if query.shape == "bool":
        if not rows:
            return False
        if isinstance(first, int):
            return first != 0
        raise HarnessError(f"facts query {name!r} (shape bool) returned {_sql_type(first)} {first!r:.40}, not an integer 0/1")
    if query.shape == "json":  # e.g. json_group_object(...) for a map-valued fact
        if first is None:
            return None
        if not isinstance(first, str):
            raise HarnessError(f"facts query {name!r} (shape json) returned {_sql_type(first)}, not JSON text")
        return loads(first, f"facts query {name!r}", "result")
    return first


def _sql_type(value: Any) -> str:
    return {type(None): "NULL", int: "INTEGER", float: "REAL", str: "TEXT", bytes: "BLOB"}.get(type(value), type(value).__name__)


# Functions a facts query may call: pure functions of their arguments (core, aggregate, date and JSON).
# Left out: what reads or changes the connection (`changes`, `last_insert_rowid`, `load_extension`),
# what is random (`random`, `randomblob`) and what allocates on request (`zeroblob`).
ALLOWED_FUNCTIONS: frozenset[str] = frozenset(
    """abs avg char coalesce count date datetime format glob group_concat hex ifnull iif instr json
    json_array json_array_length json_each json_extract json_group_array json_group_object json_object
    json_quote json_tree json_type json_valid julianday length like likelihood likely lower ltrim max
    min nullif octet_length printf quote replace round rtrim sign string_agg strftime substr substring
    sum time total trim typeof unicode unixepoch unlikely upper""".split()
)
MAX_VALUE_BYTES = 256 * 2**10
MAX_PATTERN_BYTES = 1000
DEADLINE_S = 5.0
_CHECK_EVERY = 100  # VM steps between two checks of the budget and the deadline
_READ_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})
_ACTIONS = """CREATE_INDEX CREATE_TABLE CREATE_TEMP_INDEX CREATE_TEMP_TABLE CREATE_TEMP_TRIGGER CREATE_TEMP_VIEW
    CREATE_TRIGGER CREATE_VIEW DELETE DROP_INDEX DROP_TABLE DROP_TEMP_INDEX DROP_TEMP_TABLE DROP_TEMP_TRIGGER
    DROP_TEMP_VIEW DROP_TRIGGER DROP_VIEW INSERT PRAGMA READ SELECT TRANSACTION UPDATE ATTACH DETACH
    ALTER_TABLE REINDEX ANALYZE CREATE_VTABLE DROP_VTABLE FUNCTION SAVEPOINT RECURSIVE""".split()
_ACTION_NAMES = {getattr(sqlite3, f"SQLITE_{name}"): name for name in _ACTIONS if hasattr(sqlite3, f"SQLITE_{name}")}


class _ReadOnly:
    """The connection's authorizer: reads and allowed functions pass, anything else is denied and
    remembered, so the refusal can name what the query tried."""

    def __init__(self) -> None:
        self.refused: str | None = None

    def __call__(self, action: int, first: str | None, second: str | None, database: str | None, trigger: str | None) -> int:
        if action in _READ_ACTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() in ALLOWED_FUNCTIONS:
            return sqlite3.SQLITE_OK
        name = _ACTION_NAMES.get(action, str(action))
        if action == sqlite3.SQLITE_FUNCTION:
            name = f"function {second}()"
        elif first:
            name = f"{name} {first!r}"
        self.refused = self.refused or name
        return sqlite3.SQLITE_DENY


class _Budget:
    """The connection's progress handler: aborts the running query (a non-zero return) once the
    queries have used up their VM steps or run past their deadline, and remembers which."""

    def __init__(self, max_steps: int, deadline: float, deadline_s: float) -> None:
        self.max_steps = max_steps
        self.deadline = deadline
        self.deadline_s = deadline_s
        self.steps = 0
        self.exceeded: str | None = None

    def __call__(self) -> int:
        self.steps += _CHECK_EVERY
        if self.steps > self.max_steps:
            self.exceeded = f"the facts queries used up their budget of {self.max_steps} SQLite VM steps"
        elif time.monotonic() > self.deadline:
            self.exceeded = f"the facts queries ran past their deadline of {self.deadline_s:g} s"
        return int(self.exceeded is not None)


def _assign(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = value


@dataclass(frozen=True)
class SqliteFacts:
    """Facts read from a SQLite environment by the graph's named queries.

    The database is opened read-only through a `file:` URI built by `Path.as_uri()`, which
    percent-encodes `#` and `?`: a hand-built `file:{path}?mode=ro` turns `a#b.sqlite` into a fragment
    and opens (creating it, writable) `a`. Queries share a budget of SQLite VM steps and a wall-clock
    deadline of `deadline_s` seconds, so a runaway or heavy query is bad input rather than a hang."""

    path: str
    queries: Mapping[str, FactQuery]
    max_steps: int = 50_000_000
    types: Mapping[str, FactType] = field(default_factory=dict)
    deadline_s: float = DEADLINE_S

    def facts(self) -> Mapping[str, Any]:
        resolved = Path(self.path).resolve()
        if not resolved.is_file():
            raise HarnessError(f"{self.path}: facts database does not exist or is not a regular file")
        if not self.queries:
            raise HarnessError(f"{self.path}: the graph declares no facts.queries to read this database with")
        values: dict[str, Any] = {}
        connection = sqlite3.connect(f"{resolved.as_uri()}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        budget = _Budget(self.max_steps, time.monotonic() + self.deadline_s, self.deadline_s)
        connection.set_progress_handler(budget, _CHECK_EVERY)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_PATTERN_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        authorizer = _ReadOnly()
        connection.set_authorizer(authorizer)
        try:
            for name, query in self.queries.items():
                try:
                    rows = connection.execute(query.sql).fetchall()
                except sqlite3.Error as error:
                    if authorizer.refused:
                        raise HarnessError(
                            f"{self.path}: facts query {name!r} is refused: it does {authorizer.refused}, "
                            "and a facts query may only read (SELECT with the allowed functions)"
                        ) from None
                    if budget.exceeded:
                        raise HarnessError(f"{self.path}: facts query {name!r} is refused: {budget.exceeded}") from None
                    raise HarnessError(f"{self.path}: facts query {name!r} failed: {error}") from None
                except (MemoryError, OverflowError) as error:
                    raise HarnessError(f"{self.path}: facts query {name!r} failed: {type(error).__name__}") from None
                try:
                    value = _shape(rows, name, query)
                    check_value(value)
                except HarnessError as error:
                    raise HarnessError(f"{self.path}: {error}") from None
                except ValueError as error:
                    raise HarnessError(f"{self.path}: facts query {name!r} returned a value that is not JSON: {error}") from None
                _assign(values, name, value)
        finally:
            connection.close()
        check_fact_types(self.types, values, self.path)
        return values


def sqlite_facts(path: str, graph: StateGraph) -> SqliteFacts:
    return SqliteFacts(path=str(path), queries=graph.facts.queries, types=graph.facts.types)


def resolve_facts(facts: FactsProvider | Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A plain mapping of facts from a provider, a mapping, or nothing."""
    if facts is None:
        return {}
    if isinstance(facts, Mapping):
        return facts
    return facts.facts()
