"""Strict JSON input: the one way the shield (and the tasks built on it) read a JSON file.

Everything the shield reads is hostile (the agent writes the trace), so reading is strict: only
regular files (a FIFO would block, `/dev/zero` never ends), at most `MAX_BYTES`, UTF-8, nesting at
most `MAX_DEPTH`, finite numbers only (Python's `json` accepts `NaN` and `Infinity`, which compare
false with everything and so pass `minimum`), integers within 64 bits, no lone surrogates. A
violation is one `HarnessError` line naming the file.

    data = read_json("trace.json", "trace")      # the parsed value, or HarnessError("trace.json: ...")
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import Any, NoReturn

from harness.core import HarnessError

MAX_BYTES = 64 * 2**20  # a larger batch is a directory of files, each read on its own
MAX_DEPTH = 64
_INT_RANGE = (-(2**63), 2**64 - 1)  # CEL's int64 and uint64

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
