"""Facts: the environment's ground state that invariants are checked against.

A facts provider returns a mapping of variable -> JSON value, read from the environment at the end of
the run, never from the agent. Two providers ship: a JSON facts file (`{"facts": {...}}`, schema
`facts.schema.json`) and a SQLite database read through the named queries the graph declares under
`facts.queries` (a query named `booking_record.exists` fills `booking_record = {"exists": ...}`).
Query shapes: `scalar` (first column of the first row, null when none), `bool`, `json` (a JSON text
such as `json_group_object(...)`, parsed), `row` (a map, null when none), `rows`, `column`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from harness.core import HarnessError
from harness.shield.graph import FactQuery, StateGraph
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


def load_facts_json(path: str) -> StaticFacts:
    """Read and validate a facts JSON file."""
    data = read_json(str(path), "facts")
    validate("facts", data, str(path))
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
    and opens (creating it, writable) `a`. Queries share a budget of SQLite VM steps, so a runaway
    query is bad input rather than a hang."""

    path: str
    queries: Mapping[str, FactQuery]
    max_steps: int = 50_000_000

    def facts(self) -> Mapping[str, Any]:
        resolved = Path(self.path).resolve()
        if not resolved.is_file():
            raise HarnessError(f"{self.path}: facts database does not exist or is not a regular file")
        if not self.queries:
            raise HarnessError(f"{self.path}: the graph declares no facts.queries to read this database with")
        values: dict[str, Any] = {}
        connection = sqlite3.connect(f"{resolved.as_uri()}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        steps = [0]

        def budget() -> int:
            steps[0] += 1
            return int(steps[0] * 1000 > self.max_steps)  # non-zero aborts the running query

        connection.set_progress_handler(budget, 1000)
        try:
            for name, query in self.queries.items():
                try:
                    rows = connection.execute(query.sql).fetchall()
                except sqlite3.Error as error:
                    raise HarnessError(f"{self.path}: facts query {name!r} failed: {error}") from None
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
        return values


def sqlite_facts(path: str, graph: StateGraph) -> SqliteFacts:
    return SqliteFacts(path=str(path), queries=graph.facts.queries)


def resolve_facts(facts: FactsProvider | Mapping[str, Any] | None) -> Mapping[str, Any]:
    """A plain mapping of facts from a provider, a mapping, or nothing."""
    if facts is None:
        return {}
    if isinstance(facts, Mapping):
        return facts
    return facts.facts()
