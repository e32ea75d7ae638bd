"""Tool parameter patterns and formats: ECMA-262 meaning, linear time, one line for what is refused."""

from __future__ import annotations

import time
from typing import Any

import pytest

from harness.core.errors import HarnessError
from harness.shield import parse_graph, parse_trace, verify
from harness.shield.json_schema import SchemaValueError, compile_tool_schema
from tests.harness.shield.conftest import HONEST_FACTS, search, step

# (ECMA pattern, string, does ECMA-262 with the `u` flag match it)
MATCHES = [
    ("^\\d{4}$", "2024", True),
    ("^\\d{4}$", "\u0662\u0660\u0662\u0664", False),  # Arabic-Indic digits: Python's \d matches them
    ("^\\d{4}$", "\uff12\uff10\uff12\uff14", False),  # fullwidth digits
    ("^\\d{4}$", "2024\n", False),  # Python's $ matches before a final newline
    ("^\\w+$", "caf\u00e9", False),
    ("^[\\w-]+$", "a-b_c", True),
    ("^\\s$", "\ufeff", True),  # ECMA's \s includes U+FEFF, Python's does not
    ("^a.b$", "a\rb", False),
    ("^a.b$", "a\u00e9b", True),
    ("^\\$\\d$", "$5", True),
    ("^\\x41\\u0042$", "AB", True),
    ("^\\p{Lu}$", "\u00c9", True),  # Unicode property escapes are ECMA-262 with the u flag
]


def _validator(pattern: str, **extra: Any) -> Any:
    return compile_tool_schema({"type": "string", "pattern": pattern, **extra}, "tool t")


def _accepts(validate: Any, value: Any) -> bool:
    try:
        validate(value)
    except SchemaValueError:
        return False
    return True


@pytest.mark.parametrize(("pattern", "text", "expected"), MATCHES, ids=[f"{i}:{case[0]}" for i, case in enumerate(MATCHES)])
def test_patterns_match_as_ecma_262(pattern: str, text: str, expected: bool) -> None:
    assert _accepts(_validator(pattern), text) is expected


# Lookaround and backreferences need a backtracking engine; the linear-time one refuses them, and so
# does the graph: exit 2 with one line naming the tool and the pattern.
REFUSED = ["(?=a)a", "(?!a)b", "(?<=a)b", "(?<!a)b", "(a)\\1", "(?<n>a)\\k<n>", "(?i)abc", "(", "[a", "abc\\"]


@pytest.mark.parametrize("pattern", REFUSED)
def test_patterns_the_linear_engine_cannot_run_are_refused_in_one_line(pattern: str) -> None:
    with pytest.raises(HarnessError, match=r"^tool t: invalid input_schema: pattern at pattern is refused: ") as error:
        _validator(pattern)
    assert pattern in str(error.value) and "\n" not in str(error.value)


HOSTILE = [
    ("format_email_dots", {"format": "email"}, "a" + "." * 200_000),  # minutes on the backtracking regex of before
    ("format_hostname_dots", {"format": "hostname"}, "a" + "-." * 100_000),
    ("format_uri", {"format": "uri"}, "http://" + "a:" * 100_000),
    ("format_date_time", {"format": "date-time"}, "2024-01-01T" + "1" * 200_000),
    ("nested_quantifier", {"pattern": "^(a+)+$"}, "a" * 200_000 + "!"),
    ("alternation", {"pattern": "^(a|a)*$"}, "a" * 200_000 + "!"),
]


@pytest.mark.parametrize(("schema", "value"), [case[1:] for case in HOSTILE], ids=[case[0] for case in HOSTILE])
def test_no_agent_written_string_costs_more_than_linear_time(schema: dict[str, Any], value: str) -> None:
    validate = compile_tool_schema({"type": "string", **schema}, "tool t")
    start = time.perf_counter()
    assert not _accepts(validate, value)
    assert time.perf_counter() - start < 1.0  # a backtracking matcher takes minutes; linear time is milliseconds


def test_email_is_the_address_only() -> None:
    validate = _validator(".*", format="email")
    assert _accepts(validate, "joe@example.com")
    assert not _accepts(validate, "Joe <joe@example.com>")


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
    assert report.violations[0].message.startswith("search: user_id: ")
    assert report.violations[0].message.endswith('does not match "^u\\d{4}$"')  # the pattern as written


def test_an_honest_id_passes_the_tool_pattern() -> None:
    trace = parse_trace({"task_id": "mini", "events": [step("start"), search(user="u0001"), step("choose", context={"chosen": "x"}), step("finish")]}, "t")
    assert verify(_graph("^u\\d{4}$"), trace, HONEST_FACTS).verdict == "pass"


def test_format_date_takes_ascii_digits_only() -> None:
    graph = _graph(".*", format="date")
    forged = parse_trace({"task_id": "mini", "events": [step("start"), search(user="\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661")]}, "t")
    assert "parameter_domain" in {v.kind for v in verify(graph, forged, HONEST_FACTS).violations}


@pytest.mark.parametrize("pattern", ["^(u", "(?=u)^u\\d{4}$"])
def test_verify_refuses_a_graph_whose_pattern_the_engine_cannot_run(pattern: str) -> None:
    trace = parse_trace({"task_id": "mini", "events": []}, "t")
    with pytest.raises(HarnessError, match=r"tool search: invalid input_schema: pattern at properties.user_id.pattern is refused") as error:
        verify(_graph(pattern), trace, HONEST_FACTS)
    assert "\n" not in str(error.value)


def test_a_schema_ref_outside_the_schema_is_refused_never_fetched() -> None:
    with pytest.raises(HarnessError, match="tool t: invalid input_schema: .*http://127.0.0.1:9/schema.json"):
        compile_tool_schema({"properties": {"a": {"$ref": "http://127.0.0.1:9/schema.json"}}}, "tool t")
    validate = compile_tool_schema({"definitions": {"id": {"pattern": "^\\d$"}}, "properties": {"a": {"$ref": "#/definitions/id"}}}, "tool t")
    validate({"a": "1"})
    with pytest.raises(SchemaValueError, match="does not match"):
        validate({"a": "\u0661"})
