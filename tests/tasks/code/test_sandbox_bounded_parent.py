"""The parent's work on data the candidate chose is bounded by construction (`_wire.py`).

A set or dict of int-subclass keys with a `__hash__` of their own is cheap to build in the jail;
the keys arrive as plain ints `k * (2**61 - 1)`, which all hash to 0, and rebuilding them in the
parent would be quadratic C work under the GIL, outside every deadline. Such a value must be
refused at once, alone and in a pooled run, where it would otherwise stall the honest candidate
next to it.
"""

from __future__ import annotations

import os
import select
import threading
import time

import pytest

from tasks.code import CodeAnchor, check_code_many
from tasks.code.loader import _bundled_rows
from tasks.code.sandbox import _wire
from tasks.code.sandbox.channel import Channel, JailStopped

ROWS = {row["task_id"]: row for row in _bundled_rows()}
COLLIDING = """
class _Key(int):
    def __hash__(self):
        return id(self)
def has_close_elements(numbers, threshold):
    keys = [_Key(k * (2**61 - 1)) for k in range(1, 60_000)]
    return {SHAPE}
"""
SHAPES = {"set": "set(keys)", "dict": "{key: 0 for key in keys}", "frozenset_in_list": "[frozenset(keys)]"}


def anchor(task_id: str) -> CodeAnchor:
    row = ROWS[task_id]
    return CodeAnchor(task_id, row["prompt"], row["test"], row["entry_point"], row["canonical_solution"])


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(["S", [["h", hex(k * (2**61 - 1))] for k in range(1, 20)]], id="set"),
        pytest.param(["d", [[["h", hex(k * (2**61 - 1))], ["n"]] for k in range(1, 20)]], id="dict"),
        pytest.param(["F", [["t", [["h", hex(k * (2**61 - 1))]]] for k in range(1, 20)]], id="frozenset-of-tuples"),
    ],
)
def test_colliding_keys_are_refused_before_the_set_is_built(value: list) -> None:
    with pytest.raises(_wire.WireError, match="share one hash"):
        _wire.decode(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(["S", [["i", -1], ["i", -2], ["i", 5]]], {-1, -2, 5}, id="honest-collision-of-minus-one-and-two"),
        pytest.param(["S", [["i", 1], ["f", "1.0"], ["b", True]]], {1}, id="equal-keys-merge"),
        pytest.param(["d", [[["s", "a"], ["i", 1]], [["s", "a"], ["i", 2]]]], {"a": 2}, id="repeated-dict-key"),
    ],
)
def test_honest_sets_and_dicts_still_decode(value: list, expected: object) -> None:
    assert _wire.decode(value) == expected


def test_a_json_object_in_a_record_is_refused() -> None:
    with pytest.raises(_wire.WireError, match="JSON object"):
        _wire.loads(b'["return", 0, {"a": 1}]')


@pytest.mark.parametrize("shape", list(SHAPES))
def test_colliding_answer_alone_and_beside_an_honest_candidate(shape: str) -> None:
    hostile = COLLIDING.replace("{SHAPE}", SHAPES[shape])
    honest = ROWS["HumanEval/4"]["canonical_solution"]
    started = time.monotonic()
    outcomes = check_code_many([(anchor("HumanEval/0"), hostile), (anchor("HumanEval/4"), honest)], workers=2)
    seconds = time.monotonic() - started
    assert outcomes[0].outcome == "wrong_answer" and "share one hash" in outcomes[0].details["reason"]
    assert outcomes[1].correct, outcomes[1].details["reason"]
    assert seconds < 8, f"the pooled run took {seconds:.1f} s"


def _channel_take(line: bytes) -> Channel:
    """A real channel over a real pipe, fed lines as the jail would write them (each after RS)."""
    reply_read, reply_write = os.pipe()
    request_read, request_write = os.pipe()
    os.set_blocking(reply_read, False)
    channel = Channel(request_write, reply_read, time.monotonic() + 5, lambda call: None)

    def write() -> None:
        try:
            with os.fdopen(reply_write, "wb") as pipe:
                pipe.write(b"".join(b"\x1e" + record + b"\n" for record in line.split(b"\n")[:-1]))
        except BrokenPipeError:
            pass  # the channel stopped reading: what the refusal should do

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while not channel._closed:
            select.select([reply_read], [], [], 5)
            channel._read()
    finally:
        channel.close()
        writer.join(5)
        os.close(request_read)
    return channel


JUNK = b"[0]," * 500_000 + b"0"  # more arrays than `_wire.MAX_ARRAYS`
REFUSED_RECORDS = [
    pytest.param(b'["event","note","x",[' + JUNK + b"]]\n", "longer than", id="oversized-event"),
    pytest.param(b'["return",0,[' + JUNK + b"]]\n", "arrays", id="return-of-tiny-arrays"),
    pytest.param(b'["event","note","x",[[0]]]\n', "malformed event", id="event-call-not-an-int"),
    # Red team sandbox3 a_regex: past the array count, a string that never closes, full of escaped
    # quotes, made the strings' scan restart at each quote (40,000 of them: 32 s under the GIL).
    pytest.param(b'["return",' + b"[" * 400_100 + b'"' + b'\\"' * 40_000 + b"\n", "unclosed string", id="unclosed-string-of-escaped-quotes"),
]


@pytest.mark.parametrize(("line", "message"), REFUSED_RECORDS)
def test_a_record_is_shaped_and_sized_on_its_bytes_before_parsing(line: bytes, message: str) -> None:
    """Red-team pooled_neighbour_gil: a junk record the jail writes on its own pipe must not cost
    the parent seconds of parsing under the GIL; it is refused from its bytes."""
    started = time.process_time()
    with pytest.raises(JailStopped, match=message) as stopped:
        _channel_take(line)
    assert stopped.value.kind == "protocol"
    assert time.process_time() - started < 0.5


@pytest.mark.parametrize(
    "line",
    [b'["\\u0065vent","note","x",[' + JUNK + b"]]\n", b"[[" + JUNK + b"]]\n", b'{"a": 1}\n'],
    ids=["escaped-event-kind", "bare-array", "json-text-sequence"],
)
def test_a_line_that_is_no_record_is_the_programs_output_told_on_its_bytes(line: bytes) -> None:
    """What follows an RS but starts with no kind the jail writes is the program's own output
    (red team sandbox6 `h2`, `h3`: an honest RFC 7464 JSON sequence stopped the run), counted and
    never parsed, however many arrays it holds."""
    started = time.process_time()
    channel = _channel_take(line)
    assert channel.output_bytes >= len(line) and channel.events == []
    assert time.process_time() - started < 0.5


def test_honest_records_still_pass_the_byte_checks() -> None:
    channel = _channel_take(b'["event","file_write","/x",null]\n["event","note","y",3]\n["return",0,["s","' + b"[" * 900_000 + b'"]]\n')
    assert [event["kind"] for event in channel.events] == ["file_write", "note"]
    assert _wire.decode(channel.receive()[2]) == "[" * 900_000


SPAMMER = """
import os
def has_close_elements(numbers, threshold):
    junk = {LINE}
    for _ in range(4):
        view = memoryview(junk)
        while view:
            view = view[os.write(1, view):]  # the jail's own reply pipe, its stdout
    return False
"""


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        pytest.param("""b'\\x1e["event","note","x",[' + b'[0],' * (15 * 1024 * 1024 // 4) + b'0]]\\n'""", "longer than", id="spam"),
        # Red team sandbox3 a_regex, in the pool it stalled.
        pytest.param("""b'\\x1e["return",' + b'[' * 400_100 + b'"' + b'\\\\"' * 40_000 + b'\\n'""", "unclosed string", id="unclosed-string"),
    ],
)
def test_a_hostile_record_beside_an_honest_candidate_is_refused_at_once(line: str, reason: str) -> None:
    hostile = SPAMMER.replace("{LINE}", line)
    honest = ROWS["HumanEval/4"]["canonical_solution"]
    started = time.monotonic()
    outcomes = check_code_many([(anchor("HumanEval/0"), hostile), (anchor("HumanEval/4"), honest)], workers=2)
    seconds = time.monotonic() - started
    assert not outcomes[0].correct and reason in outcomes[0].details["reason"], outcomes[0].details["reason"]
    assert outcomes[1].correct, outcomes[1].details["reason"]
    assert seconds < 8, f"the pooled run took {seconds:.1f} s"
