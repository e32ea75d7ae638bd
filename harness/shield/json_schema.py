"""The shipped JSON Schemas (graph, trace, facts, labelled steps), their validation as one-line
errors, and tool input schemas with ECMA-262 patterns.

Schemas live as package data under `harness/shield/schemas/` so other tools can validate the same
files. Validation uses `fastjsonschema`, which compiles a schema to Python once: a trace check costs
microseconds, which the batch throughput target (thousands of traces per second) needs. Every
`pattern` is translated to its ECMA-262 meaning first (`ecma_regex`), and a tool schema may only
`$ref` into itself: fastjsonschema would fetch any other URI over the network. Reading the files
themselves is `json_input`'s job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Literal

import fastjsonschema

from harness.core import HarnessError
from harness.shield.ecma_regex import PatternError, to_python

SchemaName = Literal["graph", "trace", "facts", "labelled_steps"]
Validator = Callable[[Any], Any]

_EVENT_PATH = re.compile(r"^data\.events\[(\d+)\]")


@cache
def schema(name: SchemaName) -> dict[str, Any]:
    """The JSON Schema document for `name`, read from package data."""
    text = resources.files("harness.shield").joinpath("schemas").joinpath(f"{name}.schema.json").read_text()
    return json.loads(text)


@cache
def validator(name: SchemaName) -> Validator:
    return fastjsonschema.compile(ecma_schema(schema(name), name, local=False))


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


# Keywords whose value is a subschema, a list of subschemas, or a map of name -> subschema.
_ONE = ("additionalItems", "additionalProperties", "contains", "propertyNames", "if", "then", "else", "not")
_LIST = ("allOf", "anyOf", "oneOf")
_MAP = ("properties", "definitions", "$defs", "dependencies")


def ecma_schema(document: Any, where: str, *, local: bool = True, originals: dict[str, str] | None = None) -> Any:
    """A copy of the schema `document` with every `pattern` (and `patternProperties` key) translated
    to its ECMA-262 meaning; raises `HarnessError` for an untranslatable pattern, or (when `local`) a
    `$ref` or `$id` outside the document. `originals` collects translated -> written pattern."""
    originals = {} if originals is None else originals

    def _translate(pattern: str) -> str:
        try:
            translated = to_python(pattern)
        except PatternError as error:
            raise HarnessError(f"{where}: pattern {pattern!r} is refused: {error}") from None
        originals.setdefault(translated, pattern)
        return translated

    def sub(value: Any) -> Any:
        return ecma_schema(value, where, local=local, originals=originals)

    if not isinstance(document, dict):
        return [sub(item) for item in document] if isinstance(document, list) else document
    out: dict[str, Any] = {}
    for key, value in document.items():
        if key == "pattern" and isinstance(value, str):
            value = _translate(value)
        elif key == "patternProperties" and isinstance(value, dict):
            value = {_translate(pattern): sub(child) for pattern, child in value.items()}
        elif local and key in ("$ref", "$id", "id") and isinstance(value, str) and not value.startswith("#"):
            raise HarnessError(f"{where}: {key} {value!r} points outside the schema (only '#...' is allowed)")
        elif key in _ONE or key == "items":
            value = sub(value)
        elif key in _LIST and isinstance(value, list):
            value = [sub(item) for item in value]
        elif key in _MAP and isinstance(value, dict):
            value = {name: sub(child) for name, child in value.items()}
        out[key] = value
    return out


@cache
def _ascii_formats() -> dict[str, str]:
    """fastjsonschema's `format` regexes (`date`, `date-time`, ...) with `\\d` and `\\w` meaning ASCII:
    its own are compiled without `re.ASCII`, so `٢٠٢٤-٠١-٠١` would be a `date`."""
    from fastjsonschema.draft07 import CodeGeneratorDraft07

    return {name: f"(?a){regex}" for name, regex in CodeGeneratorDraft07.FORMAT_REGEXS.items()}


def compile_tool_schema(schema_doc: dict[str, Any], where: str) -> Validator:
    """Compile a tool's `input_schema` with ECMA-262 patterns; a malformed schema is the graph author's
    error, reported as one line, whether it shows when compiling or only when a value meets it (a
    `multipleOf` of 0, a `$ref` that refers to itself)."""
    originals: dict[str, str] = {}
    translated = ecma_schema(schema_doc, where, originals=originals)
    try:
        compiled = fastjsonschema.compile(translated, handlers={}, formats=_ascii_formats())
    except (fastjsonschema.JsonSchemaDefinitionException, re.error, ValueError, TypeError, LookupError, AttributeError, SyntaxError) as error:
        raise HarnessError(f"{where}: invalid input_schema: {error}") from None
    except RecursionError:
        raise HarnessError(f"{where}: invalid input_schema: nested too deeply") from None

    def validate_input(data: Any) -> Any:
        try:
            return compiled(data)
        except fastjsonschema.JsonSchemaValueException as error:
            if error.rule == "pattern" and isinstance(error.rule_definition, str) and error.rule_definition in originals:
                message = error.message.replace(error.rule_definition, originals[error.rule_definition])
                raise fastjsonschema.JsonSchemaValueException(message, error.value, error.name, error.definition, error.rule) from None
            raise
        except (ArithmeticError, LookupError, TypeError, ValueError, AttributeError, RecursionError) as error:
            raise HarnessError(f"{where}: invalid input_schema: it fails on a value ({type(error).__name__}: {error})") from None

    return validate_input
