"""The shipped JSON Schemas (graph, trace, facts) and one-line validation errors.

Schemas live as package data under `harness/shield/schemas/` so other tools can validate the same
files. Validation uses `fastjsonschema`, which compiles a schema to Python once: a trace check costs
microseconds, which the batch throughput target (thousands of traces per second) needs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Literal

import fastjsonschema

from harness.errors import HarnessError

SchemaName = Literal["graph", "trace", "facts"]
Validator = Callable[[Any], Any]

_EVENT_PATH = re.compile(r"^data\.events\[(\d+)\]")


@cache
def schema(name: SchemaName) -> dict[str, Any]:
    """The JSON Schema document for `name`, read from package data."""
    text = resources.files("harness.shield").joinpath("schemas").joinpath(f"{name}.schema.json").read_text()
    return json.loads(text)


@cache
def validator(name: SchemaName) -> Validator:
    return fastjsonschema.compile(schema(name))


def describe_error(error: fastjsonschema.JsonSchemaValueException) -> str:
    """`event 3: field 'event_type' must be one of [...]` rather than fastjsonschema's `data.…` paths."""
    where = error.name or "data"
    message = error.message
    match = _EVENT_PATH.match(where)
    prefix = f"event {match.group(1)}: " if match else ""
    field = where.removeprefix("data").lstrip(".") or "top level"
    message = message.replace(where, "").strip()
    return f"{prefix}field {field!r} {message}"


def validate(name: SchemaName, data: Any, source: str) -> None:
    """Raise `HarnessError` naming `source`, the event index and the field when `data` is invalid."""
    try:
        validator(name)(data)
    except fastjsonschema.JsonSchemaValueException as error:
        raise HarnessError(f"{source}: invalid {name}: {describe_error(error)}") from None


def compile_tool_schema(schema_doc: dict[str, Any], where: str) -> Validator:
    """Compile a tool's `input_schema`; a malformed schema is the graph author's error."""
    try:
        return fastjsonschema.compile(schema_doc)
    except fastjsonschema.JsonSchemaDefinitionException as error:
        raise HarnessError(f"{where}: invalid input_schema: {error}") from None


def read_json(path: str, kind: str) -> Any:
    """Parse a JSON file, turning I/O and syntax errors into one line naming the file and line."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise HarnessError(f"{path}: cannot read {kind}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise HarnessError(f"{path}: {kind} is not valid JSON: {error.msg} at line {error.lineno}") from None
