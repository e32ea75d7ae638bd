"""The trusted side's evidence handling: the wire format, the bounded channel, the case count.

Everything a jail can send is decoded under caps here, and nothing it sends may raise anything
but a `WireError`/`JailStopped` (an OverflowError, RecursionError or MemoryError escaping would
crash the harness run).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time

import pytest

from tasks.code.sandbox._wire import (
    MAX_LINE,
    WireError,
    decode,
    dumps,
    encoder,
    loads,
    safe_text,
)
from tasks.code.sandbox.channel import MAX_KEPT_EVENTS, MAX_KINDS, TOO_MANY_KINDS, Channel, JailStopped
from tasks.code.sandbox.instrument import instrument
from tasks.code.sandbox.runner import CandidateFailure, run_check

ROUND_TRIP = [
    ("int", 3),
    ("negative_big_int", -(10**200)),
    ("float", 0.1),
    ("negative_zero", -0.0),
    ("inf", math.inf),
    ("bool", True),
    ("none", None),
    ("str_with_lone_surrogate", "a\ud800b"),
    ("bytes", b"\x00\xff"),
    ("nested", [("a", 1), {"k": {1, 2}}, frozenset({"x"})]),
]


@pytest.mark.parametrize("value", [r[1] for r in ROUND_TRIP], ids=[r[0] for r in ROUND_TRIP])
def test_plain_values_round_trip_with_their_exact_types(value: object) -> None:
    encode, _ = encoder()
    decoded = decode(loads(dumps(["v", encode(value)]).rstrip(b"\n"))[1])
    assert decoded == value and type(decoded) is type(value)
    assert repr(decoded) == repr(value)  # -0.0 stays -0.0, types inside containers too


def test_nan_survives_and_never_equals() -> None:
    encode, _ = encoder()
    assert math.isnan(decode(encode(float("nan"))))


class _Liar(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class _ClassLiar:
    __class__ = bool  # type: ignore[assignment]


@pytest.mark.parametrize("value", [_ClassLiar(), [1, _ClassLiar()], {"k": _ClassLiar()}, object()], ids=["class_liar", "in_list", "in_dict", "object"])
def test_non_builtin_values_never_decode(value: object) -> None:
    encode, _ = encoder()
    with pytest.raises(WireError, match="non-builtin"):
        decode(encode(value))


def test_encoder_budget_marks_oversized_values() -> None:
    encode, reset = encoder()
    with pytest.raises(WireError, match="too large|size limit"):
        decode(encode(list(range(300_000))))
    reset()
    assert decode(encode([1])) == [1]


MALFORMED = [
    ("json_infinity_where_a_record_is", b'["done", 1e999]', None),  # parses: kind checks reject it later
    ("deeply_nested", b"[" * 100_000 + b"]" * 100_000, "undecodable"),
    ("not_json", b"('done', 7)", "undecodable"),
    ("not_a_list", b'{"a": 1}', "JSON object"),
    ("object_inside", b'["return", 0, {"a": 1}]', "JSON object"),
    ("empty_list", b"[]", "non-empty list"),
    ("non_ascii", "[\"é\"]".encode(), "undecodable"),
]


@pytest.mark.parametrize(("line", "message"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_lines_raise_only_wire_errors(line: bytes, message: str | None) -> None:
    if message is None:
        assert loads(line) == ["done", math.inf]
    else:
        with pytest.raises(WireError, match=message):
            loads(line)


TAGS = [
    ("huge_hex_int", ["h", "0x" + "f" * 30_000], "malformed"),
    ("float_not_text", ["f", 1.0], "malformed"),
    ("int_out_of_range_as_number", ["i", 10**30], "malformed"),
    ("unknown_tag", ["zz", 1], "malformed"),
    ("unhashable_set_member", ["S", [["l", []]]], "unhashable"),
]


@pytest.mark.parametrize(("tagged", "message"), [t[1:] for t in TAGS], ids=[t[0] for t in TAGS])
def test_malformed_values_raise_wire_errors(tagged: object, message: str) -> None:
    with pytest.raises(WireError, match=message):
        decode(tagged)


def test_values_nested_past_the_depth_limit_raise() -> None:
    value: list = ["n"]
    for _ in range(60):
        value = ["l", [value]]
    with pytest.raises(WireError, match="deep"):
        decode(value)


def test_safe_text_escapes_lone_surrogates() -> None:
    text = safe_text("bad \ud800 text")
    text.encode("utf-8")
    json.dumps(text, ensure_ascii=False).encode("utf-8")
    assert text == "bad \\ud800 text"


def _channel(lines: list[bytes], deadline_s: float = 5.0) -> Channel:
    """A channel whose reply pipe already holds `lines` (each framed as the jail frames a record:
    RS first) and is then closed, as a dead jail's."""
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    os.close(request_r)

    def feed() -> None:
        for line in lines:
            os.write(reply_w, b"\x1e" + line)
        os.close(reply_w)

    threading.Thread(target=feed, daemon=True).start()
    return Channel(request_w, reply_r, time.monotonic() + deadline_s, lambda call: call)


def test_a_forged_infinite_record_stops_the_run_without_crashing() -> None:
    channel = _channel([b'["return",0,1e999]\n'])
    record = channel.receive()  # the channel returns it; the executor's shape checks refuse it
    assert record == ["return", 0, math.inf]
    with pytest.raises(JailStopped, match="exited"):
        channel.receive()
    with pytest.raises(JailStopped, match="exited"):  # a kind the jail never writes: the program's output, never parsed
        _channel([b'["done", 1e999]\n']).receive()


def test_a_line_over_the_cap_stops_the_run() -> None:
    channel = _channel([b"[" + b" " * (MAX_LINE + 10)])
    with pytest.raises(JailStopped) as stopped:
        channel.receive()
    assert stopped.value.kind == "protocol"


def test_a_malformed_event_stops_the_run() -> None:
    with pytest.raises(JailStopped, match="malformed event"):
        _channel([b'["event", 1, 2, 3]\n']).receive()


def test_event_flood_keeps_the_first_of_every_kind_and_counts_all() -> None:
    flood = [dumps(["event", "frame_inspection", "x", None]) for _ in range(MAX_KEPT_EVENTS + 50)]
    flood.append(dumps(["event", "process_spawn", "os.system('\ud800')", 0]))
    flood.append(dumps(["ready"]))
    channel = _channel(flood)
    assert channel.receive() == ["ready"]
    kinds = [event["kind"] for event in channel.events]
    assert len(kinds) == MAX_KEPT_EVENTS + 1 and kinds[-1] == "process_spawn"
    assert channel.event_counts == {"frame_inspection": MAX_KEPT_EVENTS + 50, "process_spawn": 1}
    assert channel.events[-1]["detail"] == "os.system('\\ud800')" and channel.events[-1]["test_index"] == 0


def test_a_silent_jail_times_out_within_the_deadline() -> None:
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    channel = Channel(request_w, reply_r, time.monotonic() + 0.3, lambda call: call)
    started = time.monotonic()
    try:
        with pytest.raises(JailStopped) as stopped:
            channel.receive()
    finally:
        for fd in (request_r, reply_w):
            os.close(fd)
        channel.close()
    assert stopped.value.kind == "timeout" and time.monotonic() - started < 2.0


def test_a_jail_that_never_reads_cannot_block_a_large_request() -> None:
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    channel = Channel(request_w, reply_r, time.monotonic() + 0.3, lambda call: call)
    try:
        with pytest.raises(JailStopped, match="timeout"):
            channel.send(["call", 0, ["s", "x" * (1 << 20)], ["d", []]])
    finally:
        for fd in (request_r, reply_w):
            os.close(fd)
        channel.close()


TEST = """
def check(candidate):
    assert candidate(1) == 2
    for i in range(3):
        assert candidate(i) == i + 1
"""


def test_instrument_counts_every_assert_evaluation() -> None:
    test = instrument(TEST)
    assert [site.line for site in test.sites] == [3, 5]
    run = run_check(test, "", "f", lambda args, kwargs, case: args[0] + 1)
    assert [(case.index, case.site, case.passed) for case in run.cases] == [(0, 0, True), (1, 1, True), (2, 1, True), (3, 1, True)]
    assert run.cases[0].returned == ("2",)


def test_instrument_rejects_tests_without_check_or_asserts() -> None:
    with pytest.raises(ValueError, match="no check"):
        instrument("def test():\n    assert True\n")
    with pytest.raises(ValueError, match="no assert"):
        instrument("def check(candidate):\n    pass\n")


def test_a_candidate_failure_the_test_swallows_is_still_recorded() -> None:
    swallowing = "def check(candidate):\n    try:\n        assert candidate(1) == 2\n    except BaseException:\n        pass\n"

    def raising(args: tuple, kwargs: dict, case: int | None) -> object:
        raise CandidateFailure("raised", "ValueError: no")

    run = run_check(instrument(swallowing), "", "f", raising)
    assert run.failure is not None and run.failure.reason == "ValueError: no"
    assert [case.passed for case in run.cases] == [False]


def test_the_test_gets_the_prompts_helpers_not_the_candidates() -> None:
    # Every name but `candidate` is the reference's, the entry point's own name included.
    helpers = "def helper(x):\n    return x * 10\n\ndef f(x):\n    return x * 10\n"
    test = "def check(candidate):\n    assert candidate(1) == helper(1)\n    assert f is not candidate and f(2) == 20\n"
    run = run_check(instrument(test), helpers, "f", lambda args, kwargs, case: 10)
    assert [case.passed for case in run.cases] == [True, True] and run.test_error is None


class _Point(tuple):  # a namedtuple-like tuple subclass that lies when iterated
    def __iter__(self):  # type: ignore[override]
        return iter((99, 99))


class _Lies(dict):
    def items(self):  # type: ignore[override]
        return [("forged", 1)]

    def __eq__(self, other: object) -> bool:
        return True


SUBCLASSES = [
    ("int_subclass_sends_its_true_value", _Liar(5), 5),
    ("tuple_subclass_sends_its_stored_items", _Point((1, 2)), (1, 2)),
    ("dict_subclass_sends_its_stored_items", _Lies(real=2), {"real": 2}),
    ("counter", __import__("collections").Counter("aab"), {"a": 2, "b": 1}),
    ("ordered_dict", __import__("collections").OrderedDict(b=1, a=2), {"b": 1, "a": 2}),
]


@pytest.mark.parametrize(("value", "expected"), [s[1:] for s in SUBCLASSES], ids=[s[0] for s in SUBCLASSES])
def test_builtin_subclasses_arrive_as_their_true_base_values(value: object, expected: object) -> None:
    encode, _ = encoder()
    decoded = decode(encode(value))
    assert decoded == expected and type(decoded) is type(expected)


def test_made_up_kinds_cannot_grow_the_kept_events_without_bound() -> None:
    flood = [dumps(["event", f"kind-{n}", "", None]) for n in range(5000)] + [dumps(["ready"])]
    channel = _channel(flood)
    assert channel.receive() == ["ready"]
    assert len(channel.events) == MAX_KEPT_EVENTS and len(channel.event_counts) == MAX_KINDS + 1
    assert channel.event_counts[TOO_MANY_KINDS] == 5000 - MAX_KINDS
    assert channel.events[MAX_KINDS]["kind"] == TOO_MANY_KINDS
