"""The τ-bench airline database: one shared, never-written base and copy-on-write views over it.

A replay must start every trajectory from the shipped database, but copying 5 MB of JSON per
trajectory would dominate the cost. Instead the base is loaded once per process and treated as
immutable; a trajectory's writes live in an *overlay* mapping `(kind, id) -> entity` of the few
entities it changed. Every write stores a fresh copy of the entity, so an overlay snapshot taken
before a call is never disturbed by the call: `DbView(before)` and `DbView(after)` cost one small
dict each.

Entities are the JSON objects of the shipped files (`flights.json`, `reservations.json`,
`users.json`). Readers get them frozen (read-only mappings, tuples for lists) so an invariant cannot
corrupt the base for the next trajectory.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache, cached_property
from importlib import resources
from types import MappingProxyType
from typing import Any, Literal

Kind = Literal["flight", "reservation", "user"]
Key = tuple[Kind, str]
Overlay = Mapping[Key, dict[str, Any]]

KINDS: tuple[Kind, ...] = ("flight", "reservation", "user")
# The database's clock, stated in the policy ("The current time is 2024-05-15 15:00:00 EST").
CLOCK = datetime(2024, 5, 15, 15, 0, 0)
CLOCK_ISO = CLOCK.isoformat()


def data_file(name: str) -> Any:
    """A file shipped in `tasks/tau_airline/data/` (a Traversable: `.read_bytes()`, `.open()`)."""
    return resources.files("tasks.tau_airline").joinpath("data").joinpath(name)


def read_json_gz(name: str) -> Any:
    """Parse one of the gzip-compressed JSON files shipped with the package."""
    return json.loads(gzip.decompress(data_file(name).read_bytes()))


@dataclass(frozen=True)
class BaseDb:
    """The shipped database as loaded; shared by every replay in the process and never mutated."""

    flights: Mapping[str, dict[str, Any]]
    reservations: Mapping[str, dict[str, Any]]
    users: Mapping[str, dict[str, Any]]

    def table(self, kind: Kind) -> Mapping[str, dict[str, Any]]:
        if kind == "flight":
            return self.flights
        return self.reservations if kind == "reservation" else self.users

    @cached_property
    def frozen(self) -> dict[Key, Any]:
        """Frozen base entities, made on first read and shared by every view (the base never changes)."""
        return {}

    @cached_property
    def flights_from(self) -> Mapping[str, tuple[str, ...]]:
        """Origin airport -> flight numbers leaving it, in the file's order (the searches' order)."""
        index: dict[str, list[str]] = {}
        for number, flight in self.flights.items():
            index.setdefault(flight["origin"], []).append(number)
        return MappingProxyType({origin: tuple(numbers) for origin, numbers in index.items()})


@cache
def base_db() -> BaseDb:
    """Load the shipped database once per process (about 0.1 s)."""
    return BaseDb(
        flights=MappingProxyType(read_json_gz("flights.json.gz")),
        reservations=MappingProxyType(read_json_gz("reservations.json.gz")),
        users=MappingProxyType(read_json_gz("users.json.gz")),
    )


def freeze(value: Any) -> Any:
    """A read-only deep copy of a JSON value: dicts become mapping proxies, lists become tuples."""
    if isinstance(value, dict):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A mutable deep copy of a JSON value (also undoes `freeze`)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


class DbView:
    """Read access to the database at one moment: the base with an overlay snapshot on top.

    Lookups return frozen entities, or None when the id does not exist. The view never changes.
    """

    __slots__ = ("_base", "_frozen", "_overlay")

    def __init__(self, base: BaseDb, overlay: Overlay) -> None:
        self._base = base
        self._overlay = overlay
        self._frozen: dict[Key, Any] = {}

    def raw(self, kind: Kind, entity_id: str) -> dict[str, Any] | None:
        """The stored JSON object; callers must not mutate it (tools copy it before writing)."""
        key = (kind, entity_id)
        if key in self._overlay:
            return self._overlay[key]
        return self._base.table(kind).get(entity_id)

    def get(self, kind: Kind, entity_id: str) -> Mapping[str, Any] | None:
        key = (kind, entity_id)
        cache = self._frozen if key in self._overlay else self._base.frozen
        if key not in cache:
            raw = self.raw(kind, entity_id)
            cache[key] = None if raw is None else freeze(raw)
        return cache[key]

    def reservation(self, reservation_id: str) -> Mapping[str, Any] | None:
        return self.get("reservation", reservation_id)

    def user(self, user_id: str) -> Mapping[str, Any] | None:
        return self.get("user", user_id)

    def flight(self, flight_number: str) -> Mapping[str, Any] | None:
        return self.get("flight", flight_number)

    def flight_date(self, flight_number: str, date: str) -> Mapping[str, Any] | None:
        """The flight's record for one date (status, seats, prices or actual times), or None."""
        flight = self.raw("flight", flight_number)
        record = None if flight is None else flight["dates"].get(date)
        return None if record is None else freeze(record)

    def flight_status(self, flight_number: str, date: str) -> str | None:
        """`available`, `on time`, `delayed`, `flying`, `landed` or `cancelled`; None if no such flight/date."""
        flight = self.raw("flight", flight_number)
        record = None if flight is None else flight["dates"].get(date)
        return None if record is None else record.get("status")

    def ids(self, kind: Kind) -> Iterator[str]:
        """Every id of `kind` in this view: the base's, then those the overlay added."""
        table = self._base.table(kind)
        yield from table
        yield from (entity_id for (k, entity_id) in self._overlay if k == kind and entity_id not in table)

    def flights_from(self, origin: str) -> tuple[str, ...]:
        """Numbers of the flights leaving `origin`, in the database's order (the searches' order)."""
        if not any(kind == "flight" for kind, _ in self._overlay):
            return self._base.flights_from.get(origin, ())
        return tuple(number for number in self.ids("flight") if self.raw("flight", number)["origin"] == origin)  # type: ignore[index]

    def overlay_keys(self) -> frozenset[Key]:
        """The entities this view holds over the base (written at some point of the replay)."""
        return frozenset(self._overlay)


def changed_keys(base: BaseDb, before: Overlay, after: Overlay) -> frozenset[Key]:
    """Entities whose value differs between two overlay snapshots of `base` (a rewrite to the same value is no change)."""
    changed = set()
    for key, value in after.items():
        if before.get(key) is value:
            continue
        old = before[key] if key in before else base.table(key[0]).get(key[1])
        if old != value:
            changed.add(key)
    return frozenset(changed)
