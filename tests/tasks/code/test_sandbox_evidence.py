"""The trusted side: decoding tagged values and judging instrumented asserts."""

from __future__ import annotations

import math

import pytest

from tasks.code.sandbox.evidence import Opaque, UndecodableError, decode, is_plain, parse_evidence
from tasks.code.sandbox.instrument import instrument

DECODE = [
    ("int", ("int", 3), 3),
    ("big_int_as_text", ("int", "1" + "0" * 50), 10**50),
    ("float_repr", ("float", "0.1"), 0.1),
    ("bool", ("bool", True), True),
    ("none", ("none",), None),
    ("nested", ("list", [("tuple", [("str", "a"), ("int", 1)])]), [("a", 1)]),
    ("dict", ("dict", [(("str", "k"), ("set", [("int", 1)]))]), {"k": {1}}),
]


@pytest.mark.parametrize(("tagged", "value"), [d[1:] for d in DECODE], ids=[d[0] for d in DECODE])
def test_decode_plain_values(tagged: tuple, value: object) -> None:
    decoded = decode(tagged)
    assert decoded == value and type(decoded) is type(value)


def test_opaque_equals_nothing_and_poisons_containers() -> None:
    value = decode(("list", [("opaque", "Fake")]))
    assert isinstance(value[0], Opaque) and value[0] != value[0] and not is_plain(value)


@pytest.mark.parametrize("tagged", [("int", 1.5), ("float", 1.0), ("bogus", 1), "int", ()], ids=["int_float", "float_not_text", "unknown_tag", "not_tuple", "empty"])
def test_malformed_values_are_rejected(tagged: object) -> None:
    with pytest.raises(UndecodableError):
        decode(tagged)


def test_nan_float_decodes() -> None:
    assert math.isnan(decode(("float", "nan")))


def test_evidence_without_nonce_counts_as_forged() -> None:
    raw = b"n1 ('done', 0)\nforged ('done', 9)\nn1 not-a-literal(\n"
    parsed = parse_evidence(raw, "n1")
    assert parsed.records == (("done", 0),) and parsed.forged_lines == 2


def test_instrument_keeps_literal_expectations_out_of_the_sandbox() -> None:
    test = instrument("def check(candidate):\n    assert candidate(1) == 'SECRET'\n    for i in range(2):\n        assert candidate(i) < 5\n    assert not candidate(0)\n    assert candidate(2)\n")
    assert "SECRET" not in test.source
    assert [(s.kind, s.straight_line) for s in test.sites] == [
        ("equals_literal", True),
        ("compare", False),
        ("not", True),
        ("truth", True),
    ]
    assert test.sites[0].expected == "SECRET"


def test_instrument_rejects_tests_without_check() -> None:
    with pytest.raises(ValueError, match="no check"):
        instrument("def test():\n    assert True\n")
