"""No jail holds native code a candidate can call.

With ctypes in the fork server, every jail had it in memory: the outside attacks of 2026-12-02
(`/work/redteam/sandbox4/`, `a_cachestat`) reached the jail's own `libc` by `f_back` and made raw
system calls with it, and `object.__subclasses__()` lists ctypes' types, whose `from_address` reads
and writes any address (the audit hook's own state included). The jail's set-up now makes its
kernel calls through the `_kernel` C module, sealed before any candidate code, and the seccomp
filter is compiled by libseccomp in a process of its own (`_seccomp.program`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tasks.code.sandbox import run_tests
from tests.support.ci import unavailable
from tests.support.sandbox_attacks import FAST

SANDBOX = Path(__file__).parents[3] / "tasks" / "code" / "sandbox"

# Every way the attacks found to native code, tried from inside: what each reached.
REACHED = """
import sys
def _types():
    seen, todo = set(), [object]
    while todo:
        kind = todo.pop()
        if kind in seen:
            continue
        seen.add(kind)
        try:
            todo.extend(type.__subclasses__(kind))
        except TypeError:
            pass
    return sorted({kind.__module__ for kind in seen if kind.__module__ in ("ctypes", "_ctypes", "ctypes._endian")})
def _frames():
    found, kernel, frame = [], None, sys._getframe(0)
    while frame is not None:
        for value in list(frame.f_globals.values()) + list(frame.f_locals.values()):
            module = getattr(type(value), "__module__", "")
            if module in ("ctypes", "_ctypes") or getattr(value, "__name__", "") in ("ctypes", "_ctypes"):
                found.append(module or value.__name__)
            if getattr(value, "__name__", "") == "_kernel" and hasattr(value, "prctl"):
                kernel = value
        frame = frame.f_back
    return sorted(set(found)), kernel
def _sealed(kernel):
    calls = {
        "prctl": lambda: kernel.prctl(38, 1),
        "mount": lambda: kernel.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None),
        "seccomp_filter": lambda: kernel.seccomp_filter(bytes(8)),
        "landlock_restrict_self": lambda: kernel.landlock_restrict_self(0, 0),
    }
    answers = {}
    for name, call in calls.items():
        try:
            call()
            answers[name] = "worked"
        except PermissionError:
            answers[name] = "sealed"
    return answers
def probe():
    frames, kernel = _frames()
    return {"types": _types(), "frames": frames, "kernel": _sealed(kernel) if kernel else None}
"""


def test_no_ctypes_object_and_no_kernel_call_is_reachable() -> None:
    """No frame of the jail's lies below the candidate's (`bare_stack`), so the frames reach
    neither ctypes nor the `_kernel` module (sealed anyway: below)."""
    expected = {"types": [], "frames": [], "kernel": None}
    result = run_tests(REACHED, f"def check(candidate):\n    assert candidate() == {expected!r}\n", "probe", FAST)
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())
    assert result.audit_events == ()


@pytest.mark.parametrize(
    "statement",
    ["importlib.import_module('_ctypes')", "importlib.import_module('ctypes')", "__import__('_ctypes')"],
    ids=["import_module__ctypes", "import_module_ctypes", "dunder_import"],
)
def test_loading_ctypes_from_disk_is_refused_and_recorded(statement: str) -> None:
    """With no copy in memory, loading it reads the library's extension from disk: the hook sees
    that import whichever way it is asked for."""
    program = f"import importlib\ndef probe():\n    try:\n        {statement}\n        return 'loaded'\n    except BaseException:\n        return 'refused'\n"
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 'refused'\n", "probe", FAST)
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())
    assert [event["kind"] for event in result.audit_events] == ["ctypes"]


# The filter the jails load, loaded into a child of a fresh interpreter (not a jail: this one may
# use ctypes to make the raw system calls no jail can make any more), with the child's own pid.
FILTERED = """
import ctypes, json, os, signal, sys
sys.path.insert(0, sys.argv[1])
import _kernel, _seccomp
program = _seccomp.program()
calls = {
    "inotify_init1": (294, os.O_NONBLOCK),
    "fallocate_stderr": (285, 2, 1, 0, 4 << 30),
    "readahead": (187, 0, 0, 1 << 20),
    "mincore": (27, 0, 4096, 0),
    "kill_self": (62, "self", 0),
}
read, write = os.pipe()
child = os.fork()
if child == 0:
    os.close(read)
    assert _seccomp.install(program, os.getpid())
    libc = ctypes.CDLL(None, use_errno=True)
    seen = {}
    for name, (number, *args) in calls.items():
        args = [os.getpid() if arg == "self" else arg for arg in args]
        value = libc.syscall(*[ctypes.c_long(arg) for arg in (number, *args)])
        seen[name] = 0 if value >= 0 else ctypes.get_errno()
    _kernel.seal()
    try:
        _kernel.prctl(38, 1)
        seen["sealed"] = False
    except PermissionError:
        seen["sealed"] = True
    os.write(write, json.dumps(seen).encode())
    libc.syscall(ctypes.c_long(62), ctypes.c_long(os.getppid()), ctypes.c_long(0))  # kill(parent): fatal
    os._exit(0)
os.close(write)
seen = json.loads(os.read(read, 4096) or b"null")
_, status = os.waitpid(child, 0)
print(json.dumps({"seen": seen, "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None, "offsets": len(program.pid_offsets)}))
"""


def test_the_compiled_filter_refuses_by_error_and_kills_on_a_signal_to_another_process_and_kernel_seals() -> None:
    import errno
    import signal

    output = subprocess.run(
        [sys.executable, "-c", FILTERED, str(SANDBOX)], capture_output=True, text=True, timeout=60, env={**os.environ}
    )
    assert output.returncode == 0, output.stderr
    answer = json.loads(output.stdout)
    assert answer["seen"] == {
        "inotify_init1": errno.EMFILE,
        "fallocate_stderr": errno.EOPNOTSUPP,
        "readahead": errno.ENOSYS,
        "mincore": errno.ENOSYS,
        "kill_self": 0,
        "sealed": True,
    }
    assert answer["signal"] == signal.SIGSYS
    assert answer["offsets"] >= 1


# Red team sandbox5 `n1_ctypes_alias_hook_off`: `_ctypes` loaded from its file under another name
# ("alias._ctypes": an extension's init symbol is its file's), which a check of the name asked for
# let by; from there a Union of an int and a char pointer read and wrote any address, turned the
# audit hook off and silenced every record. The same for CPython's test modules (memory at will)
# and the subinterpreter modules (an interpreter with no audit hook of the jail's).
ALIASED = """
import glob, importlib.machinery, importlib.util, os, sys
def probe(name):
    paths = glob.glob([entry for entry in sys.path if entry.endswith("lib-dynload")][0] + "/" + name + ".*.so")
    if not paths:
        return "no such file", None
    kind = "empty" if os.stat(paths[0]).st_size == 0 else "an ELF file"
    try:
        loader = importlib.machinery.ExtensionFileLoader("alias." + name, paths[0])
        importlib.util.module_from_spec(importlib.util.spec_from_file_location("alias." + name, paths[0], loader=loader))
        return "loaded", kind
    except BaseException as error:
        return type(error).__name__, kind
"""


@pytest.mark.parametrize("name", ["_ctypes", "_testcapi", "_xxsubinterpreters"])
def test_a_native_module_loaded_under_another_name_is_refused_and_its_file_blanked(name: str) -> None:
    result = run_tests(ALIASED, f"def check(candidate):\n    assert candidate({name!r}) == ('PermissionError', 'empty')\n", "probe", FAST)
    if result.cases and result.cases[0].returned == ("('no such file', None)",):
        unavailable(f"this Python has no {name} extension")
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())
    assert [(event["kind"], event["detail"]) for event in result.audit_events] == [("ctypes", f"import alias.{name}")]


# Red team sandbox6 `b1`, `b2`: bytecode of the candidate's own (`code.replace(co_code=...)` with a
# LOAD_CONST past the constants) read and wrote any address from pure Python, removed the audit
# hooks and silenced every record; `n1`: an extension written into the work dir and imported.
# Only the compiler's code runs: a code object built from bytes, `marshal` of any bytes but the
# standard library's own .pyc files, and an extension from outside the standard library are
# refused and recorded; every place the jail can write is noexec.
MADE_CODE = """
import asyncio, glob, importlib, marshal, mmap, os, py_compile, shutil, sys, types
def tried(call):
    try:
        call()
        return "ran"
    except PermissionError:
        return "refused"
    except OSError as error:
        return type(error).__name__
def probe():
    with open("mod_x.py", "w") as source:
        source.write("VALUE = 7\\n")
    py_compile.compile("mod_x.py", cfile="mod_y.pyc")
    extension = glob.glob(os.path.dirname(os.__file__) + "/lib-dynload/_json.*.so")[0]
    shutil.copy(extension, "mine" + extension[extension.index(".cpython"):])
    with open("mine" + extension[extension.index(".cpython"):], "rb") as mapped:
        executable = tried(lambda: mmap.mmap(mapped.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC))
    return {
        "code_from_bytes": tried(lambda: (lambda: None).__code__.replace(co_code=(lambda: None).__code__.co_code)),
        "marshal": tried(lambda: marshal.loads(marshal.dumps(compile("1", "x", "eval")))),
        "pyc_of_the_work_dir": tried(lambda: importlib.import_module("mod_y")),
        "extension_of_the_work_dir": tried(lambda: importlib.import_module("mine")),
        "work_dir_executable": executable,
        "stdlib_from_its_pyc": tried(lambda: importlib.import_module("json")),
        "asyncio": tried(lambda: asyncio.run(asyncio.sleep(0))),
    }
"""
MADE_CODE_SEEN = {
    "code_from_bytes": "refused", "marshal": "refused", "pyc_of_the_work_dir": "refused", "extension_of_the_work_dir": "refused",
    "work_dir_executable": "refused", "stdlib_from_its_pyc": "ran", "asyncio": "ran",
}


def test_only_the_compilers_code_and_the_standard_librarys_extensions_run() -> None:
    result = run_tests(MADE_CODE, f"def check(candidate):\n    assert candidate() == {MADE_CODE_SEEN!r}\n", "probe", FAST)
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())
    details = [event["detail"] for event in result.audit_events]
    assert [event["kind"] for event in result.audit_events] == ["code_patch"] * 3 + ["ctypes"], details
    assert details[0].startswith("code.__new__") and "mine" in details[3], details
