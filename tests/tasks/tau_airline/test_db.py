"""The shipped τ-bench airline database and its copy-on-write views."""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

from tasks.tau_airline.db import (
    CLOCK,
    DbView,
    base_db,
    changed_keys,
    data_file,
    freeze,
    thaw,
)


def test_the_shipped_database_has_the_documented_sizes_and_attribution():
    base = base_db()
    assert (len(base.flights), len(base.reservations), len(base.users)) == (300, 2000, 500)
    assert "MIT License" in data_file("LICENSE").read_text()
    assert "sierra-research/tau-bench" in data_file("README.md").read_text()
    assert len(json.loads(data_file("tools.json").read_text())) == 14
    assert CLOCK.isoformat() == "2024-05-15T15:00:00"


def test_hand_checked_entities_read_through_a_view():
    view = DbView(base_db(), {})
    assert view.flight_status("HAT001", "2024-05-03") == "cancelled"
    assert view.flight_status("HAT001", "2024-05-01") == "landed"
    assert view.flight_status("HAT001", "2031-01-01") is None
    assert view.flight_status("NOPE", "2024-05-01") is None
    reservation = view.reservation("4WQ150")
    assert (reservation["user_id"], reservation["cabin"], len(reservation["passengers"])) == ("chen_jackson_3290", "business", 3)
    assert reservation["flights"][1]["flight_number"] == "HAT022"
    assert view.user("mia_li_3668")["membership"] == "gold"
    assert view.reservation("HATHAT") is None


def test_entities_are_frozen_so_a_reader_cannot_corrupt_the_shared_base():
    view = DbView(base_db(), {})
    user = view.user("mia_li_3668")
    with pytest.raises(TypeError):
        user["membership"] = "regular"  # type: ignore[index]
    with pytest.raises(TypeError):
        user["payment_methods"]["certificate_7504069"]["amount"] = 10**6  # type: ignore[index]
    with pytest.raises(AttributeError):
        user["reservations"].append("HATHAT")  # type: ignore[attr-defined]
    assert base_db().users["mia_li_3668"]["membership"] == "gold"
    assert thaw(user) == base_db().users["mia_li_3668"]


def test_the_overlay_wins_and_new_entities_are_listed():
    base = base_db()
    cancelled = {**base.reservations["4WQ150"], "status": "cancelled"}
    view = DbView(base, {("reservation", "4WQ150"): cancelled, ("reservation", "HATHAT"): {"reservation_id": "HATHAT"}})
    assert view.reservation("4WQ150")["status"] == "cancelled"
    assert "status" not in base.reservations["4WQ150"]
    ids = list(view.ids("reservation"))
    assert len(ids) == 2001 and ids[-1] == "HATHAT" and ids.count("4WQ150") == 1
    assert view.overlay_keys() == {("reservation", "4WQ150"), ("reservation", "HATHAT")}


def test_changed_keys_ignore_a_rewrite_to_the_same_value():
    base = base_db()
    same = json.loads(json.dumps(base.users["mia_li_3668"]))
    different = {**same, "membership": "silver"}
    assert changed_keys(base, {}, {("user", "mia_li_3668"): same}) == frozenset()
    assert changed_keys(base, {}, {("user", "mia_li_3668"): different}) == {("user", "mia_li_3668")}
    before = {("user", "mia_li_3668"): different}
    assert changed_keys(base, before, dict(before)) == frozenset()


def test_freeze_and_thaw_round_trip_json():
    value = {"a": [1, {"b": [2, 3]}], "c": None}
    frozen = freeze(value)
    assert frozen["a"][1]["b"] == (2, 3)
    assert thaw(frozen) == value


# sha256 of τ-bench's files at commit 59a200c6 (the README's claim: decompressed, byte-identical).
SOURCE_SHA256 = {
    "flights.json.gz": "444d7565c68434a3e3fb72efd717f9f9cd5c56dce227f6f56e078f1cb0ed233a",
    "reservations.json.gz": "1cf0bbc58ad984be9de7c24dba6dd27393f94cdbd482d8524f6a54db1f561a8c",
    "users.json.gz": "bd264e2a31e0fa35cdfef8987e70a0dd3776828b582fe90e7a44823a12eb4cea",
    "trajectories-gpt-4o.json.gz": "e9e6c0297660c537f83d4fd9c476ce7a9a86ecd2784874b7bfc13be598e37bfa",
}


@pytest.mark.parametrize("name", sorted(SOURCE_SHA256))
def test_the_gzipped_files_decompress_to_the_attributed_source_bytes(name):
    assert hashlib.sha256(gzip.decompress(data_file(name).read_bytes())).hexdigest() == SOURCE_SHA256[name]
