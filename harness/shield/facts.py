"""Facts: the environment's ground state that invariants are checked against.

A facts provider returns a mapping of variable -> JSON value, read from the environment at the end of
the run, never from the agent. Two providers ship: a JSON facts file (`{"facts": {...}}`, schema
`facts.schema.json`) and a SQLite database read through the named queries the graph declares under
`facts.queries` (a query named `booking_record.exists` fills `booking_record = {"exists": ...}`).
Query shapes: `scalar` (first column of the first row, null when none), `bool`, `json` (a JSON text
such as `json_group_object(...)`, parsed), `row` (a map, null when none), `rows`, `column`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.errors import HarnessError
from harness.shield._schema import read_json, validate
from harness.shield.graph import FactQuery, StateGraph


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


def _shape(rows: list[sqlite3.Row], query: FactQuery) -> Any:
    if query.shape == "rows":
        return [dict(row) for row in rows]
    if query.shape == "row":
        return dict(rows[0]) if rows else None
    if query.shape == "column":
        return [row[0] for row in rows]
    first = rows[0][0] if rows else None
    if query.shape == "bool":
        return bool(first)
    if query.shape == "json":  # e.g. json_group_object(...) for a map-valued fact
        return None if first is None else json.loads(first)
    return first


def _assign(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[leaf] = value


@dataclass(frozen=True)
class SqliteFacts:
    """Facts read from a SQLite environment by the graph's named queries (read-only connection)."""

    path: str
    queries: Mapping[str, FactQuery]

    def facts(self) -> Mapping[str, Any]:
        if not os.path.isfile(self.path):
            raise HarnessError(f"{self.path}: facts database does not exist")
        if not self.queries:
            raise HarnessError(f"{self.path}: the graph declares no facts.queries to read this database with")
        values: dict[str, Any] = {}
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        connection.row_factory = sqlite3.Row
        try:
            for name, query in self.queries.items():
                try:
                    rows = connection.execute(query.sql).fetchall()
                except sqlite3.Error as error:
                    raise HarnessError(f"{self.path}: facts query {name!r} failed: {error}") from None
                _assign(values, name, _shape(rows, query))
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
