"""Tool schemas against the official JSON-Schema-Test-Suite: every test of the files whose values an
agent writes (patterns, ECMA-262 regex semantics, the formats), run through `compile_tool_schema`.

The files are copied into `data/json-schema-test-suite/` (MIT, see its README) so CI needs nothing else.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.shield.json_schema import SchemaValueError, compile_tool_schema

SUITE = Path(__file__).parent / "data" / "json-schema-test-suite" / "draft7"
FILES = [
    "pattern.json",
    "patternProperties.json",
    "optional/ecmascript-regex.json",
    *(f"optional/format/{name}.json" for name in ("date", "date-time", "email", "hostname", "ipv4", "regex", "time", "uri")),
]


def _cases() -> list[Any]:
    cases = []
    for name in FILES:
        for group in json.loads((SUITE / name).read_text(encoding="utf-8")):
            for test in group["tests"]:
                cases.append(pytest.param(group["schema"], test["data"], test["valid"], id=f"{name}:{group['description']}:{test['description']}"))
    return cases


CASES = _cases()


def test_the_suite_files_hold_446_tests() -> None:
    assert len(CASES) == 446


def _accepts(schema: Any, data: Any) -> bool:
    validate = compile_tool_schema(schema if isinstance(schema, dict) else {"allOf": [schema]}, "tool t")
    try:
        validate(data)
    except SchemaValueError:
        return False
    return True


def test_every_suite_test_is_right() -> None:
    """One test over all 446 (a parameter each would make the suite slow for nothing): names the wrong ones."""
    wrong = [case.id for case in CASES if _accepts(*case.values[:2]) is not case.values[2]]
    assert wrong == []
