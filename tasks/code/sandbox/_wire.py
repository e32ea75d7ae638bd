"""The channel's wire format, used on both sides (standard library only: the jail imports it too).

Only plain values cross between the trusted test and the jail, each as a type-tagged JSON value
built by exact type (`type(x) is int`); a subclass of a builtin travels as its base value, read
with the base type's own C methods, so a forged `__eq__`, `__iter__` or `__str__` never runs and
an object lying about `__class__` is opaque. The parent decodes to exact builtins only, so nothing
the candidate defined ever runs on the trusted side.

  ["n"]  None          ["b", true]  bool       ["i", 5] int      ["h", "-0x1f..."] big int (hex:
  ["f", "0.1"] float (repr, so nan/inf/-0.0 survive)     ["s", "text"] str       no digit limit)
  ["y", "00ff"] bytes  ["l", [...]] list  ["t", [...]] tuple  ["S", [...]] set  ["F", [...]] frozenset
  ["d", [[k, v], ...]] dict      ["o", "TypeName"] anything else (opaque: never decodes)
  ["x"] over the size budget (never decodes)

A record is one JSON array per line (a JSON object anywhere in what the jail sends is refused). Decoding is bounded:
a line is at most `MAX_LINE` bytes, a value at most `MAX_DEPTH` deep and `MAX_ITEMS` items, an int
at most `MAX_INT_HEX` hex digits, and every failure is a `WireError` (never an OverflowError,
RecursionError or MemoryError escaping to the caller).

Decoding is bounded in work as well as in size. Before a line is parsed at all, its arrays are
counted on the bytes (brackets inside strings not counted): more than `MAX_ARRAYS` is a `WireError`,
so a line of millions of tiny arrays, which would cost seconds of C parsing under the GIL, is
refused in one linear scan. The one step whose cost the sender could make
degenerate is rebuilding a set or dict: keys chosen to share one hash (ints `k * (2**61 - 1)` all
hash alike, and a subclass in the jail with its own `__hash__` arrives as such plain ints) make
each insertion scan all the others, quadratic work in C, under the GIL, where no deadline can
interrupt it. So before any set or dict is built, its keys are grouped by hash in a table keyed by
the hash values themselves (an int hashes to itself, so that table cannot degenerate), and more
than `MAX_SHARED_HASH` distinct keys with one hash is a `WireError`: the work is then at most
`MAX_SHARED_HASH` comparisons per key, whatever the keys. Honest values share a hash only by
accident (-1 and -2 do), far below the cap. `safe_text` makes any text printable and encodable (lone surrogates,
control bytes) before it reaches a report.
"""

import _json
import builtins
import json
import re

# Every function and class below looks builtin names up in this private copy of the builtins, made
# when the module is imported (in the jail: by the fork server, before any candidate code), so a
# candidate that rebinds `builtins.len` or `builtins.isinstance` runs nothing in the jail's code
# (CPython 3.11 takes a function's builtins from its module's `__builtins__` when it is created).
globals()["__builtins__"] = dict(vars(builtins))

MAX_DEPTH = 50
MAX_ITEMS = 200_000
MAX_TEXT = 1_000_000
MAX_INT_HEX = 20_000
MAX_LINE = 16 * 1024 * 1024
MAX_SHARED_HASH = 8
# JSON arrays one record may hold: each tagged value is one array, a container two, so an honest
# record stays under this; the count is taken on the bytes before any object is built.
MAX_ARRAYS = 2 * MAX_ITEMS + 64
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
# A line whose every string is closed, matched in one pass: possessive repeats never backtrack, so
# an unclosed string fails once at the line's end. `_STRING.sub` alone restarted its search at every
# quote of an unclosed string and rescanned to the end: quadratic, in C, under the GIL, where no
# deadline can stop it (red team sandbox3 `a_regex`: 40,000 escaped quotes took 32 s).
_WELL_QUOTED = re.compile(rb'(?:[^"]++|"(?:[^"\\]|\\.)*+")*+')
_SMALL_INT = 1 << 62



def _not_json(value):
    raise WireError(f"not a JSON value: {type(value).__name__}")


def _no_objects(pairs):
    raise WireError("a JSON object in a record")


# The C encoder and scanner of the `json` package, called directly: its Python layer
# (`JSONEncoder.encode`, `JSONDecoder.decode`) looks builtins up in the shared builtins at every
# call, where a candidate's rebinding would run inside the jail's own code between calls.
_encode_chunks = _json.make_encoder(None, _not_json, _json.encode_basestring_ascii, None, ":", ",", False, False, False)
# (typeshed types a scanner's context as a scanner; it is any object with a decoder's attributes)
_scan_array = _json.make_scanner(json.JSONDecoder(object_pairs_hook=_no_objects))  # type: ignore[arg-type]
_scan_with_objects = _json.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]  # the parent's job, read in the jail


def _dumps(record):
    return "".join(_encode_chunks(record, 0))


def _scanned(scan, text):
    """The one JSON value that is all of `text` (no whitespace around it: `dumps` writes none)."""
    try:
        value, end = scan(text, 0)
    except StopIteration:
        raise WireError("undecodable record: no JSON value") from None
    if end != len(text):
        raise WireError("undecodable record: extra data")
    return value


def _loads(text):
    return _scanned(_scan_array, text)


def _loads_with_objects(text):
    return _scanned(_scan_with_objects, text)


class WireError(ValueError):
    """A record or value that is not well-formed, or over a bound."""


def encoder(keep=None):
    """(encode, reset): `encode(value)` tags a value; `reset()` restores the item budget.

    Bound methods and types are captured here, before any candidate code runs, so patching
    builtins later changes nothing. In the jail, `keep` is a list every value met is added to, which
    the jail empties from C once the reply is sent: another thread of the candidate's that replaced
    an item of the answer while it was encoded left the encoder holding its last reference, and its
    `__del__` ran on the jail's frames (red team sandbox12 `e1`). Nothing met is looked up by hash
    or sliced unless its type is exact (a type's metaclass `__hash__` ran in `kinds.get`, `e5`)."""
    _type, _len, _hex, _repr_float = type, len, hex, float.__repr__
    qualname = type.__dict__["__qualname__"].__get__  # C-level: a metaclass cannot lie through it
    _int, _float, _str, _bool, _none, _bytes = int, float, str, bool, type(None), bytes
    _tuple, _set, _frozenset = tuple, set, frozenset
    hold = keep.append if keep is not None else (lambda value: None)
    _dict = dict
    _issubclass, _list = issubclass, list
    # A subclass of a builtin (a namedtuple, OrderedDict, Counter, IntEnum, numpy's float64) is
    # sent as its base value, read with the base type's own C methods: what the subclass
    # overrides (`__eq__`, `__iter__`, `__str__`) never runs and never reaches the parent.
    subclass_readers = (
        (int, int.__int__),
        (float, float.__float__),
        (str, str.__str__),
        (bytes, lambda value: bytes.__getitem__(value, slice(None))),
        (list, lambda value: list.__getitem__(value, slice(None))),
        (tuple, lambda value: tuple.__getitem__(value, slice(None))),
    )
    # A set or dict subclass is sent as its members, read by the base type's own iterator: rebuilding
    # a set or dict would hash them and compare them, running the candidate's `__hash__` and
    # `__eq__` in the jail's own code between calls.
    member_readers = ((frozenset, "F", frozenset.__iter__), (set, "S", set.__iter__))
    budget = [0]

    def encode(value, depth=0):
        hold(value)
        budget[0] += 1
        if depth > MAX_DEPTH or budget[0] > MAX_ITEMS:
            return ["x"]
        t = _type(value)
        if t is _bool:
            return ["b", value is True]
        if t is _int:
            if -_SMALL_INT < value < _SMALL_INT:
                return ["i", value]
            return ["h", _hex(value)] if value.bit_length() <= MAX_INT_HEX * 4 else ["x"]
        if t is _float:
            return ["f", _repr_float(value)]
        if t is _str:
            return ["s", value] if _len(value) <= MAX_TEXT else ["x"]
        if t is _none:
            return ["n"]
        if t is _bytes:
            return ["y", value.hex()] if _len(value) <= MAX_TEXT else ["x"]
        kind = "l" if t is _list else "t" if t is _tuple else "S" if t is _set else "F" if t is _frozenset else None
        if kind is not None:
            return [kind, [encode(item, depth + 1) for item in value]]
        if t is _dict:
            return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
        for base, as_base in subclass_readers:
            if _issubclass(t, base):
                return encode(as_base(value), depth)
        for container, container_kind, members in member_readers:
            if _issubclass(t, container):
                return [container_kind, [encode(item, depth + 1) for item in _list(members(value))]]
        if _issubclass(t, _dict):
            return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in _list(dict.items(value))]]
        name = qualname(t)  # a str subclass of the candidate's may be a class's `__qualname__`
        return ["o", name[:200] if _type(name) is _str else "<unprintable>"]

    def reset():
        budget[0] = 0

    return encode, reset


def dumps(record):
    """One record as a line of bytes."""
    return (_dumps(record) + "\n").encode("ascii")


def loads(line, objects=False):
    """One record from a line; WireError for anything malformed or over a bound. A JSON object is
    refused unless `objects` (the jail reading the parent's job: trusted text)."""
    if len(line) > MAX_LINE:
        raise WireError(f"record of {len(line)} bytes is over the {MAX_LINE}-byte limit")
    if line.count(b"[") > MAX_ARRAYS:
        if _WELL_QUOTED.fullmatch(line) is None:
            raise WireError("a record with an unclosed string")
        if _STRING.sub(b'""', line).count(b"[") > MAX_ARRAYS:  # linear once every string closes
            raise WireError(f"a record of more than {MAX_ARRAYS} arrays")
    try:
        record = (_loads_with_objects if objects else _loads)(line.decode("ascii"))
    except WireError:
        raise
    except (ValueError, RecursionError, MemoryError) as error:
        raise WireError(f"undecodable record: {type(error).__name__}") from None
    if type(record) is not list or not record or type(record[0]) is not str:
        raise WireError("a record is a non-empty list starting with its kind")
    return record


def decode(tagged, depth=0, budget=None):
    """Rebuild a plain value from its tag; WireError for opaque, oversized or malformed ones."""
    budget = budget if budget is not None else [0]
    budget[0] += 1
    if depth > MAX_DEPTH or budget[0] > MAX_ITEMS:
        raise WireError("value nested too deep or too large")
    if type(tagged) is not list or not tagged or type(tagged[0]) is not str:
        raise WireError("not a tagged value")
    tag, rest = tagged[0], tagged[1:]
    if tag == "n" and not rest:
        return None
    if tag == "x" and not rest:
        raise WireError("a value over the size limit")
    if len(rest) != 1:
        raise _unexpected(tag, rest)
    payload = rest[0]
    kind = type(payload)
    if tag == "b" and kind is bool:
        return payload
    if tag == "i" and kind is int and -_SMALL_INT < payload < _SMALL_INT:
        return payload
    if tag == "h" and kind is str and len(payload) <= MAX_INT_HEX + 3:
        try:
            return int(payload, 16)
        except ValueError:
            raise WireError("malformed big int") from None
    if tag == "f" and kind is str and len(payload) <= 40:
        try:
            return float(payload)
        except ValueError:
            raise WireError("malformed float") from None
    if tag == "s" and kind is str:
        return payload
    if tag == "y" and kind is str:
        try:
            return bytes.fromhex(payload)
        except ValueError:
            raise WireError("malformed bytes") from None
    if tag in ("l", "t", "S", "F") and kind is list:
        items = [decode(item, depth + 1, budget) for item in payload]
        if tag in ("S", "F"):
            _check_hashes(items)
        return items if tag == "l" else tuple(items) if tag == "t" else set(items) if tag == "S" else frozenset(items)
    if tag == "d" and kind is list:
        pairs = []
        for pair in payload:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict item")
            pairs.append((decode(pair[0], depth + 1, budget), decode(pair[1], depth + 1, budget)))
        _check_hashes([key for key, _ in pairs])
        return dict(pairs)
    if tag == "o" and kind is str:
        raise WireError(f"a value of non-builtin type {safe_text(payload, 80)}")
    raise _unexpected(tag, rest)


def _check_hashes(keys):
    """WireError unless every key is hashable and no more than `MAX_SHARED_HASH` distinct keys
    share a hash: then building the set or dict costs at most that many comparisons per key."""
    groups: dict[int, list] = {}  # hash value -> the distinct keys seen with it; an int's hash is itself
    for key in keys:
        try:
            group = groups.setdefault(hash(key), [])
        except TypeError:
            raise WireError("an unhashable set member or dict key") from None
        if not any(seen == key for seen in group):
            if len(group) >= MAX_SHARED_HASH:
                raise WireError(f"more than {MAX_SHARED_HASH} distinct set members or dict keys share one hash")
            group.append(key)


def _unexpected(tag, rest):
    return WireError(f"unknown or malformed tag {safe_text(tag, 20)!r}")


def safe_text(text, limit=300):
    """`text` cut to `limit` characters, with lone surrogates and other unencodable code points
    escaped, so it survives any JSON, CEL or UTF-8 writer downstream."""
    if type(text) is not str:
        return "<not text>"
    return text[:limit].encode("utf-8", "backslashreplace").decode("utf-8")
