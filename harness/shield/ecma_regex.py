"""JSON Schema `pattern`s with ECMA-262 meaning, run on Python's `re`.

JSON Schema says a pattern is an ECMA-262 regular expression (with the `u` flag: it matches code
points). Handed to Python's `re` unchanged, the same text means something else, and the difference is
exploitable by whoever writes the matched string:
- `\\d` matches any Unicode digit in Python (Arabic-Indic `٣`, fullwidth `３`), only `[0-9]` in ECMA;
  `\\w` and `\\b` likewise; `\\s` differs the other way (ECMA's set includes U+FEFF, Python's lacks it);
- `$` matches before a final newline in Python (`"u0001\\n"` passes `^u[0-9]{4}$`), only at the end
  in ECMA; `.` matches `\\r`, U+2028 and U+2029 in Python, not in ECMA;
- `[]` and `[^]` are valid ECMA classes (nothing / anything) that Python reads differently.
`to_python` rewrites these into explicit ASCII classes and anchors, translates ECMA named groups, and
refuses constructs only one of the two dialects has (Python's inline flags, `\\A`, `\\Z`, possessive
quantifiers; ECMA's `\\p{...}`, `\\cX`, `\\u{...}`), so a pattern means one thing or is refused.
"""

from __future__ import annotations

import re

_SPACE = "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
_LINE_END = "\\n\\r\\u2028\\u2029"
_WORD = "A-Za-z0-9_"
_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
}
_INSIDE = {"d": "0-9", "w": _WORD, "s": _SPACE, "D": "\\x00-/:-\\U0010ffff", "W": "\\x00-/:-@\\[-^`{-\\U0010ffff", "b": "\\x08"}
_CONTROL = {"f": "\\x0c", "n": "\\n", "r": "\\r", "t": "\\t", "v": "\\x0b"}
_SYNTAX = set("^$\\.*+?()[]{}|/")
_HEX = re.compile(r"x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}")
_GROUP_NAME = re.compile(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>")
_BACKREF_NAME = re.compile(r"k<([A-Za-z_][A-Za-z0-9_]*)>")


class PatternError(ValueError):
    """A pattern that is not ECMA-262, or uses a construct whose meaning Python's `re` cannot keep."""


def _escape(pattern: str, index: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape starting at `pattern[index] == '\\\\'`; return (python text, next index)."""
    if index + 1 >= len(pattern):
        raise PatternError("pattern ends with a lone backslash")
    char = pattern[index + 1]
    table = _INSIDE if in_class else _OUTSIDE
    if char in table:
        return table[char], index + 2
    if char == "S" and in_class:
        raise PatternError("\\S inside a character class is not supported; write the class without it")
    if char in _CONTROL:
        return _CONTROL[char], index + 2
    hexa = _HEX.match(pattern, index + 1)
    if hexa:
        return "\\" + hexa.group(0), hexa.end()
    if char == "0" and not pattern[index + 2 : index + 3].isdigit():
        return "\\x00", index + 2
    if char.isdigit() and char != "0" and not in_class:
        end = index + 1
        while end < len(pattern) and pattern[end].isdigit():
            end += 1
        return f"(?:\\{pattern[index + 1 : end]})", end
    named = _BACKREF_NAME.match(pattern, index + 1)
    if named and not in_class:
        return f"(?P={named.group(1)})", named.end()
    if char in _SYNTAX or (in_class and char == "-"):
        return "\\" + char if char != "$" else "\\x24", index + 2
    raise PatternError(f"escape \\{char} has no ECMA-262 meaning that Python's re keeps")


def _char_class(pattern: str, index: int) -> tuple[str, int]:
    """Translate the class starting at `pattern[index] == '['`; return (python text, next index)."""
    index += 1
    negated = pattern.startswith("^", index)
    index += negated
    if pattern.startswith("]", index):  # ECMA: [] matches nothing, [^] anything
        return ("[\\x00-\\U0010ffff]" if negated else "(?!)"), index + 1
    parts = ["[^" if negated else "["]
    while index < len(pattern) and pattern[index] != "]":
        char = pattern[index]
        if char == "\\":
            text, index = _escape(pattern, index, in_class=True)
            parts.append(text)
            continue
        parts.append("\\x24" if char == "$" else "\\" + char if char in "[^&|~" else char)
        index += 1
    if index >= len(pattern):
        raise PatternError("unterminated character class")
    parts.append("]")
    return "".join(parts), index + 1


def _group_open(pattern: str, index: int) -> tuple[str, int]:
    """Translate `(` and any group prefix; only ECMA's group kinds are accepted."""
    if not pattern.startswith("(?", index):
        return "(", index + 1
    for prefix in ("(?:", "(?=", "(?!", "(?<=", "(?<!"):
        if pattern.startswith(prefix, index):
            return prefix, index + len(prefix)
    named = _GROUP_NAME.match(pattern, index)
    if named:
        return f"(?P<{named.group(1)}>", named.end()
    raise PatternError(f"group {pattern[index:index + 4]!r}... is not an ECMA-262 group")


def to_python(pattern: str) -> str:
    """The Python `re` text that matches what the ECMA-262 pattern `pattern` matches (`u` flag).

    Raises `PatternError` for a pattern that is invalid or that this translation cannot keep exact."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            text, index = _escape(pattern, index, in_class=False)
        elif char == "[":
            text, index = _char_class(pattern, index)
        elif char == "(":
            text, index = _group_open(pattern, index)
        elif char == "$":
            text, index = "\\Z", index + 1
        elif char == ".":
            text, index = f"[^{_LINE_END}]", index + 1
        elif char == "+" and out and out[-1] in ("*", "+", "?", "}"):
            raise PatternError("possessive quantifiers are not ECMA-262")
        elif pattern.startswith("{,", index):
            raise PatternError("'{,n}' is a quantifier in Python's re but not in ECMA-262")
        else:
            text, index = char, index + 1
        out.append(text)
    translated = "".join(out)
    try:
        re.compile(translated)
    except (re.error, OverflowError, RecursionError) as error:
        raise PatternError(f"invalid pattern: {error}") from None
    return translated
