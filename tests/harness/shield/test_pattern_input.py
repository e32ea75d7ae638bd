"""Tool parameter patterns mean what JSON Schema says (ECMA-262), not what Python's `re` says."""

from __future__ import annotations

import re
from typing import Any

import pytest

from harness.core.errors import HarnessError
from harness.shield import parse_graph, parse_trace, verify
from harness.shield.ecma_regex import PatternError, to_python
from tests.harness.shield.conftest import HONEST_FACTS, search, step

# (ECMA pattern, string, does ECMA-262 with the `u` flag match it)
MATCHES = [
    ("^\\d{4}$", "2024", True),
    ("^\\d{4}$", "\u0662\u0660\u0662\u0664", False),  # Arabic-Indic digits: Python's \d matches them
    ("^\\d{4}$", "\uff12\uff10\uff12\uff14", False),  # fullwidth digits
    ("^\\d{4}$", "2024\n", False),  # Python's $ matches before a final newline
    ("^\\w+$", "caf\u00e9", False),
    ("^[\\w-]+$", "a-b_c", True),
    ("^[\\w-]+$", "\u00e9", False),
    ("^\\s$", "\ufeff", True),  # ECMA's \s includes U+FEFF, Python's does not
    ("^\\s$", "\u001c", False),  # Python's \s includes the information separators
    ("^\\S+$", "a\u00a0b", False),
    ("\\bid\\b", "\u00e9id\u00e9", True),  # \b is an ASCII word boundary
    ("^a.b$", "a\rb", False),
    ("^a.b$", "a\u2028b", False),
    ("^a.b$", "a\u00e9b", True),
    ("^[^]$", "\n", True),
    ("^[]$", "", False),
    ("^[$]$", "$", True),
    ("^\\$\\d$", "$5", True),
    ("^(?<y>\\d)\\k<y>$", "11", True),
    ("^(?<y>\\d)\\k<y>$", "12", False),
    ("^[\\D]$", "\u0663", True),  # not an ASCII digit
    ("^\\x41\\u0042$", "AB", True),
    ("^\\cJ?a$", "a", None),  # None: refused, Python's re has no \c
]


@pytest.mark.parametrize(("pattern", "text", "expected"), MATCHES, ids=[f"{i}:{case[0]}" for i, case in enumerate(MATCHES)])
def test_patterns_match_as_ecma_262(pattern: str, text: str, expected: bool | None) -> None:
    if expected is None:
        with pytest.raises(PatternError):
            to_python(pattern)
    else:
        assert (re.search(to_python(pattern), text) is not None) is expected


REFUSED = ["(?i)abc", "\\Aabc\\Z", "a++", "a{,3}", "(?P<x>a)", "\\p{L}", "\\u{41}", "[\\S]", "(", "[a", "abc\\"]


@pytest.mark.parametrize("pattern", REFUSED)
def test_patterns_only_one_dialect_has_are_refused(pattern: str) -> None:
    with pytest.raises(PatternError):
        to_python(pattern)


def _graph(pattern: str, **schema: Any) -> Any:
    from tests.harness.shield.conftest import graph_data

    data = graph_data()
    data["tools"]["search"]["input_schema"]["properties"]["user_id"] = {"type": "string", "pattern": pattern, **schema}
    return parse_graph(data, "g.json")


@pytest.mark.parametrize(
    "user", ["u\u0660\u0660\u0660\u0661", "u0001\n", "u\uff10\uff10\uff10\uff11"], ids=["arabic_indic", "trailing_newline", "fullwidth"]
)
def test_a_forged_id_fails_the_tool_pattern(user: str) -> None:
    trace = parse_trace({"task_id": "mini", "events": [step("start"), search(user=user), step("choose", context={"chosen": "x"}), step("finish")]}, "t")
    report = verify(_graph("^u\\d{4}$"), trace, HONEST_FACTS)
    assert [(v.kind, v.event_index) for v in report.violations] == [("parameter_domain", 1)]
    assert report.violations[0].message.endswith("must match pattern ^u\\d{4}$")  # the pattern as written


def test_an_honest_id_passes_the_tool_pattern() -> None:
    trace = parse_trace({"task_id": "mini", "events": [step("start"), search(user="u0001"), step("choose", context={"chosen": "x"}), step("finish")]}, "t")
    assert verify(_graph("^u\\d{4}$"), trace, HONEST_FACTS).verdict == "pass"


def test_format_date_takes_ascii_digits_only() -> None:
    graph = _graph(".*", format="date")
    forged = parse_trace({"task_id": "mini", "events": [step("start"), search(user="\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661")]}, "t")
    assert "parameter_domain" in {v.kind for v in verify(graph, forged, HONEST_FACTS).violations}


@pytest.mark.parametrize("pattern", ["^(u", "(?i)^u\\d{4}$"])
def test_verify_refuses_a_graph_whose_pattern_is_not_ecma_262(pattern: str) -> None:
    trace = parse_trace({"task_id": "mini", "events": []}, "t")
    with pytest.raises(HarnessError, match=r"tool search: pattern .* is refused") as error:
        verify(_graph(pattern), trace, HONEST_FACTS)
    assert "\n" not in str(error.value)


def test_a_schema_ref_outside_the_schema_is_refused() -> None:
    from harness.shield.json_schema import compile_tool_schema

    with pytest.raises(HarnessError, match="points outside the schema"):
        compile_tool_schema({"properties": {"a": {"$ref": "http://127.0.0.1:9/schema.json"}}}, "tool t")
    validate = compile_tool_schema({"definitions": {"id": {"pattern": "^\\d$"}}, "properties": {"a": {"$ref": "#/definitions/id"}}}, "tool t")
    validate({"a": "1"})
    with pytest.raises(Exception, match="must match pattern"):
        validate({"a": "\u0661"})
