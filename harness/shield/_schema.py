"""The shipped JSON Schemas (graph, trace, facts), strict JSON reading, and one-line errors.

Schemas live as package data under `harness/shield/schemas/` so other tools can validate the same
files. Validation uses `fastjsonschema`, which compiles a schema to Python once: a trace check costs
microseconds, which the batch throughput target (thousands of traces per second) needs. Every
`pattern` is translated to its ECMA-262 meaning first (`ecma_regex`), and a tool schema may only
`$ref` into itself: fastjsonschema would fetch any other URI over the network.

Everything the shield reads is hostile (the agent writes the trace), so reading is strict: only
regular files (a FIFO would block, `/dev/zero` never ends), at most `MAX_BYTES`, UTF-8, nesting at
most `MAX_DEPTH`, finite numbers only (Python's `json` accepts `NaN` and `Infinity`, which compare
false with everything and so pass `minimum`), integers within 64 bits, no lone surrogates. A
violation is one `HarnessError` line naming the file.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Literal, NoReturn

import fastjsonschema

from harness.core.errors import HarnessError
from harness.shield.ecma_regex import PatternError, to_python

SchemaName = Literal["graph", "trace", "facts"]
Validator = Callable[[Any], Any]

MAX_BYTES = 64 * 2**20  # a larger batch is a directory of files, each read on its own
MAX_DEPTH = 64
_INT_RANGE = (-(2**63), 2**64 - 1)  # CEL's int64 and uint64

_EVENT_PATH = re.compile(r"^data\.events\[(\d+)\]")
# Cheap tests on the raw text that say whether the slower walk over the parsed value is needed.
_LONG_DIGITS = re.compile(r"\d{19}")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _Rejected(ValueError):
    """Raised from inside `json.loads` hooks; carries the reason."""


def _constant(name: str) -> NoReturn:
    raise _Rejected(f"non-finite number {name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Rejected(f"number {text[:40]} is out of range")
    return value


def _walk(value: Any, check_strings: bool) -> None:
    """Depth, integer range and (when escapes suggest them) lone surrogates, without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > MAX_DEPTH:
                raise _Rejected(f"nested deeper than {MAX_DEPTH} levels")
            if check_strings:
                for key in item:
                    _valid_string(key)
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            if depth > MAX_DEPTH:
                raise _Rejected(f"nested deeper than {MAX_DEPTH} levels")
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, int) and not isinstance(item, bool):
            if not _INT_RANGE[0] <= item <= _INT_RANGE[1]:
                raise _Rejected(f"integer {str(item)[:24]}... does not fit in 64 bits")
        elif check_strings and isinstance(item, str):
            _valid_string(item)


def _valid_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _Rejected("string holds a lone UTF-16 surrogate") from None


def check_value(value: Any) -> None:
    """Raise `ValueError` unless `value` is a JSON value the shield accepts (see the module docstring).

    For values that did not come through `loads` (rows read from a facts database)."""
    _walk(value, check_strings=True)
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _Rejected(f"non-finite number {item}")
        elif not (item is None or isinstance(item, (bool, int, float, str))):
            raise _Rejected(f"{type(item).__name__} is not a JSON value")


def loads(text: str, where: str, kind: str) -> Any:
    """Parse one JSON document strictly; any problem is one `HarnessError` line naming `where`."""
    try:
        data = json.loads(text, parse_constant=_constant, parse_float=_finite)
        surrogates = _SURROGATE_ESCAPE.search(text) is not None
        if surrogates or text.count("[") + text.count("{") > MAX_DEPTH or _LONG_DIGITS.search(text):
            _walk(data, check_strings=surrogates)
    except json.JSONDecodeError as error:
        raise HarnessError(f"{where}: {kind} is not valid JSON: {error.msg} at line {error.lineno}") from None
    except RecursionError:
        raise HarnessError(f"{where}: {kind} is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as error:  # _Rejected, or an integer longer than Python converts
        reason = str(error) if isinstance(error, _Rejected) else "an integer does not fit in 64 bits"
        raise HarnessError(f"{where}: {kind} is not accepted JSON: {reason}") from None
    return data


def read_bytes(path: str, kind: str, limit: int = MAX_BYTES) -> bytes:
    """The contents of the regular file `path`, at most `limit` bytes.

    Opened non-blocking so that a FIFO cannot stall the open; the type is checked on the open
    descriptor, so a symlink to a device or FIFO is refused too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise HarnessError(f"{path}: cannot read {kind}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise HarnessError(f"{path}: cannot read {kind}: not a regular file")
        if info.st_size > limit:
            raise HarnessError(f"{path}: {kind} is larger than {limit} bytes")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise HarnessError(f"{path}: {kind} is larger than {limit} bytes")
    except OSError as error:
        raise HarnessError(f"{path}: cannot read {kind}: {error.strerror}") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data


def decode(data: bytes, where: str, kind: str) -> str:
    """`data` as UTF-8; invalid bytes are one line naming `where` and the offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise HarnessError(f"{where}: {kind} is not UTF-8 (invalid byte at offset {error.start})") from None


def read_text(path: str, kind: str) -> str:
    """`read_bytes` decoded as UTF-8."""
    return decode(read_bytes(path, kind), path, kind)


def read_json(path: str, kind: str) -> Any:
    """Read and parse one JSON file strictly (see the module docstring)."""
    return loads(read_text(path, kind), path, kind)


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
