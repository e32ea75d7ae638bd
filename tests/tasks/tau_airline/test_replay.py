"""Replaying τ-bench's recorded tool calls: hand-checked calls from the shipped trajectories, fidelity, attacks."""

from __future__ import annotations

import hashlib
import json
from functools import cache

import pytest

from tasks.tau_airline import fidelity
from tasks.tau_airline.arith import calculate
from tasks.tau_airline.db import DbView, base_db
from tasks.tau_airline.replay import Replay, ReplayedCall, replay, replay_calls
from tasks.tau_airline.tools import Working, call
from tasks.tau_airline.trajectory import ToolCall, Trajectory, shipped_trajectories


@cache
def trajectories() -> dict[str, Trajectory]:
    return {trajectory.name: trajectory for trajectory in shipped_trajectories()}


@cache
def replayed(name: str) -> Replay:
    return replay(trajectories()[name])


def at(name: str, source_index: int) -> ReplayedCall:
    (only,) = replayed(name).call_at(source_index)
    return only


def test_a_booking_that_does_not_add_up_fails_and_changes_nothing():
    refused = at("task000-trial0", 20)
    assert refused.tool == "book_reservation" and not refused.ok
    assert refused.error == "payment amount does not add up, total price is 305, but paid 255"
    assert refused.changed == frozenset() and refused.after is refused.before


def test_a_booking_creates_hathat_uses_up_the_certificate_and_lists_the_reservation():
    booked = at("task000-trial0", 28)
    assert booked.ok and booked.error is None
    assert booked.changed == {("reservation", "HATHAT"), ("user", "mia_li_3668")}
    assert booked.before.reservation("HATHAT") is None
    reservation = booked.after.reservation("HATHAT")
    assert [(f["flight_number"], f["price"], f["origin"], f["destination"]) for f in reservation["flights"]] == [
        ("HAT136", 152, "JFK", "ATL"),
        ("HAT039", 103, "ATL", "SEA"),
    ]
    assert reservation["created_at"] == "2024-05-15T15:00:00" and reservation["nonfree_baggages"] == 1
    before, after = booked.before.user("mia_li_3668"), booked.after.user("mia_li_3668")
    assert "certificate_7504069" in before["payment_methods"] and "certificate_7504069" not in after["payment_methods"]
    assert after["reservations"] == ("NO6JO3", "AIXC49", "HKEG34", "HATHAT")
    # Seats are not taken (as recorded): the flight is untouched.
    assert booked.after.flight_date("HAT136", "2024-05-20") == booked.before.flight_date("HAT136", "2024-05-20")


def test_a_flight_update_reprices_the_segments_but_keeps_the_old_cabin_as_recorded():
    updated = at("task002-trial0", 14)
    assert updated.arguments["cabin"] == "economy" and updated.ok
    reservation = updated.after.reservation("JG7FMM")
    assert reservation["cabin"] == "business"  # the environment's bug the shield reports as effect_mismatch
    assert [f["price"] for f in reservation["flights"]] == [140, 101]
    # (140 + 101) x 2 passengers - (1859 + 1679) x 2 refunded to the card.
    assert reservation["payment_history"][-1] == {"payment_id": "credit_card_2929732", "amount": -6594}
    assert updated.changed == {("reservation", "JG7FMM")}


def test_a_cancellation_sets_the_status_and_negates_every_payment_line():
    cancelled = at("task015-trial0", 26)
    reservation = cancelled.after.reservation("GV1N64")
    assert reservation["status"] == "cancelled" and "status" not in cancelled.before.reservation("GV1N64")
    assert [line["amount"] for line in reservation["payment_history"]] == [5700, -5700]
    # No balance refund to the gift card (the recorded environment refunds in "5 to 7 business days").
    assert cancelled.changed == {("reservation", "GV1N64")}


def test_a_certificate_is_added_under_the_first_free_id():
    sent = at("task037-trial0", 16)
    assert sent.replayed_output == "Certificate certificate_3221322 added to user mei_brown_7075 with amount 200."
    certificate = sent.after.user("mei_brown_7075")["payment_methods"]["certificate_3221322"]
    assert dict(certificate) == {"source": "certificate", "amount": 200, "id": "certificate_3221322"}


def test_a_later_call_sees_an_earlier_write():
    # task014-trial0 changes YAX4DR's flights at message 24 (charging 1200), then its bags at 26.
    bags = at("task014-trial0", 26)
    history = bags.before.reservation("YAX4DR")["payment_history"]
    assert [line["amount"] for line in history] == [498, 1200]
    assert bags.after.reservation("YAX4DR")["total_baggages"] == 2


def test_a_next_day_connection_shows_the_first_dates_seats_as_recorded():
    search = at("task017-trial0", 8)
    first, second = json.loads(search.replayed_output)[0]
    assert (first["flight_number"], first["date"], second["flight_number"], second["date"]) == ("HAT112", "2024-05-24", "HAT047", "2024-05-25")
    shown = search.before.flight_date("HAT047", "2024-05-24")
    assert second["available_seats"] == dict(shown["available_seats"]) == {"basic_economy": 15, "economy": 12, "business": 13}
    assert search.matches


def test_before_views_keep_their_moment_after_later_writes():
    calls = replayed("task000-trial0").calls
    booked = next(c for c in calls if c.ok and c.tool == "book_reservation")
    first = calls[0]
    assert first.before.reservation("HATHAT") is None and first.after.reservation("HATHAT") is None
    assert replayed("task000-trial0").final.reservation("HATHAT") == booked.after.reservation("HATHAT")


def test_replaying_everything_leaves_the_shared_base_untouched():
    digest = hashlib.sha256(json.dumps([dict(base_db().reservations), dict(base_db().users)]).encode()).hexdigest()
    for trajectory in shipped_trajectories():
        replay(trajectory)
    assert hashlib.sha256(json.dumps([dict(base_db().reservations), dict(base_db().users)]).encode()).hexdigest() == digest


def test_fidelity_every_mismatch_is_the_address_rename():
    measured = fidelity.measure(shipped_trajectories())
    assert sum(measured.calls.values()) == 1164
    assert sum(measured.equal.values()) == sum(measured.byte_equal.values()) == 1044
    assert {m.tool for m in measured.mismatches} == {"get_user_details"}
    assert len(measured.mismatches) == measured.calls["get_user_details"] == 120
    assert all(m.cause == fidelity.ADDRESS_RENAME for m in measured.mismatches)
    assert measured.share("cancel_reservation") == measured.share("update_reservation_flights") == 1.0


def test_the_rename_explanation_does_not_excuse_other_differences():
    view = DbView(base_db(), {})
    user = json.dumps(dict(base_db().users["mia_li_3668"]))
    forged = json.loads(user)
    forged["address"]["province"] = forged["address"].pop("state")
    forged["membership"] = "regular"
    tool_call = ToolCall(source_index=3, call_id="c", name="get_user_details", arguments={"user_id": "mia_li_3668"}, recorded_output=json.dumps(forged), output_index=4)
    (replayed_call,) = replay_calls([tool_call]).calls
    assert replayed_call.matches is False and fidelity.explain(replayed_call) == "unexplained"
    assert view.user("mia_li_3668")["membership"] == "gold"


def test_recorded_outputs_are_never_trusted():
    # A recording claiming the booking succeeded does not make it succeed.
    forged = ToolCall(
        source_index=5,
        call_id="x",
        name="book_reservation",
        arguments=trajectories()["task000-trial0"].calls[4].arguments,
        recorded_output='{"reservation_id": "HATHAT", "status": "confirmed"}',
        output_index=6,
    )
    (replayed_call,) = replay_calls([forged]).calls
    assert not replayed_call.ok
    assert replayed_call.after.reservation("HATHAT") is None and replayed_call.matches is False


@pytest.mark.parametrize(
    ("tool", "arguments", "error"),
    [
        ("book_reservation", {"user_id": "mia_li_3668"}, "Error: invalid arguments for book_reservation"),
        ("update_reservation_passengers", {"reservation_id": "4WQ150", "passengers": "everyone"}, "Error: invalid arguments"),
        ("cancel_reservation", {"reservation_id": {"$ne": None}}, "Error: invalid arguments"),
        ("send_certificate", {"user_id": "mia_li_3668", "amount": "1e9"}, "Error: invalid arguments"),
        ("drop_database", {}, "Error: unknown tool drop_database"),
        ("cancel_reservation", {"reservation_id": "NOPE00"}, "Error: reservation not found"),
        ("update_reservation_passengers", {"reservation_id": "4WQ150", "passengers": []}, "Error: number of passengers does not match"),
        ("update_reservation_flights", {"reservation_id": "4WQ150", "cabin": "business", "flights": [], "payment_id": "certificate_0"}, "Error: payment method not found"),
    ],
    ids=["missing-fields", "passengers-not-a-list", "id-not-a-string", "amount-not-a-number", "unknown-tool", "unknown-reservation", "passenger-count", "foreign-payment"],
)
def test_hostile_calls_get_an_error_and_write_nothing(tool, arguments, error):
    working = Working(DbView(base_db(), {}))
    assert call(working, tool, arguments).startswith(error)
    assert working.writes == {}


def test_arguments_nested_past_the_interpreter_limit_are_an_error_not_a_crash():
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    flights = [{"flight_number": "HAT136", "date": "2024-05-20", "extra": deep}]
    arguments = {"reservation_id": "4WQ150", "cabin": "business", "flights": flights, "payment_id": "gift_card_3576581"}
    working = Working(DbView(base_db(), {}))
    assert call(working, "update_reservation_flights", arguments) == "Error: invalid arguments for update_reservation_flights: nested too deeply"
    assert working.writes == {}


@pytest.mark.parametrize(
    ("expression", "output"),
    [
        ("152 + 103", "255.0"),
        ("2 * (3 + 4)", "14.0"),
        ("10 / 3", "3.33"),
        ("-5 + 2", "-3.0"),
        ("1 / 0", "Error: division by zero"),
        ("__import__('os').system('id')", "Error: invalid characters in expression"),
        ("9**9**9", "Error: exponent too large"),
        ("((1 + 2)", "Error: invalid syntax"),
        ("1" + "+1" * 400, "Error: expression too long"),
        ("(" * 240 + "1" + ")" * 240, "Error: invalid syntax"),
    ],
    ids=["sum", "parentheses", "rounding", "sign", "zero-division", "code", "power-bomb", "syntax", "too-long", "nesting"],
)
def test_calculate_evaluates_arithmetic_only(expression, output):
    assert calculate(expression) == output
