"""The test file the jail's calls come from (untrusted side: imported by the fork server, run in
the jail): each call as a test file's literal call, `candidate([1, 2, 3])`, and nothing else of
the jail's looked up by name.

A test file that calls the candidate looks one name up, the candidate's, and builds each argument
from its literal: a list afresh (its reference count is the call's alone), a string or number as
a constant of its code. So the jail's code for each call is compiled from exactly that source, the
arguments written as literals (`literal`); nothing else of its source is a name looked up at run
time. The jail's own objects that the code uses (the functions that record the outcome, the steps
it makes after the call, the exception class it catches) are constants of the compiled code: its
`LOAD_NAME`s of them are rewritten into `LOAD_CONST`s of the objects themselves, and their names
dropped from `co_names` (`bound`). Before, the caller
looked `globals` up and called it once per argument (`globals().pop("a0")`), and looked its steps
up by name after each call: a function the candidate put in `builtins` or in the caller's
namespace under one of those names was called where a test file's literal call calls nothing,
and a function right only when it had been called passed (red team sandbox16 `g1`, `g2`).

Standard library only, as every module the jail imports; everything here runs between calls, on
values the trusted parent sent (plain builtins, `_wire`'s types), and looks up nothing the
candidate can change: this module's builtins are a private copy, and `compile` reads no state of
the candidate's but the interpreter's digit limit for decimal ints, which `literal` never reaches.
"""

import builtins
import opcode

try:  # the sandbox's C gate: a top-level module in the fork server and the jail, the package's here
    import _gate
except ImportError:
    from tasks.code.sandbox import _gate  # type: ignore[attr-defined]

globals()["__builtins__"] = dict(vars(builtins))  # as `_jail`: a candidate's rebinding runs nothing here

_LOAD_NAME, _LOAD_CONST, _LOAD_GLOBAL = opcode.opmap["LOAD_NAME"], opcode.opmap["LOAD_CONST"], opcode.opmap["LOAD_GLOBAL"]
_NAME_OPS = frozenset(opcode.hasname)
_CACHES = tuple(opcode._inline_cache_entries)  # type: ignore[attr-defined]  # the cache units after each opcode, skipped in a walk
# An int is written in decimal up to this many bits (602 digits, under 640, the lowest digit limit
# `sys.set_int_max_str_digits` accepts, past which `repr` and `compile` of a decimal raise), in hex
# past it, which no digit limit covers.
_DECIMAL_BITS = 2000
# Keyword arguments a call can pass by name in source.
_NOT_NAMES = frozenset(
    {"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
     "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
     "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "__debug__"}
)
# The consts a code object may hold for `bound` to add its objects with one-byte indices, and the
# names it may renumber (LOAD_GLOBAL's index takes seven bits of its byte).
_CONST_ROOM, _NAME_ROOM = 256, 128
_rebuilt = _gate.rebuilt


def literal(value):
    """`value` (a plain builtin, as `_wire` decodes them) written as a test file writes it: its
    literal, or, where there is none, what a test file calls to make it (`set()`,
    `float('nan')`, `frozenset({1})`)."""
    kind = type(value)
    if kind is int:
        return repr(value) if value.bit_length() <= _DECIMAL_BITS else hex(value)
    if kind is float:
        if value != value:
            return "float('nan')"
        if value in (float("inf"), float("-inf")):
            return ("-" if value < 0 else "") + "float('inf')"
        return repr(value)
    if kind is str or kind is bytes or kind is bool or value is None:
        return repr(value)
    if kind is list:
        return "[" + ", ".join(map(literal, value)) + "]"
    if kind is tuple:
        items = ", ".join(map(literal, value))
        return "(" + items + ("," if len(value) == 1 else "") + ")"
    if kind is dict:
        return "{" + ", ".join(literal(key) + ": " + literal(item) for key, item in value.items()) + "}"
    if kind is set:
        return "{" + ", ".join(map(literal, value)) + "}" if value else "set()"
    if kind is frozenset:
        return "frozenset({" + ", ".join(map(literal, value)) + "})" if value else "frozenset()"
    raise TypeError("no literal for " + kind.__name__)


def call_source(entry_name, args, kwargs):
    """The literal call `entry_name(...)` of `args` and `kwargs`; a keyword that is no name a call
    can pass in source (none of the parent's tests has one) is left out, as before."""
    passed = [literal(value) for value in args]
    passed += [name + "=" + literal(value) for name, value in kwargs.items()
               if type(name) is str and name.isidentifier() and name not in _NOT_NAMES]
    return entry_name + "(" + ", ".join(passed) + ")"


def bound(code, objects, placeholders=None):
    """`code` with each `LOAD_NAME` of a name in `objects` (a dict) made a `LOAD_CONST` of that
    object, appended to its constants, and those names gone from its `co_names` (the others
    renumbered): the names are then looked up nowhere, and named nowhere in the code. Given
    `placeholders`, each constant that is one of its keys (strings that stand in for the call's
    arguments) is replaced by its value: the arguments as constants of the code, for a call too
    large in literal form. A ValueError where the code holds too many constants for a one-byte
    index (a call of hundreds of distinct nested literals)."""
    consts = list(code.co_consts)
    if placeholders:
        consts = [placeholders.get(constant, constant) if type(constant) is str else constant for constant in consts]
    if len(consts) + len(objects) > _CONST_ROOM:
        raise ValueError("too many constants")
    names = code.co_names
    if len(names) > _NAME_ROOM:
        raise ValueError("too many names")
    index = {}
    data = bytearray(code.co_code)
    named = []  # (offset, old name index) of every instruction that still names one
    at = 0
    while at < len(data):
        op = data[at]
        if op == _LOAD_NAME and names[data[at + 1]] in objects:
            name = names[data[at + 1]]
            if name not in index:
                index[name] = len(consts)
                consts.append(objects[name])
            data[at], data[at + 1] = _LOAD_CONST, index[name]
        elif op in _NAME_OPS:
            named.append((at, data[at + 1] >> 1 if op == _LOAD_GLOBAL else data[at + 1]))
        at += 2 * (1 + _CACHES[op])
    kept = sorted({old for _, old in named})
    renumbered = {old: new for new, old in enumerate(kept)}
    for at, old in named:
        data[at + 1] = (renumbered[old] << 1 | data[at + 1] & 1) if data[at] == _LOAD_GLOBAL else renumbered[old]
    return _rebuilt(code, bytes(data), tuple(consts), tuple(names[old] for old in kept))  # `code.replace` raises an event the judge refuses
