"""The audit judge decides by the data an operation carries, never by the frame that makes it.

Red team sandbox7 made each exemption the judge granted by its caller's frame do the forbidden
thing: a C callable of the candidate's (a property's getter draining a `starmap`) runs under any
library frame, and a library function's locals are the arguments the candidate passes. Each case
here is one of those attacks, and each must be refused and recorded; the honest uses each
exemption was for (asyncio's `types.coroutine`, a reloaded module's .pyc, doctest) must pass with
no record. And the load's outcome is the jail's own: nothing the candidate can reach decides it.
"""

from __future__ import annotations

import pytest

from tasks.code.sandbox import SandboxLimits, run_tests
from tests.support.sandbox_attacks import FAST

SLOW = SandboxLimits(**{**FAST.__dict__, "wall_s": 20.0})

# A code object of any bytes, built by `types.CodeType` from C while `types.coroutine`'s frame is
# on top: `types.coroutine` reads `func.__class__`, a property whose getter drains the starmap.
FORGED_UNDER_COROUTINE = """
import itertools, types
_source = (lambda: None).__code__
_args = (0, 0, 0, 0, 1, _source.co_flags, b"\\x97\\x00d\\x05S\\x00", (None,), (), (), _source.co_filename, "forged",
         "forged", _source.co_firstlineno, _source.co_linetable, _source.co_exceptiontable, (), ())
_made = []
class _Box(itertools.starmap):
    __class__ = property(_made.extend)
    def __call__(self):
        pass
try:
    types.coroutine(_Box(types.CodeType, [_args]))
    _OUTCOME = "made" if _made else "nothing"
except PermissionError:
    _OUTCOME = "refused"
def probe():
    return _OUTCOME
"""

# Bytes of the candidate's through `marshal.loads`, called by the import system's own
# `_compile_bytecode`, which the candidate calls with a standard library .pyc path of its choosing.
FORGED_AS_LIBRARY_BYTECODE = """
import marshal, os, importlib._bootstrap_external as _external
_code = (lambda: 7).__code__
_forged = marshal.dumps(_code).replace(_code.co_code, b"\\x97\\x00d\\x05S\\x00")
try:
    _external._compile_bytecode(_forged, "x", os.path.dirname(os.__file__) + "/x.cpython-311.pyc")
    _OUTCOME = "made"
except PermissionError:
    _OUTCOME = "refused"
def probe():
    return _OUTCOME
"""

# The same through a source path of the candidate's: the bytes must load as what the compiler
# makes of that source, and these do not.
FORGED_AS_MODULE_BYTECODE = """
import marshal, importlib._bootstrap_external as _external
with open("helper.py", "w") as _file:
    _file.write("x = 7\\n")
_code = compile("x = 7\\n", "helper.py", "exec")
_forged = marshal.dumps(_code).replace(_code.co_code, _code.co_code[:-2] + b"d\\x05")
try:
    _external._compile_bytecode(_forged, "helper", "__pycache__/helper.cpython-311.pyc", "helper.py")
    _OUTCOME = "made"
except PermissionError:
    _OUTCOME = "refused"
def probe():
    return _OUTCOME
"""

# Bytes that load as the compiler's code of that source in all but the stack size (`==` of code
# objects leaves it out, as it does the kinds of the locals and the exception table: red team
# sandbox8 `k1`): bytecode whose stack overruns its frame.
STACK_OF_ITS_OWN = """
import marshal, importlib._bootstrap_external as _external
with open("helper.py", "w") as _file:
    _file.write("x = 7\\n")
_data = bytearray(marshal.dumps(compile("x = 7\\n", "helper.py", "exec")))
_data[13:17] = (0).to_bytes(4, "little")  # co_stacksize, after the three argument counts
try:
    _external._compile_bytecode(bytes(_data), "helper", "__pycache__/helper.cpython-311.pyc", "helper.py")
    _OUTCOME = "made"
except PermissionError:
    _OUTCOME = "refused"
def probe():
    return _OUTCOME
"""

# Bytes of the candidate's naming a source whose coding cookie makes `compile` look its codec up:
# the judge compiled the named source to compare, and so ran the candidate's codec search
# function inside itself, with its frames below (red team sandbox8 `c1`). It compiles nothing now.
CODEC_IN_THE_JUDGE = """
import codecs, marshal, importlib._bootstrap_external as _external
_CALLED = []
def _search(name):
    if name == "jailtell":
        _CALLED.append(name)
    return None
codecs.register(_search)
with open("helper.py", "w") as _file:
    _file.write("# coding: jailtell\\nx = 7\\n")
_data = marshal.dumps(compile("x = 7\\n", "helper.py", "exec"))
try:
    _external._compile_bytecode(_data, "helper", "__pycache__/helper.cpython-311.pyc", "helper.py")
    _OUTCOME = "made"
except PermissionError:
    _OUTCOME = "refused" if not _CALLED else "refused, the codec ran"
def probe():
    return _OUTCOME
"""

# A tracer of the candidate's set under doctest's run, whose restoring `sys.settrace(save_trace)`
# (save_trace None) the judge let pass by its frame: doctest's `sys` is a fake whose `settrace` is
# a property draining a starmap that calls the real one with the tracer.
TRACER_UNDER_DOCTEST = """
import doctest, itertools, sys
def _tracer(frame, event, arg):
    return None
class _FakeSys(itertools.starmap):
    settrace = property([].extend)
    def __getattr__(self, name):
        return getattr(sys, name)
doctest.sys = _FakeSys(sys.settrace, [(_tracer,)])
try:
    doctest.DocTestRunner(verbose=False).run(doctest.DocTestParser().get_doctest(">>> 1\\n1\\n", {}, "t", "t", 0), out=lambda s: None)
except (TypeError, PermissionError):
    pass
doctest.sys = sys
_OUTCOME = "traced" if sys.gettrace() is _tracer else "not traced"
def probe():
    return _OUTCOME
"""

# A symbolic link made from a subdirectory with the relative target "..": the kernel resolves it
# from the link's own directory (the work dir's parent), the judge resolved it from the cwd.
LINK_OUT_OF_THE_WORK_DIR = """
import os
_work = os.getcwd()
os.makedirs("a/b")
os.chdir("a/b")
try:
    os.symlink("..", _work + "/up")
    _OUTCOME = "linked"
except PermissionError:
    _OUTCOME = "refused"
os.chdir(_work)
def probe():
    return _OUTCOME
"""

# Red team sandbox15 `k7`: `types.coroutine` handed an object that claims to be a function by its
# `__class__`, whose code's `replace` makes a code object with constants of the candidate's; the
# getter planted a key in the frame's `f_locals` dict that swapped the library's own code in while
# the judge read its `co` from that dict, so the exemption compared the wrong code object's fields.
CODE_BY_A_PLANTED_LOCAL = """
import functools, sys, types
def _generator():
    yield "z"
real = _generator.__code__
forged = tuple("forged" if constant == "z" else constant for constant in real.co_consts)
box = {}
class _Swap(str):
    def __hash__(self):
        return str.__hash__(self)
    def __eq__(self, other):
        if "locals" in box and str.__eq__(self, other):
            box["locals"][self] = real
        return str.__eq__(self, other)
class _Code:
    co_flags = real.co_flags
    @property
    def __class__(self):
        return types.CodeType
    replace = functools.partial(types.CodeType.replace, real, co_consts=forged)
class _Function:
    def __call__(self):
        pass
    @property
    def __class__(self):
        frame = sys._getframe(1)
        if frame.f_code is types.coroutine.__code__ and "locals" not in box:
            box["locals"] = frame.f_locals
            box["locals"][_Swap("co")] = None
        return types.FunctionType
    @property
    def __code__(self):
        return box.get("made", _Code())
    @__code__.setter
    def __code__(self, value):
        box["made"] = value
try:
    types.coroutine(_Function())
    _OUTCOME = "made" if type(box.get("made")) is types.CodeType else "not made"
except PermissionError:
    _OUTCOME = "refused"
def probe():
    return _OUTCOME
"""

ATTACKS = {
    "forged_under_coroutine": (FORGED_UNDER_COROUTINE, "code_patch"),
    "forged_as_library_bytecode": (FORGED_AS_LIBRARY_BYTECODE, "code_patch"),
    "forged_as_module_bytecode": (FORGED_AS_MODULE_BYTECODE, "code_patch"),
    "stack_of_its_own": (STACK_OF_ITS_OWN, "code_patch"),
    "codec_in_the_judge": (CODEC_IN_THE_JUDGE, "code_patch"),
    "tracer_under_doctest": (TRACER_UNDER_DOCTEST, "hook_patch"),
    "link_out_of_the_work_dir": (LINK_OUT_OF_THE_WORK_DIR, "file_write"),
    "code_by_a_planted_local": (CODE_BY_A_PLANTED_LOCAL, "code_patch"),
}
REFUSED = {"forged_under_coroutine": "refused", "tracer_under_doctest": "not traced"}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_an_exemption_is_not_granted_by_the_calling_frame(name: str) -> None:
    program, kind = ATTACKS[name]
    expected = REFUSED.get(name, "refused")
    result = run_tests(program, f"def check(candidate):\n    assert candidate() == {expected!r}\n", "probe", SLOW)
    assert result.passed, (result.reason, [case.returned for case in result.cases])
    assert kind in {event["kind"] for event in result.audit_events}, result.audit_events


# The honest uses each exemption is for: asyncio's import (types.coroutine on a generator
# function), `marshal.loads` of plain data (red team sandbox8 `h4`), and doctest's run. (A module
# the program writes, imports and reloads from the .pyc the interpreter wrote is still refused,
# red team sandbox7 `h3`: judging it would mean compiling the candidate's source in the judge.)
HONEST = {
    "asyncio": "import asyncio\nasync def _twice(x):\n    await asyncio.sleep(0)\n    return 2 * x\n"
    "def probe():\n    return asyncio.run(_twice(21))\n",
    "plain_data": "import marshal\nDATA = marshal.loads(marshal.dumps({'a': [1, 2.5, 'x'], 'b': (None, b'y')}))\n"
    "def probe():\n    return 42 if DATA == {'a': [1, 2.5, 'x'], 'b': (None, b'y')} else 0\n",
    # Data that shares its parts (2**40 paths through 40 lists) or nests 300 deep: read once, in
    # time linear in the bytes (a walk of what they load timed out, or was refused: sandbox9 `m1`, `m2`).
    "shared_data": "import marshal\n_x = []\nfor _ in range(40):\n    _x = [_x, _x]\nDATA = marshal.loads(marshal.dumps(_x))\n"
    "def probe():\n    return 42 if DATA[0] is DATA[1] else 0\n",
    "deep_data": "import marshal\n_x = None\nfor _ in range(300):\n    _x = [_x]\nDATA = marshal.loads(marshal.dumps(_x))\n"
    "def probe():\n    return 42 if DATA[0][0][0] is not None else 0\n",
    "doctest": "import doctest\ndef probe():\n    '''\n    >>> probe()\n    42\n    '''\n    return 42\n"
    "if __name__ == '__main__':\n    doctest.testmod()\n",
}


@pytest.mark.parametrize("name", list(HONEST))
def test_the_honest_use_of_an_exemption_passes_unrecorded(name: str) -> None:
    result = run_tests(HONEST[name], "def check(candidate):\n    assert candidate() == 42\n", "probe", SLOW)
    assert result.passed, (result.reason, [case.returned for case in result.cases])
    assert result.audit_events == (), result.audit_events


# During the load `sys.unraisablehook` was a list's `append`, and that list (reached through
# `__self__`) decided the load's outcome: a fake SystemExit(0) put first made a crash a clean exit
# (red team sandbox7 `u1`). Now the hook is the interpreter's own throughout.
LOAD_CRASH = """
import sys
ORDINARY_HOOK = sys.unraisablehook is sys.__unraisablehook__
class _Fake:
    exc_value = SystemExit(0)
try:
    sys.unraisablehook.__self__.append(_Fake())
except AttributeError:
    pass
def probe():
    return 1
raise RuntimeError("the load crashes here")
"""


def test_the_loads_outcome_is_the_jails_own() -> None:
    result = run_tests(LOAD_CRASH, "def check(candidate):\n    assert candidate() == 1\n", "probe", SLOW)
    assert result.outcome == "error" and "RuntimeError" in result.reason, result.reason


# Red team sandbox11 `u2`: the load's exception whose `__str__` raises made the jail's callback
# that reads its text fail, and CPython handed that callback to the candidate's
# `sys.unraisablehook`, which took it apart (`__reduce__`) down to the jail's list of the load's
# errors and put a clean SystemExit first. No callback of the jail's fails into CPython's report.
TEXT_THAT_RAISES = """
import sys
def _hook(unraisable):
    try:
        outer = unraisable.object.args[0]
        inner = outer.__reduce__()[1][1]
        inner.__reduce__()[1][1].__reduce__()[1][0][:] = [SystemExit()]
    except BaseException:
        pass
sys.unraisablehook = _hook
class Crash(Exception):
    def __str__(self):
        raise RuntimeError("no text")
def probe():
    return 1
raise Crash()
"""


def test_a_load_whose_error_has_no_text_is_still_a_crash() -> None:
    result = run_tests(TEXT_THAT_RAISES, "def check(candidate):\n    assert candidate() == 1\n", "probe", SLOW)
    assert result.outcome == "error" and "Crash" in result.reason, result.reason


def test_the_unraisable_hook_is_the_interpreters_own_during_the_load() -> None:
    program = "import sys\nORDINARY = sys.unraisablehook is sys.__unraisablehook__\ndef probe():\n    return ORDINARY\n"
    result = run_tests(program, "def check(candidate):\n    assert candidate() is True\n", "probe", SLOW)
    assert result.passed, result.reason
