"""The shipped JSON Schemas (graph, trace, facts, labelled steps), their validation as one-line
errors, and tool input schemas, all on one linear-time engine.

Schemas live as package data under `harness/shield/schemas/` so other tools can validate the same
files. Validation uses `jsonschema-rs` (Rust), for three reasons measured in `bench/tool_schema.py`:
- every string an agent writes is matched in linear time: `pattern`s run on Rust's `regex` engine
  (`RegexOptions`, finite automata, no backtracking) and `format`s are native parsers, so no input
  drives a matcher into super-linear time (a backtracking `email` regex took minutes on an address of
  dots);
- its patterns mean what JSON Schema says (ECMA-262 with the `u` flag: `\\d` is `[0-9]`, `$` is the
  end of the string) and its formats are right on all 446 tests of the JSON-Schema-Test-Suite files
  the shield relies on (`tests/harness/shield/data/json-schema-test-suite/`);
- it validates a trace in microseconds, which the batch throughput target needs.
A linear-time engine has no lookaround and no backreferences; a tool schema that uses them is
refused as the graph author's error (exit 2, one line naming the tool and the pattern). Schemas are
compiled offline: a `$ref` to anything but the schema itself is refused, never fetched. `email`
takes the addr-spec only (no `Name <a@b>` display text). Reading the files themselves is
`json_input`'s job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any, Literal

import jsonschema_rs

from harness.core import HarnessError

SchemaName = Literal["graph", "trace", "facts", "labelled_steps"]
Validator = Callable[[Any], None]
SchemaValueError = jsonschema_rs.ValidationError  # what a `Validator` raises for a value outside the schema


@cache
def schema(name: SchemaName) -> dict[str, Any]:
    """The JSON Schema document for `name`, read from package data."""
    text = resources.files("harness.shield").joinpath("schemas").joinpath(f"{name}.schema.json").read_text()
    return json.loads(text)


def _engine(document: Any) -> jsonschema_rs.Validator:
    """The one way a schema becomes a validator: draft 7, formats asserted, linear-time patterns, offline."""
    return jsonschema_rs.Draft7Validator(
        document,
        validate_formats=True,
        ignore_unknown_formats=True,
        pattern_options=jsonschema_rs.RegexOptions(),
        email_options=jsonschema_rs.EmailOptions(allow_display_text=False),
        offline=True,
    )


@cache
def validator(name: SchemaName) -> jsonschema_rs.Validator:
    return _engine(schema(name))


def field_path(path: Sequence[str | int]) -> str:
    """`events[3].event_type` from the engine's instance path `['events', 3, 'event_type']`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def describe_error(error: jsonschema_rs.ValidationError) -> str:
    """`event 3: field 'event_type' "x" is not one of [...]`, naming the event and the field."""
    path = list(error.instance_path)
    prefix = ""
    if len(path) >= 2 and path[0] == "events" and isinstance(path[1], int):
        prefix, path = f"event {path[1]}: ", path[2:]
    field = field_path(path) or "top level"
    return f"{prefix}field {field!r} {error.message[:300]}"


def validate(name: SchemaName, data: Any, source: str) -> None:
    """Raise `HarnessError` naming `source`, the event index and the field when `data` is invalid."""
    try:
        validator(name).validate(data)
    except jsonschema_rs.ValidationError as error:
        raise HarnessError(f"{source}: invalid {name}: {describe_error(error)}") from None
    except ValueError as error:  # a value the engine cannot take at all (nesting beyond its limit)
        raise HarnessError(f"{source}: invalid {name}: {str(error)[:200]}") from None


def _schema_problem(error: jsonschema_rs.ValidationError) -> str:
    """One line on why a tool schema does not compile; a pattern the engine refuses says why."""
    where = field_path(error.instance_path) or "top level"
    first = error.message.splitlines()[0][:200]
    if isinstance(error.kind, jsonschema_rs.ValidationErrorKind.Format) and error.kind.format == "regex":
        pattern = str(error.instance)
        shown = pattern[:200] if pattern[:200].isprintable() else repr(pattern[:200])
        return f"pattern at {where} is refused: {shown} is not a regular expression the linear-time engine runs ({_why_refused(pattern)})"
    return f"{where}: {first}"


_LOOKAROUND_OR_BACKREFERENCE = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")
_COUNTED_REPETITION = re.compile(r"\{\d+(?:,\d*)?\}")


def _why_refused(pattern: str) -> str:
    """The engine says only "not a regex"; name the cause it has. A pattern that compiles once its
    counted repetitions are cut to `{1}` was refused for its size (`(a{1000}){1000}` is a million
    states), not its syntax."""
    if _LOOKAROUND_OR_BACKREFERENCE.search(pattern):
        return "lookaround and backreferences are not supported"
    shrunk = _COUNTED_REPETITION.sub("{1}", pattern)
    if shrunk != pattern and _compiles(shrunk):
        return "it is too big: its counted repetitions multiply past the engine's size limit"
    return "it is not ECMA-262 syntax the engine accepts"


def _compiles(pattern: str) -> bool:
    try:
        _engine({"type": "string", "pattern": pattern})
    except jsonschema_rs.ValidationError:
        return False
    return True


def compile_tool_schema(schema_doc: dict[str, Any], where: str) -> Validator:
    """Compile a tool's `input_schema`; a malformed schema is the graph author's error, reported as
    one line naming `where` (a pattern that is not a linear-time ECMA-262 regex, a remote `$ref`, a
    `multipleOf` of 0). The validator raises `SchemaValueError` for a value outside the schema."""
    try:
        compiled = _engine(schema_doc)
    except jsonschema_rs.ValidationError as error:
        raise HarnessError(f"{where}: invalid input_schema: {_schema_problem(error)}") from None
    except (ValueError, jsonschema_rs.ReferencingError) as error:
        raise HarnessError(f"{where}: invalid input_schema: {str(error).splitlines()[0][:200]}") from None
    validate_value: Validator = compiled.validate
    return validate_value
