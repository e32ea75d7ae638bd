"""Facts for the airline invariants, one record per trace event, read from the replayed database.

The graph's invariants (graphs/airline.json) read `steps[event.index]`. A record says what the event
was (its message's role, text and number of tool calls; the most recent user message before it) and,
for a tool call, what the *replayed* environment did: whether the call succeeded, the reservation
it targets before and after the call (with the route its segments fly, read from the flight table),
the booking user's membership, the payment methods' kinds as the user profile states them, the
certificate amounts the policy allows the task's user, the database paths it changed and the paths
it was allowed to change. Nothing here is read from the agent's words or from the recorded tool
outputs; the call's own arguments appear only as `asked`, the effect the call requested, which
postconditions compare with the database (`effect_mismatch`) and the certificate rules compare with
what the database allows. Every write's frame (`allowed`) comes from the authenticated user
(`task_user`, whom the conversation and the replayed lookups established:
`tasks.tau_airline.identity`, never the file's `info.task.user_id`) and the reservation the call
acts on, never from the call's own arguments. Limits are totals over the conversation where the
policy's limit is one: `compensation_total` is every certificate the environment granted so far.

`confirmation` is `tasks.tau_airline.confirmation.confirmation` (yes, no or unclear; `confirmed`
is its `yes`) on the pair a write's confirmation must be: the most recent user message before the
call, and the agent message with text it answers.

Paths name what a write touched: `reservation:ID`, `flight:NUMBER`, `user:ID.FIELD` (a user's
top-level field, so a booking may touch `payment_methods` and `reservations` but not the address).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date as date_type
from datetime import timedelta
from typing import Any

from harness.core import HarnessError
from tasks.tau_airline.confirmation import Answer, confirmation
from tasks.tau_airline.db import CLOCK_ISO, DbView, base_db
from tasks.tau_airline.identity import authenticated_user
from tasks.tau_airline.replay import Replay, ReplayedCall
from tasks.tau_airline.trajectory import Message, Trajectory

RESERVATION_WRITES = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
    }
)


@dataclass(frozen=True)
class EventSource:
    """Where a trace event came from: the message at `source_index` of `traj`, and for a tool call
    its position among that message's calls."""

    source_index: int
    call_position: int | None = None


def _number(value: Any) -> Any:
    """Integral floats as ints, so CEL compares `2.0` bags with `2` (CEL has no int/double `==`)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _flight_key(segment: Mapping[str, Any]) -> str:
    return f"{segment.get('flight_number')}@{segment.get('date')}"


def _passengers(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, (list, tuple)):
        return []
    return [
        {"first_name": p.get("first_name"), "last_name": p.get("last_name"), "dob": p.get("dob")}
        for p in raw
        if isinstance(p, Mapping)
    ]


def trip_of(view: DbView, segments: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The route the segments fly, each leg's airports read from the flight table (not from the
    segment's own fields): where it starts and ends, every airport it lands at, and whether each leg
    leaves from where the previous one landed."""
    legs = []
    for segment in segments:
        flight = view.raw("flight", str(segment.get("flight_number"))) or {}
        legs.append((flight.get("origin"), flight.get("destination")))
    return {
        "start": legs[0][0] if legs else None,
        "end": legs[-1][1] if legs else None,
        "stops": [destination for _, destination in legs],
        "connected": bool(legs) and all(legs[i][1] == legs[i + 1][0] for i in range(len(legs) - 1)),
    }


def reservation_view(view: DbView, reservation_id: str | None) -> dict[str, Any] | None:
    """A reservation as the invariants read it, with each segment's flight status on its date and the
    owner's membership, both from the same database moment; None when it does not exist."""
    if not reservation_id:
        return None
    reservation = view.raw("reservation", reservation_id)
    if reservation is None:
        return None
    owner = view.raw("user", str(reservation.get("user_id")))
    flights = [
        {
            "flight_number": segment.get("flight_number"),
            "date": segment.get("date"),
            "status": view.flight_status(str(segment.get("flight_number")), str(segment.get("date"))) or "unknown",
        }
        for segment in reservation.get("flights", ())
    ]
    return {
        "reservation_id": reservation_id,
        "user_id": reservation.get("user_id"),
        "membership": (owner or {}).get("membership", "unknown"),
        "status": reservation.get("status") or "active",
        "cabin": reservation.get("cabin"),
        "flight_type": reservation.get("flight_type"),
        "origin": reservation.get("origin"),
        "destination": reservation.get("destination"),
        "insurance": reservation.get("insurance"),
        "created_at": reservation.get("created_at"),
        "total_baggages": _number(reservation.get("total_baggages")),
        "nonfree_baggages": _number(reservation.get("nonfree_baggages")),
        "passengers": len(reservation.get("passengers", ())),
        "passenger_list": _passengers(reservation.get("passengers")),
        "flights": flights,
        "flight_keys": sorted(_flight_key(segment) for segment in flights),
        "trip": trip_of(view, reservation.get("flights", ())),
    }


def _asked(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The effect a write call requested, in the shape of `reservation_view`."""
    flights = arguments.get("flights")
    return {
        "user_id": arguments.get("user_id"),
        "cabin": arguments.get("cabin"),
        "flight_keys": sorted(_flight_key(s) for s in flights if isinstance(s, Mapping)) if isinstance(flights, list) else [],
        "passenger_list": _passengers(arguments.get("passengers")),
        "total_baggages": _number(arguments.get("total_baggages")),
        "nonfree_baggages": _number(arguments.get("nonfree_baggages")),
        "insurance": arguments.get("insurance"),
        "amount": _number(arguments.get("amount")),
    }


def _changed_paths(call: ReplayedCall) -> list[str]:
    paths = []
    for kind, entity_id in sorted(call.changed):
        if kind != "user":
            paths.append(f"{kind}:{entity_id}")
            continue
        old = call.before.raw("user", entity_id) or {}
        new = call.after.raw("user", entity_id) or {}
        paths += [f"user:{entity_id}.{field}" for field in sorted(set(old) | set(new)) if old.get(field) != new.get(field)]
    return paths


def _target(call: ReplayedCall) -> str | None:
    """The reservation a reservation write acts on; for a booking, the one it created."""
    if call.tool == "book_reservation":
        created = [entity_id for kind, entity_id in call.changed if kind == "reservation" and call.before.raw(kind, entity_id) is None]
        return created[0] if created else None
    target = call.arguments.get("reservation_id")
    return target if isinstance(target, str) else None


def _allowed(call: ReplayedCall, task_user: str, owner: str | None) -> list[str]:
    """The frame: what a successful write may change (nothing for reads and failed calls). It comes
    from the authenticated user and the reservation the call acts on: the task user's payment
    methods (and reservation list, for a booking) and that reservation when the task user owns it.
    A write for anyone else may change nothing (and `other_user` names it)."""
    if not call.ok:
        return []
    if call.tool == "send_certificate":
        return [f"user:{task_user}.payment_methods"]
    if call.tool not in RESERVATION_WRITES:
        return []
    allowed = [f"user:{task_user}.payment_methods"]
    if owner == task_user:
        allowed.insert(0, f"reservation:{_target(call)}")
    if call.tool == "book_reservation":
        allowed.append(f"user:{task_user}.reservations")
    return allowed


# Compensation (policy, "Refund"): per passenger, for a reservation with a cancelled / delayed flight.
CERTIFICATE_PER_PASSENGER = {"cancelled": 100, "delayed": 50}


def flight_state(view: DbView, flight_number: str, date: str) -> str | None:
    """The flight's status on `date`, with a flight that took off or landed later than scheduled
    (its recorded actual times against the schedule) counted as `delayed`, as a passenger would."""
    flight = view.raw("flight", flight_number)
    record = None if flight is None else flight["dates"].get(date)
    if flight is None or record is None:
        return None
    departed, arrived = record.get("actual_departure_time_est"), record.get("actual_arrival_time_est")
    scheduled_departure = f"{date}T{str(flight.get('scheduled_departure_time_est'))[:8]}"
    arrival = str(flight.get("scheduled_arrival_time_est"))
    arrival_day = (date_type.fromisoformat(date) + timedelta(days=1)).isoformat() if arrival.endswith("+1") else date
    late = (isinstance(departed, str) and departed > scheduled_departure) or (isinstance(arrived, str) and arrived > f"{arrival_day}T{arrival[:8]}")
    return "delayed" if late else record.get("status")


def certificate_amounts(views: Sequence[DbView], user_id: str) -> list[int]:
    """The certificate amounts the policy allows `user_id`, read from the database at each of
    `views` (the airline reads it at the start of the conversation, so that a cabin the agent
    upgraded, or a flight it booked, earns nothing): for each reservation of the
    user, when the user is a silver or gold member, or the reservation is insured or business, $100
    per passenger if one of its flights is cancelled and $50 per passenger if one is delayed
    (`flight_state`). A
    regular member without insurance flying (basic) economy gets none."""
    amounts: set[int] = set()
    for view in views:
        user = view.raw("user", user_id) or {}
        for reservation_id in user.get("reservations", ()):
            reservation = view.raw("reservation", str(reservation_id)) or {}
            eligible = user.get("membership") in ("silver", "gold") or reservation.get("insurance") == "yes" or reservation.get("cabin") == "business"
            if not eligible:
                continue
            statuses = {flight_state(view, str(s.get("flight_number")), str(s.get("date"))) for s in reservation.get("flights", ())}
            passengers = len(reservation.get("passengers", ()))
            amounts.update(per * passengers for status, per in CERTIFICATE_PER_PASSENGER.items() if status in statuses)
    return sorted(amounts)


def _payment_sources(call: ReplayedCall) -> list[str]:
    """The kind (certificate, credit_card, gift_card) of each payment of a booking, from the profile."""
    payments = call.arguments.get("payment_methods")
    user = call.before.raw("user", str(call.arguments.get("user_id")))
    methods = (user or {}).get("payment_methods", {})
    if not isinstance(payments, list):
        return []
    return [
        str((methods.get(str(p.get("payment_id"))) or {}).get("source", "unknown")) for p in payments if isinstance(p, Mapping)
    ]


def call_facts(call: ReplayedCall, task_user: str, start: DbView) -> dict[str, Any]:
    """The database side of one replayed call; `start` is the database before the conversation."""
    target = _target(call) if call.tool in RESERVATION_WRITES else None
    before = reservation_view(call.before, target)
    after = reservation_view(call.after, target)
    owner_view = before or after
    owner = str(owner_view["user_id"]) if owner_view else None
    return {
        "tool": call.tool,
        "ok": call.ok,
        "write": call.is_write,
        "before": before,
        "after": after,
        "owner": owner or "",
        "pay_sources": _payment_sources(call) if call.tool == "book_reservation" else [],
        "asked": _asked(call.arguments),
        "certificate_amounts": certificate_amounts((start,), task_user) if call.tool == "send_certificate" else [],
        "changed": _changed_paths(call),
        "allowed": _allowed(call, task_user, owner),
    }


_NO_CALL: Mapping[str, Any] = {
    "tool": "",
    "ok": False,
    "write": False,
    "before": None,
    "after": None,
    "owner": "",
    "pay_sources": [],
    "asked": {},
    "certificate_amounts": [],
    "changed": [],
    "allowed": [],
}


def _last_user_texts(messages: Sequence[Message]) -> list[tuple[str, Answer]]:
    """For each message index, the text of the most recent user message strictly before it, and
    that message's answer (yes, no, unclear) to what the agent's last message with text before it asked."""
    answers: list[tuple[str, Answer]] = []
    last: tuple[str, Answer] = ("", "no")
    agent_text = ""
    for message in messages:
        answers.append(last)
        if message.role == "user":
            last = (message.content or "", confirmation(agent_text, message.content))
        elif message.role == "assistant" and message.content:
            agent_text = message.content
    return answers


def claimed_user(trajectory: Trajectory) -> str:
    """The user the results file claims for the task (τ-bench's `info.task.user_id`): a claim of the
    input, checked against the authenticated user (`identity_mismatch`), never the one acted for."""
    if trajectory.user_id is None:
        raise HarnessError(f"trajectory {trajectory.index}: info.task.user_id: missing; the airline invariants need the task's user")
    return trajectory.user_id


def granted_certificates(call: ReplayedCall) -> int | float:
    """The certificate value the replayed call added to any user's payment methods (the
    environment's record of compensation, whatever amount the call's arguments spelled)."""
    total: int | float = 0
    for kind, entity_id in call.changed:
        if kind != "user":
            continue
        old = (call.before.raw("user", entity_id) or {}).get("payment_methods", {})
        new = (call.after.raw("user", entity_id) or {}).get("payment_methods", {})
        for method_id, method in new.items():
            amount = method.get("amount") if isinstance(method, Mapping) else None
            if method_id not in old and method.get("source") == "certificate" and isinstance(amount, (int, float)):
                total += amount
    return _number(total)


def trace_facts(trajectory: Trajectory, replayed: Replay, sources: Sequence[EventSource], authenticated: str | None = None) -> dict[str, Any]:
    """The facts mapping for `harness.shield.verification`: `steps` (one record per trace event, in order),
    `task_user` (the user the conversation authenticated, `tasks.tau_airline.identity`, unless
    `authenticated` names one: the task's own gold actions have no conversation), `claimed_user`
    (the file's claim) and `clock` (the database's clock, RFC 3339).

    Each step also carries `compensation_total`, the certificate value the environment granted from
    the conversation's start up to and including that event, and `compensation_limit`, the largest
    compensation the policy allows the user (one certificate's worth): a limit over the whole
    conversation, not per call."""
    messages = trajectory.messages
    last_user = _last_user_texts(messages)
    claim = claimed_user(trajectory)
    user = authenticated_user(messages, replayed) if authenticated is None else authenticated
    start = DbView(base_db(), {})
    calls: dict[tuple[int, int], ReplayedCall] = {}
    positions: dict[int, int] = {}
    for replayed_call in replayed.calls:
        position = positions.get(replayed_call.source_index, 0)
        calls[(replayed_call.source_index, position)] = replayed_call
        positions[replayed_call.source_index] = position + 1
    steps = []
    granted: int | float = 0
    for event_index, source in enumerate(sources):
        if not 0 <= source.source_index < len(messages):
            raise HarnessError(f"trace event {event_index}: source_index {source.source_index} is outside traj")
        message = messages[source.source_index]
        step: dict[str, Any] = {
            "source_index": source.source_index,
            "role": message.role,
            "text": (message.content or "").strip() if message.role == "assistant" else "",
            "calls_in_message": len(message.tool_calls),
            "last_user": last_user[source.source_index][0],
            "confirmed": last_user[source.source_index][1] == "yes",
            "confirmation": last_user[source.source_index][1],
        }
        call = calls.get((source.source_index, source.call_position)) if source.call_position is not None else None
        step.update(call_facts(call, user, start) if call is not None else _NO_CALL)
        if call is not None and call.ok and call.tool == "send_certificate":
            granted = _number(granted + granted_certificates(call))
        step["compensation_total"] = granted
        step["compensation_limit"] = max(step["certificate_amounts"], default=0)
        steps.append(step)
    return {"steps": steps, "task_user": user, "claimed_user": claim, "clock": f"{CLOCK_ISO}Z"}
