"""The 14 airline tools, re-implemented over the copy-on-write database.

Written from the tools' schemas (`data/tools.json`), the policy (`data/policy.md`) and the outputs
recorded in τ-bench's trajectories (Yao et al. 2024), so that a replay reproduces what the agent saw:
reads print the stored JSON object, writes print the reservation they produced, failures print
`Error: ...`. Like the benchmark's API, the tools do *not* enforce the policy's procedural rules
(confirmation, payment limits, fees, eligibility); checking those is the shield's job. Where the
recorded environment does something other than the call asks (a flight update keeps the old cabin),
the replay does the same, so the shield can report the difference as the environment's.

Each tool is `(db, args) -> output text`; `call` validates the arguments against the tool's schema
first, so a hostile call gets an error, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import date as Date
from datetime import timedelta
from functools import cache
from typing import Any

import fastjsonschema

from tasks.tau_airline.arith import calculate as _calculate
from tasks.tau_airline.db import CLOCK_ISO, DbView, Key, Kind, data_file

Args = Mapping[str, Any]

# The tool's fixed answer (τ-bench's airports and their cities, as recorded by `list_all_airports`).
AIRPORTS: Mapping[str, str] = {
    "SFO": "San Francisco", "JFK": "New York", "LAX": "Los Angeles", "ORD": "Chicago", "DFW": "Dallas",
    "DEN": "Denver", "SEA": "Seattle", "ATL": "Atlanta", "MIA": "Miami", "BOS": "Boston",
    "PHX": "Phoenix", "IAH": "Houston", "LAS": "Las Vegas", "MCO": "Orlando", "EWR": "Newark",
    "CLT": "Charlotte", "MSP": "Minneapolis", "DTW": "Detroit", "PHL": "Philadelphia", "LGA": "LaGuardia",
}  # fmt: skip
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_NUMBER = 3221322
BAG_FEE = 50
INSURANCE_FEE = 30
WRITE_TOOLS = frozenset(
    {
        "book_reservation",
        "cancel_reservation",
        "update_reservation_flights",
        "update_reservation_baggages",
        "update_reservation_passengers",
        "send_certificate",
    }
)


class Working:
    """One call's writes over a view: the first edit of an entity copies it, later edits reuse the copy."""

    __slots__ = ("view", "writes")

    def __init__(self, view: DbView) -> None:
        self.view = view
        self.writes: dict[Key, dict[str, Any]] = {}

    def read(self, kind: Kind, entity_id: str) -> dict[str, Any] | None:
        """The current object (this call's copy if it wrote one); do not mutate it, `edit` it."""
        key = (kind, entity_id)
        return self.writes[key] if key in self.writes else self.view.raw(kind, entity_id)

    def edit(self, kind: Kind, entity_id: str) -> dict[str, Any]:
        key = (kind, entity_id)
        if key not in self.writes:
            current = self.view.raw(kind, entity_id)
            if current is None:
                raise KeyError(key)
            self.writes[key] = json.loads(json.dumps(current))
        return self.writes[key]

    def create(self, kind: Kind, entity_id: str, value: dict[str, Any]) -> None:
        self.writes[(kind, entity_id)] = value


def _dump(value: Any) -> str:
    return json.dumps(value)


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


def get_user_details(db: Working, args: Args) -> str:
    user = db.read("user", args["user_id"])
    return "Error: user not found" if user is None else _dump(user)


def get_reservation_details(db: Working, args: Args) -> str:
    reservation = db.read("reservation", args["reservation_id"])
    return "Error: reservation not found" if reservation is None else _dump(reservation)


def list_all_airports(db: Working, args: Args) -> str:
    return _dump(dict(AIRPORTS))


def calculate(db: Working, args: Args) -> str:
    return _calculate(args["expression"])


def think(db: Working, args: Args) -> str:
    return ""


def transfer_to_human_agents(db: Working, args: Args) -> str:
    return "Transfer successful"


def _listing(flight: Mapping[str, Any], day: Mapping[str, Any]) -> dict[str, Any]:
    """A search result: the flight without its calendar, with the date's status, seats and prices."""
    listing = {key: value for key, value in flight.items() if key != "dates"}
    listing.update(_copy(day))
    return listing


def _available(flight: Mapping[str, Any], day: str) -> Mapping[str, Any] | None:
    record = flight["dates"].get(day)
    return record if record is not None and record.get("status") == "available" else None


def _flights_from(db: Working, origin: str) -> list[Mapping[str, Any]]:
    """The flights leaving `origin`, current versions, in the database's order."""
    return [db.read("flight", number) for number in db.view.flights_from(origin)]  # type: ignore[misc]


def search_direct_flight(db: Working, args: Args) -> str:
    results = []
    for flight in _flights_from(db, args["origin"]):
        if flight["destination"] == args["destination"]:
            day = _available(flight, args["date"])
            if day is not None:
                results.append(_listing(flight, day))
    return _dump(results)


def _next_day(day: str) -> str | None:
    try:
        return (Date.fromisoformat(day) + timedelta(days=1)).isoformat()
    except ValueError:
        return None


def search_onestop_flight(db: Working, args: Args) -> str:
    """Pairs of available flights origin -> X -> destination, the second leaving after the first lands.

    Times are compared as the schedule's `HH:MM:SS` strings; a first leg arriving `+1` (next day)
    connects to second legs on the next date.
    """
    day, results = args["date"], []
    for first in _flights_from(db, args["origin"]):
        first_day = _available(first, day)
        if first_day is None:
            continue
        arrival = first["scheduled_arrival_time_est"]
        second_date = _next_day(day) if arrival.endswith("+1") else day
        for second in _flights_from(db, first["destination"]):
            if second["destination"] != args["destination"]:
                continue
            if second_date is None or arrival > second["scheduled_departure_time_est"]:
                continue
            if _available(second, second_date) is None:
                continue
            # As recorded: the second leg's seats and prices are its record for the *first* leg's
            # date, even when it flies the next day (the listing's `date` is the right one).
            shown = second["dates"].get(day)
            if shown is None:
                continue
            results.append([_listing(first, first_day) | {"date": day}, _listing(second, shown) | {"date": second_date}])
    return _dump(results)


def _price_flights(db: Working, flights: list[dict[str, Any]], cabin: str, travellers: int) -> str | int:
    """Set each new segment's price, origin and destination from the flight database; an error text or the total."""
    total = 0
    for segment in flights:
        number = segment["flight_number"]
        flight = db.read("flight", number)
        if flight is None:
            return f"Error: flight {number} not found"
        record = flight["dates"].get(segment["date"])
        if record is None:
            return f"Error: flight {number} not found on date {segment['date']}"
        if record.get("status") != "available":
            return f"Error: flight {number} not available on date {segment['date']}"
        if record["available_seats"][cabin] < travellers:
            return f"Error: not enough seats on flight {number}"
        segment["price"] = record["prices"][cabin]
        segment["origin"] = flight["origin"]
        segment["destination"] = flight["destination"]
        total += segment["price"] * travellers
    return total


def book_reservation(db: Working, args: Args) -> str:
    """A new reservation paid by the given methods; gift cards are debited, certificates used up.

    Like the recorded environment, seats are not taken from the flights.
    """
    user_id = args["user_id"]
    user = db.read("user", user_id)
    if user is None:
        return "Error: user not found"
    passengers, payments = _copy(args["passengers"]), _copy(args["payment_methods"])
    flights = _copy(args["flights"])
    total = _price_flights(db, flights, args["cabin"], len(passengers))
    if isinstance(total, str):
        return total
    if args["insurance"] == "yes":
        total += INSURANCE_FEE * len(passengers)
    total += BAG_FEE * args["nonfree_baggages"]
    methods = user["payment_methods"]
    for payment in payments:
        method = methods.get(payment["payment_id"])
        if method is None:
            return f"Error: payment method {payment['payment_id']} not found"
        if method["source"] in ("gift_card", "certificate") and method["amount"] < payment["amount"]:
            return f"Error: not enough balance in payment method {payment['payment_id']}"
    paid = sum(payment["amount"] for payment in payments)
    if paid != total:
        return f"Error: payment amount does not add up, total price is {total}, but paid {paid}"
    reservation_id = next(
        (rid for rid in NEW_RESERVATION_IDS if db.read("reservation", rid) is None),
        _fresh_reservation_id(db),
    )
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": args["origin"],
        "destination": args["destination"],
        "flight_type": args["flight_type"],
        "cabin": args["cabin"],
        "flights": flights,
        "passengers": passengers,
        "payment_history": payments,
        "created_at": CLOCK_ISO,
        "total_baggages": args["total_baggages"],
        "nonfree_baggages": args["nonfree_baggages"],
        "insurance": args["insurance"],
    }
    editable = db.edit("user", user_id)
    for payment in payments:
        method = editable["payment_methods"][payment["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method["source"] == "certificate":
            del editable["payment_methods"][payment["payment_id"]]
    editable["reservations"].append(reservation_id)
    db.create("reservation", reservation_id, reservation)
    return _dump(reservation)


def _fresh_reservation_id(db: Working) -> str:
    """Past the three ids a task can book (more than three bookings in one trajectory)."""
    number = 0
    while db.read("reservation", f"HATX{number:02d}") is not None:
        number += 1
    return f"HATX{number:02d}"


def cancel_reservation(db: Working, args: Args) -> str:
    """Status cancelled and one refund line per payment; balances and seats are left as they are."""
    reservation_id = args["reservation_id"]
    if db.read("reservation", reservation_id) is None:
        return "Error: reservation not found"
    reservation = db.edit("reservation", reservation_id)
    refunds = [{"payment_id": line["payment_id"], "amount": -line["amount"]} for line in reservation["payment_history"]]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return _dump(reservation)


def _charge(db: Working, reservation: Mapping[str, Any], payment_id: str, amount: float) -> str | None:
    """Check the reservation owner's payment method can pay `amount`; an error text or None."""
    method = db.read("user", reservation["user_id"])["payment_methods"].get(payment_id)  # type: ignore[index]
    if method is None:
        return "Error: payment method not found"
    if method["source"] == "certificate":
        return "Error: certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < amount:
        return "Error: gift card balance is not enough"
    return None


def _debit(db: Working, reservation: dict[str, Any], payment_id: str, amount: float) -> None:
    """Take `amount` from a gift card and record the payment line (none for a zero amount)."""
    user_id = reservation["user_id"]
    if db.read("user", user_id)["payment_methods"][payment_id]["source"] == "gift_card":  # type: ignore[index]
        db.edit("user", user_id)["payment_methods"][payment_id]["amount"] -= amount
    if amount != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": amount})


def update_reservation_baggages(db: Working, args: Args) -> str:
    """Set the bag counts; 50 per added non-free bag is charged. Nothing is refunded for removed bags."""
    reservation_id = args["reservation_id"]
    current = db.read("reservation", reservation_id)
    if current is None:
        return "Error: reservation not found"
    fee = BAG_FEE * max(0, args["nonfree_baggages"] - current["nonfree_baggages"])
    error = _charge(db, current, args["payment_id"], fee)
    if error is not None:
        return error
    reservation = db.edit("reservation", reservation_id)
    reservation["total_baggages"] = args["total_baggages"]
    reservation["nonfree_baggages"] = args["nonfree_baggages"]
    _debit(db, reservation, args["payment_id"], fee)
    return _dump(reservation)


def update_reservation_flights(db: Working, args: Args) -> str:
    """Replace the flights, charging (or refunding) the price difference.

    A segment already in the reservation, in the same cabin, keeps its booked price; new segments
    are priced now. As recorded, the reservation's `cabin` field is left unchanged even when the
    call asks for another cabin (the segments are priced in the requested one).
    """
    reservation_id = args["reservation_id"]
    current = db.read("reservation", reservation_id)
    if current is None:
        return "Error: reservation not found"
    cabin, travellers = args["cabin"], len(current["passengers"])
    flights, new, total = _copy(args["flights"]), [], 0
    for segment in flights:
        kept = next(
            (
                old
                for old in current["flights"]
                if cabin == current["cabin"] and (old["flight_number"], old["date"]) == (segment["flight_number"], segment["date"])
            ),
            None,
        )
        if kept is None:
            new.append(segment)
        else:
            segment.update(price=kept["price"], origin=kept["origin"], destination=kept["destination"])
            total += kept["price"] * travellers
    priced = _price_flights(db, new, cabin, travellers)
    if isinstance(priced, str):
        return priced
    total += priced - sum(old["price"] for old in current["flights"]) * travellers
    error = _charge(db, current, args["payment_id"], total)
    if error is not None:
        return error
    reservation = db.edit("reservation", reservation_id)
    reservation["flights"] = flights
    _debit(db, reservation, args["payment_id"], total)
    return _dump(reservation)


def update_reservation_passengers(db: Working, args: Args) -> str:
    reservation_id = args["reservation_id"]
    current = db.read("reservation", reservation_id)
    if current is None:
        return "Error: reservation not found"
    if len(args["passengers"]) != len(current["passengers"]):
        return "Error: number of passengers does not match"
    reservation = db.edit("reservation", reservation_id)
    reservation["passengers"] = _copy(args["passengers"])
    return _dump(reservation)


def send_certificate(db: Working, args: Args) -> str:
    """Add a certificate of `amount` to the user's payment methods under the first free id."""
    user_id = args["user_id"]
    user = db.read("user", user_id)
    if user is None:
        return "Error: user not found"
    number = NEW_CERTIFICATE_NUMBER
    while f"certificate_{number}" in user["payment_methods"]:
        number += 1
    payment_id = f"certificate_{number}"
    db.edit("user", user_id)["payment_methods"][payment_id] = {"source": "certificate", "amount": args["amount"], "id": payment_id}
    return f"Certificate {payment_id} added to user {user_id} with amount {args['amount']}."


Tool = Callable[[Working, Args], str]
TOOLS: Mapping[str, Tool] = {
    tool.__name__: tool
    for tool in (
        book_reservation,
        calculate,
        cancel_reservation,
        get_reservation_details,
        get_user_details,
        list_all_airports,
        search_direct_flight,
        search_onestop_flight,
        send_certificate,
        think,
        transfer_to_human_agents,
        update_reservation_baggages,
        update_reservation_flights,
        update_reservation_passengers,
    )
}


@cache
def tool_schemas() -> Mapping[str, dict[str, Any]]:
    """Each tool's JSON Schema for its arguments, as the agent saw it (`data/tools.json`)."""
    return {entry["function"]["name"]: entry["function"]["parameters"] for entry in json.loads(data_file("tools.json").read_text())}


@cache
def _validator(name: str) -> Callable[[Any], Any]:
    return fastjsonschema.compile(tool_schemas()[name])


def call(db: Working, name: str, args: Any) -> str:
    """Run tool `name` on `args`; unknown tools and arguments outside the schema are errors, not exceptions."""
    if name not in TOOLS:
        return f"Error: unknown tool {name}"
    try:
        _validator(name)(args)
    except fastjsonschema.JsonSchemaValueException as error:
        return f"Error: invalid arguments for {name}: {error.message}"
    try:
        return TOOLS[name](db, args)
    except RecursionError:
        # Arguments nested past the interpreter's limit (inside keys the schema leaves open).
        db.writes.clear()
        return f"Error: invalid arguments for {name}: nested too deeply"
