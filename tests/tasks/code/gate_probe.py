"""Run by test_gate.py in a process of its own: make each audited operation of `OPERATIONS`, under
the gate (`gate`: which operations it hands to the Python judge) or under the judge alone, added
as a plain audit hook as the jail once did (`judge`: which the judge records or refuses). Prints
one JSON object {operation: bool}. Run from a file, so that this module is no sandbox namespace."""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import types

from tasks.code.sandbox import _gate, _hook

SANDBOX_DIR = os.path.dirname(os.path.abspath(_hook.__file__)) + "/"
# A function run with a sandbox module's globals: its frames are frames of the sandbox.
exec("def _probe_frame():\n    return sys._getframe()\ndef _probe_raise():\n    raise ValueError\n", vars(_hook))
SANDBOX_FUNCTION = types.FunctionType(compile("def f(): pass", SANDBOX_DIR + "probe.py", "exec").co_consts[0], {})


def _raise_own() -> None:
    raise ValueError


def _traceback(function):  # the traceback of `function`'s exception, whose frames are read
    try:
        function()
    except ValueError as error:
        return error.__traceback__


def _generator():
    yield


def _swallow(operation):
    def run() -> None:
        try:
            operation()
        except OSError:
            pass

    return run


def _swallow_refusal(operation):
    def run() -> None:
        try:
            operation()
        except PermissionError:
            pass
        finally:
            sys.settrace(None)

    return run


def _in_cwd(directory, operation):
    def run() -> None:
        here = os.getcwd()
        os.chdir(directory)
        try:
            operation()
        finally:
            os.chdir(here)

    return run


class _Plain:
    pass


def operations(inside: str) -> dict:
    own = _traceback(_raise_own)
    theirs = _traceback(_hook._probe_frame.__globals__["_probe_raise"])
    outside = tempfile.mkdtemp()
    return {
        "id": lambda: id(own),
        "own_frame": lambda: sys._getframe(),
        "sandbox_frame": lambda: _hook._probe_frame.__globals__["_probe_frame"](),
        "own_tb_frame": lambda: own.tb_frame,
        "sandbox_tb_frame": lambda: theirs.tb_next.tb_frame,
        "generator_frame": lambda: _generator().gi_frame,
        "code_read": lambda: _raise_own.__code__,
        "own_defaults": lambda: setattr(_generator, "__defaults__", None),
        "sandbox_defaults": lambda: setattr(SANDBOX_FUNCTION, "__defaults__", ()),
        "class_attribute": lambda: setattr(_Plain, "x", 1),
        "open_relative": lambda: open("f", "w").close(),
        "open_inside": lambda: open(inside + "/f").close(),
        "open_parent_step": lambda: open("../" + os.path.basename(inside) + "/f").close(),
        "open_outside_write": _swallow(lambda: open(outside + "/f", "w").close()),
        "open_descriptor": lambda: open(os.open("f", os.O_RDONLY)).close(),
        "open_elsewhere": _in_cwd(outside, _swallow(lambda: open("g", "w").close())),
        "kill_self": lambda: os.kill(os.getpid(), 0),
        "kill_other": _swallow(lambda: os.kill(1, 0)),
        "pthread_kill_self": lambda: signal.pthread_kill(threading.get_ident(), 0),
        "socketpair": lambda: [end.close() for end in socket.socketpair()],
        "datagram_socket": _swallow(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()),
        "hostname": socket.gethostname,
        "coroutine_flag": lambda: types.coroutine(lambda: (yield)),
        "settrace_none": lambda: sys.settrace(None),
        "settrace_tracer": _swallow_refusal(lambda: sys.settrace(lambda *_: None)),
        "code_replace": lambda: _raise_own.__code__.replace(co_name="other"),
        "remove_inside": lambda: (open("r", "w").close(), os.remove("r")),
        "rename_outside": _swallow(lambda: (open("s", "w").close(), os.rename("s", outside + "/s"))),
        "gc_objects": lambda: gc.get_objects(),
        "current_exceptions": lambda: sys._current_exceptions(),
        "seal_event": lambda: sys.audit(_hook.SEAL_EVENT),
        "other_event": lambda: sys.audit("harness.nothing"),
        "ctypes_prefix": lambda: sys.audit("ctypes.dlopen", "x"),
        "exec": lambda: exec("1"),
    }


def main() -> None:
    mode, inside = sys.argv[1], os.path.realpath(sys.argv[2])
    os.chdir(inside)
    table = operations(inside)
    handed: list[str] = []
    pending: dict = {}
    if mode == "gate":
        _hook.install(_gate, lambda name, args: handed.append(name), pending, inside)
        try:
            _hook.install(_gate, lambda name, args: None, pending, inside)
            refused_again = False
        except PermissionError:
            refused_again = True
        handed.clear()
        pending.clear()
    else:
        read_end, write_end = os.pipe()
        os.set_blocking(read_end, False)
        sys.addaudithook(_hook.make_hook(write_end, inside, None, [None]))
    seen = {}
    for name, operation in table.items():
        before = len(handed)
        refused = False
        try:
            operation()
        except PermissionError as error:
            refused = "sandbox refused" in str(error)
        if mode == "gate":
            seen[name] = len(handed) > before
        else:
            try:
                recorded = bool(os.read(read_end, 65536))
            except BlockingIOError:
                recorded = False
            seen[name] = recorded or refused
    if mode == "gate":
        seen["<second install refused>"] = refused_again
        seen["<pending notes the handed events>"] = set(pending) == set(handed)
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
