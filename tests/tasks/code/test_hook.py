"""The jail's audit hook (`tasks/code/sandbox/_hook.py`) as the candidate meets it: what it decides
uses nothing the candidate can rebind, frame reads are judged by the frame they hand out, and a
refusal holds (and, where it can, is recorded) even when a signal handler or the recursion limit
interrupts the hook.

Each jail test is one program run through the real jail (`run_tests`) whose hidden test asserts
what the candidate observed from inside; the audit records are asserted against hand-listed kinds.
"""

from __future__ import annotations

import builtins
import dis
import os
import re
import subprocess
import sys
import types
from collections.abc import Iterator

import pytest

from tasks.code.sandbox import ExecutionResult, SandboxLimits, _hook, run_tests
from tests.support.sandbox_attacks import FAST

_LOADS_BY_NAME = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "IMPORT_NAME"})


def _hook_functions() -> list[types.FunctionType]:
    """Every Python function the installed hook can run: the hook, and what its defaults and
    closures hold, transitively (made on a pipe, as the jail makes it)."""
    read_end, write_end = os.pipe()
    try:
        hook = _hook.make_hook(write_end, "/nonexistent-workdir", None, [None])
    finally:
        os.close(read_end)
        os.close(write_end)
    functions: list[types.FunctionType] = []
    pending: list[object] = [hook]
    seen: set[int] = set()
    while pending:
        function = pending.pop()
        if type(function) is not types.FunctionType or id(function) in seen:
            continue
        seen.add(id(function))
        functions.append(function)
        pending.extend(function.__defaults__ or ())
        for cell in function.__closure__ or ():
            try:
                pending.append(cell.cell_contents)
            except ValueError:
                pass
    return functions


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if type(constant) is types.CodeType:
            yield from _code_objects(constant)


def _named_names() -> set[str]:
    """Every name the hook's code objects name (`co_names`: globals, builtins and attributes)."""
    return {name for function in _hook_functions() for code in _code_objects(function.__code__) for name in code.co_names}


def test_the_hooks_code_loads_no_global_or_builtin_name() -> None:
    """By construction: a name looked up at call time is one the candidate can rebind (a patched
    `builtins.range` once ran candidate code inside the hook), so the hook's functions load none."""
    functions = _hook_functions()
    assert {function.__name__ for function in functions} >= {"hook", "settle", "settle_blocked", "judge", "record", "text", "realpath"}
    loads = sorted(
        f"{code.co_name}: {instruction.opname} {instruction.argval}"
        for function in functions
        for code in _code_objects(function.__code__)
        for instruction in dis.get_instructions(code)
        if instruction.opname in _LOADS_BY_NAME
    )
    assert loads == []


def _run(program: str, expected: object, limits: SandboxLimits = FAST) -> ExecutionResult:
    return run_tests(program, f"def check(candidate):\n    assert candidate() == {expected!r}\n", "probe", limits)


def _kinds(result: ExecutionResult) -> set[str]:
    return {str(event["kind"]) for event in result.audit_events}


# Each kind of forbidden call, made with every builtin the hook's code names (and every callable
# the test could find on builtins, os and sys) replaced by a tripwire that raises a BaseException
# through whatever calls it: the hook must neither call one nor lose a record.
REBOUND = """
import builtins, gc, os, sys, _socket
_setattr, _open, _getframe, _settrace, _system = setattr, open, sys._getframe, sys.settrace, os.system
_socket_new, _import, _get_objects, _current_frames = _socket.socket, __import__, gc.get_objects, sys._current_frames
HITS = []
def _wire(name):
    def wire(*args, **kwargs):
        HITS.append(name)
        raise KeyboardInterrupt(name)
    return wire
def _replaceable(module, name):
    value = getattr(module, name)
    if name.startswith("__") or name.endswith("hook") or not callable(value):
        return False
    return not (isinstance(value, type) and issubclass(value, BaseException))
NAMES = sorted(set(NAMED) | set(dir(builtins)))
TARGETS = [(builtins, name) for name in NAMES if hasattr(builtins, name) and _replaceable(builtins, name)]
TARGETS += [(module, name) for module in (os, sys) for name in dir(module) if _replaceable(module, name)]
SAVED = [(module, name, getattr(module, name)) for module, name in TARGETS]
WIRES = [(module, name, _wire(name)) for module, name in TARGETS]
def _armed(function, *args):
    for module, name, wire in WIRES:
        _setattr(module, name, wire)
    try:
        function(*args)
    except BaseException:
        pass
    for module, name, value in SAVED:
        _setattr(module, name, value)
_armed(_open, "/tmp")  # outside the jail, and there in its own root (the machine's /etc is not)
_armed(_open, "/tmp/sandbox-hook-test-marker", "w")
_armed(_system, "true")
_armed(_socket_new, _socket.AF_INET, _socket.SOCK_STREAM)
_armed(_import, "_ctypes")
_armed(_get_objects)
_armed(_settrace, lambda *args: None)
_armed(_current_frames)
def probe():
    return [len(TARGETS) > 300, sorted(set(HITS))]
"""
# (code_patch: no function of the sandbox's is within the candidate's reach any more; the hook's
# refusal of one is tested with forged events, below)
EVERY_KIND = {"file_read", "file_write", "process_spawn", "network", "ctypes", "introspection", "hook_patch", "frame_inspection"}


def test_rebinding_every_name_the_hook_could_use_silences_no_record() -> None:
    program = REBOUND.replace("NAMED", repr(sorted(_named_names() & set(dir(builtins)))))
    result = _run(program, [True, []])
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert _kinds(result) == EVERY_KIND


# Ordinary introspection, at load and in a call: tracebacks, inspect, logging's caller lookup, a
# generator's frame, the candidate's own frames. Nothing here reaches a frame of the sandbox.
INTROSPECTION = """
import inspect, io, logging, sys, traceback
def _tb():
    try:
        1 / 0
    except ZeroDivisionError as error:
        return [entry.name for entry in traceback.extract_tb(error.__traceback__)], traceback.format_exc().count("ZeroDivisionError")
def _generator():
    yield sys._getframe(0).f_code.co_name
def probe():
    generator = _generator()
    started = generator.gi_frame is not None and next(generator)
    stream = io.StringIO()
    logging.basicConfig(stream=stream, format="%(funcName)s")
    logging.getLogger("probe").warning("x")
    return [_tb(), LOADED, started, "def probe" in inspect.getsource(probe), inspect.currentframe().f_code.co_name,
            sys._getframe(0).f_back is not None, stream.getvalue().strip()]
LOADED = [_tb(), inspect.getsource(_tb).count("def"), len(traceback.extract_stack()) > 0, len(inspect.stack()) > 0]
"""
INTROSPECTION_SEES = [(["_tb"], 1), [(["_tb"], 1), 1, True, True], "_generator", True, "probe", True, "probe"]

# A refusal's traceback holds the candidate's frames only (it held the hook's, whose `tb_frame`
# was refused and recorded, and whose count and lines `tb_next` and `tb_lineno` read unaudited:
# red team sandbox10 `r1`); the caller of the entry point is not the sandbox's (no frame of the
# jail's is on the stack: `bare_stack`), and reading it is ordinary.
REACH = """
import sys
def probe():
    reached = []
    try:
        reached.append(sys._getframe(1).f_code.co_name)
    except PermissionError:
        pass
    try:
        open("/tmp")  # outside the work dir, and there in the jail's root
    except PermissionError as error:
        entry = error.__traceback__
        while entry is not None:
            try:
                reached.append(entry.tb_frame.f_code.co_name)
            except PermissionError:
                break
            entry = entry.tb_next
    return reached
"""


@pytest.mark.parametrize(
    ("program", "expected", "kinds"),
    [
        pytest.param(INTROSPECTION, INTROSPECTION_SEES, set(), id="ordinary_introspection_leaves_no_record"),
        pytest.param(REACH, ["<module>", "probe"], {"file_read"}, id="a_refusals_traceback_holds_the_candidates_frames_only"),
    ],
)
def test_frame_reads_are_judged_by_the_frame_they_hand_out(program: str, expected: object, kinds: set[str]) -> None:
    result = _run(program, expected)
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert _kinds(result) == kinds, result.audit_events
    assert sum(event["kind"] == "frame_inspection" for event in result.audit_events) == 0, result.audit_events


# Forged events whose arguments are of the candidate's types, each with every method the hook
# could call on them (comparison, hashing, description, path protocol) counting its calls: the
# hook checks exact types first, so none of them runs inside it.
HOSTILE_ARGUMENTS = """
import os, sys
CALLED = []
class _Spy:
    def __eq__(self, other):
        CALLED.append("__eq__")
        return True
    def __hash__(self):
        CALLED.append("__hash__")
        return 0
    def __repr__(self):
        CALLED.append("__repr__")
        return "spy"
    def __fspath__(self):
        CALLED.append("__fspath__")
        return "/etc/passwd"
class _Name(_Spy, str):
    pass
class _Number(_Spy, int):
    pass
for name, args in [
    ("object.__getattr__", (sys._getframe(0), _Name("tb_frame"))),
    ("object.__setattr__", (os._exit, _Name("__code__"), None)),
    ("socket.__new__", (None, _Number(1), _Number(1), 0)),
    ("open", (_Spy(), "r", 0)),
    ("open", (_Name("/etc/passwd"), _Name("w"), _Number(1))),
    ("os.remove", (_Spy(), _Name("x"))),
    ("sandbox.exit", (_Spy(),)),
]:
    try:
        sys.audit(name, *args)
    except PermissionError:
        pass
def probe():
    return CALLED
"""


def test_the_hook_calls_no_method_of_the_candidates_types() -> None:
    result = _run(HOSTILE_ARGUMENTS, [])
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    # A path of any other type than str, bytes or a descriptor cannot be resolved without calling
    # its methods, so its open is refused as a read outside, and its removal as a change outside; a
    # str subclass's path is read by its own characters (`/etc/passwd`: a read outside); the
    # attribute names, not exactly `str`, are nothing the hook judges.
    assert _kinds(result) == {"network", "file_read", "file_write", "exit"}, result.audit_events


IMPORTS_CTYPES = """
def _try(statement):
    try:
        exec(statement, {})
        return "imported"
    except PermissionError:
        return "refused"
OUTCOMES = [_try("import _ctypes"), _try("import ctypes")]
def probe():
    return OUTCOMES
"""


def test_importing_ctypes_is_refused_and_recorded() -> None:
    """The import statement's way to native code (docs/sandbox.md lists the ways that raise no
    event, which stay open)."""
    result = _run(IMPORTS_CTYPES, ["refused", "refused"])
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert [event["detail"] for event in result.audit_events] == ["import _ctypes", "import ctypes"]


# A SIGALRM handler that raises whenever the frame it interrupted is inside the hook, against a
# refused open whose path takes the hook long to resolve. It used to unwind the hook (which then
# settled the event again with the signals blocked); now the gate (`_gate.c`) gives every signal
# with a Python handler a C handler that only notes it while the judge runs, and hands it on
# after: the handler runs in the candidate's frame, never the hook's. The program reports whether
# its handler ever saw the hook, and whether any open returned a file.
INTERRUPTED = """
import signal, sys
FIRED, OPENED = [], []
class _Abort(BaseException):
    pass
def _handler(signum, frame):
    while frame is not None:
        if frame.f_code.co_filename.endswith("_hook.py"):
            FIRED.append(1)
            raise _Abort
        frame = frame.f_back
signal.signal(signal.SIGALRM, _handler)
signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
for _ in range(20):
    try:
        OPENED.append(open("/tmp/" + "x/../" * 20000).read())
    except BaseException:
        pass
    if FIRED:
        break
signal.setitimer(signal.ITIMER_REAL, 0)
def probe():
    return [bool(FIRED), OPENED]
"""


def test_a_signal_handler_never_runs_inside_the_hook_and_the_refusal_is_recorded() -> None:
    result = _run(INTERRUPTED, [False, []], SandboxLimits(wall_s=30.0, cpu_s=20, memory_mb=512))
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert _kinds(result) == {"file_read"}, result.audit_events


# A signal made to arrive during C code that is directly followed by an audited C call, so that
# the handler is due on the hook's entry, before its first instruction. It ran there (handed the
# hook's frame, and a raise stopped the hook before it started); now the gate runs the handlers
# due before it calls the judge, in the candidate's frame, and the call is judged as any other.
AT_THE_ENTRY = """
import functools, gc, operator, signal
LANDED, RETURNED = [], []
class _Abort(BaseException):
    pass
def _handler(signum, frame):
    if frame.f_code.co_filename.endswith("_hook.py"):
        LANDED.append((frame.f_code.co_name, frame.f_lasti))
        raise _Abort
signal.signal(signal.SIGALRM, _handler)
_slow = functools.partial(sum, range(2_000_000))
for _ in range(3):
    signal.setitimer(signal.ITIMER_REAL, 0.001)
    try:
        RETURNED.append(len(list(map(operator.call, [_slow, gc.get_objects]))[1]))
    except BaseException:
        pass
    signal.setitimer(signal.ITIMER_REAL, 0)
def probe():
    return [sorted(set(LANDED)), RETURNED]
"""


def test_a_handler_due_on_the_hooks_entry_runs_before_it_and_the_call_is_judged() -> None:
    result = _run(AT_THE_ENTRY, [[], []], SandboxLimits(wall_s=30.0, cpu_s=20, memory_mb=512))
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert [(event["kind"], event["detail"]) for event in result.audit_events] == [("introspection", "gc.get_objects")] * 3


# The forbidden calls made from a frame 6 levels from the recursion limit (`open` takes 5 in C
# before its audit event, in a plain python3 too), where the judge's frames would not fit: they are none of the
# candidate's and do not count against its limit, so each is
# refused and recorded there as anywhere (it failed with RecursionError before, unrecorded), and
# none returns what it would have.
AT_THE_LIMIT = """
import functools, gc, os, sys
def _deepest(depth):
    try:
        return _deepest(depth + 1)
    except RecursionError:
        return depth
def _at_the_limit(call):
    def down(left):
        if left:
            return down(left - 1)
        try:
            call()
            return "done"
        except (RecursionError, PermissionError) as error:
            return type(error).__name__
    return down(_deepest(0) - 6)
OUTCOMES = [_at_the_limit(call) for call in (
    gc.get_objects, functools.partial(os.kill, 1, 0), functools.partial(sys.settrace, print), os.fork,
    sys._current_frames, functools.partial(open, "/tmp/sandbox-hook-test-marker", "w"),
)]
def probe():
    return [OUTCOMES, sys.gettrace() is None]
"""


def test_a_call_at_the_recursion_limit_is_refused_and_recorded() -> None:
    result = _run(AT_THE_LIMIT, [["PermissionError"] * 6, True])
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert [event["kind"] for event in result.audit_events] == [
        "introspection", "process_spawn", "hook_patch", "process_spawn", "frame_inspection", "file_write",
    ], result.audit_events
    assert not os.path.exists("/tmp/sandbox-hook-test-marker")


# Run in a fresh interpreter: an audit hook cannot be removed once added.
AUDITED_READS = """
import sys
events = []
def generator():
    yield
try:
    raise ValueError
except ValueError as error:
    trace = error.__traceback__
frame, running = sys._getframe(0), generator()
sys.addaudithook(lambda name, args: events.append((type(args[0]).__name__, args[1])) if name == "object.__getattr__" else None)
trace.tb_frame, running.gi_frame, frame.f_back, frame.f_globals, frame.f_locals, trace.tb_next
print(events)
"""


def test_the_frame_reads_the_hook_judges_are_the_ones_cpython_audits() -> None:
    """CPython 3.11 raises `object.__getattr__` for a traceback's `tb_frame` and a generator's
    `gi_frame` (READ_RESTRICTED members), and no event for `f_back`, `f_globals`, `f_locals` or
    `tb_next` (docs/sandbox.md lists those as unaudited)."""
    seen = subprocess.run([sys.executable, "-I", "-c", AUDITED_READS], capture_output=True, text=True, check=True, timeout=60)
    assert seen.stdout.strip() == "[('traceback', 'tb_frame'), ('generator', 'gi_frame')]"
    assert {"tb_frame", "gi_frame", "cr_frame", "ag_frame"} == _hook._FRAME_ATTRIBUTES


# Red team sandbox3 h_recursion: an honest program that lets the library's deepcopy try a structure
# too deep for it and falls back on RecursionError. At the limit, deepcopy's audited `id()` call
# fits the hook's first frame but not the frames below it; that is no interruption, so the call
# fails as it would if the hook could not start, and the program's fallback runs.
DEEP_COPY = """
import copy
def _nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value
try:
    COPIED = copy.deepcopy(_nested(5000)) is not None
except RecursionError:
    COPIED = "fell back"
def probe():
    return COPIED
"""


def test_running_out_of_stack_inside_the_hook_is_no_interruption() -> None:
    result = _run(DEEP_COPY, "fell back")
    assert result.outcome == "pass", (result.reason, result.audit_events)
    assert _kinds(result) == set(), result.audit_events


# Red team sandbox10 `r1`: what raised out of the judge carried its frames in the traceback,
# whose count and lines `tb_next` and `tb_lineno` read with no audit event. A refusal is now raised
# as a C function's error is: no entry but the candidate's frame, no cause, and as its context
# only what the candidate was handling.
REFUSAL_TRACEBACK = """
import gc
def _refused(handling):
    try:
        if handling:
            try:
                raise KeyError("mine")
            except KeyError:
                gc.get_objects()
        gc.get_objects()
    except PermissionError as error:
        entries, trace = 0, error.__traceback__
        while trace is not None:
            entries, trace = entries + 1, trace.tb_next
        return [entries, type(error.__context__).__name__, error.__cause__ is None]
def probe():
    return [_refused(False), _refused(True)]
"""


def test_a_refusal_carries_no_frame_of_the_judge() -> None:
    result = _run(REFUSAL_TRACEBACK, [[1, "NoneType", True], [1, "KeyError", True]])
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert _kinds(result) == {"introspection"}


# Red team sandbox13 `r3`, `r2`: a change named relative to a directory descriptor (`dir_fd`) of a
# readable library directory was judged against the working directory, inside, and passed with no
# record (the read-only mount refused it); `shutil.rmtree` of a `pathlib.Path` was not judged, and
# its removals are relative to descriptors. `os.open`'s event carries no `dir_fd`, and `os.mkfifo`
# and `os.mknod` raise none. Each is judged against the directory the descriptor is of. And
# `sqlite3.connect`, which creates its file in C, was not judged at all.
RELATIVE_TO_A_DESCRIPTOR = """
import os, pathlib, shutil
LIBRARY = os.path.dirname(os.__file__) + "/json"
fd = os.open(LIBRARY, os.O_RDONLY | os.O_DIRECTORY)
def _tried(change):
    try:
        change()
        return "done"
    except OSError as error:
        return type(error).__name__
ATTEMPTS = {
    "remove": lambda: os.remove("__init__.py", dir_fd=fd),
    "rmdir": lambda: os.rmdir("__pycache__", dir_fd=fd),
    "mkdir": lambda: os.mkdir("made", dir_fd=fd),
    "rename": lambda: os.rename("decoder.py", "x.py", src_dir_fd=fd, dst_dir_fd=fd),
    "rename_in": lambda: os.rename("decoder.py", "stolen.py", src_dir_fd=fd),
    "chmod": lambda: os.chmod("encoder.py", 0o777, dir_fd=fd),
    "chown": lambda: os.chown("encoder.py", -1, -1, dir_fd=fd),
    "utime": lambda: os.utime("encoder.py", dir_fd=fd),
    "link": lambda: os.link("/dev/null", "null", dst_dir_fd=fd),
    "symlink": lambda: os.symlink("/dev/null", "null", dir_fd=fd),
    "open": lambda: os.close(os.open("made.py", os.O_WRONLY | os.O_CREAT, dir_fd=fd)),
    "mkfifo": lambda: os.mkfifo("fifo", dir_fd=fd),
    "mkfifo_absolute": lambda: os.mkfifo(LIBRARY + "/fifo"),
    "mknod": lambda: os.mknod(LIBRARY + "/node"),
    "setxattr": lambda: os.setxattr(LIBRARY + "/encoder.py", "user.x", b"1"),
    "rmtree_path": lambda: shutil.rmtree(pathlib.Path(LIBRARY)),
    "sqlite": lambda: __import__("sqlite3").connect(LIBRARY + "/made.db").close(),
    "sqlite_uri": lambda: __import__("sqlite3").connect("file:" + LIBRARY + "/made.db?mode=rwc", uri=True).close(),
}
class _Text(str):
    pass
class _Buffer(bytearray):
    def __fspath__(self):
        raise RuntimeError("a buffer's __fspath__ is never called")
class _Place:
    def __init__(self, path):
        self.path = path
    def __fspath__(self):
        return self.path
ATTEMPTS.update({
    # Red team sandbox14 `r1`, `r6`, `r2`: a str subclass, and a PathLike the gate's own wrappers
    # passed on as given, were not judged at all.
    "remove_text": lambda: os.remove(_Text(LIBRARY + "/decoder.py")),
    "mkdir_text_at": lambda: os.mkdir(_Text("made"), dir_fd=fd),
    "symlink_text_target": lambda: os.symlink(_Text("/usr"), "out"),
    "mkdir_buffer": lambda: os.mkdir(bytearray((LIBRARY + "/made").encode())),
    "mkfifo_place": lambda: os.mkfifo(_Place(LIBRARY + "/fifo")),
    "mknod_place_at": lambda: os.mknod(_Place("node"), dir_fd=fd),
    "open_place_at": lambda: os.close(os.open(_Place("made.py"), os.O_WRONLY | os.O_CREAT, dir_fd=fd)),
    # `r3`: a link made deep whose relative target steps up points outside once it is moved up.
    "symlink_stepping_up": lambda: os.makedirs("a/b", exist_ok=True) or os.symlink("../../x", "a/b/l"),
    # sandbox15 `r1`, `r2`, `t3`: bytes not UTF-8 were judged as another name (through a link named
    # b"\\xff" to the work dir, "..": outside); a buffer's `__fspath__` was called, CPython's never is.
    "mkdir_through_a_bytes_link": lambda: os.symlink(os.getcwd().encode(), b"\\xff") or os.mkdir(os.getcwd().encode() + b"/\\xff/../escaped"),
    "symlink_to_the_root_by_bytes": lambda: os.symlink(os.getcwd().encode() + b"/\\xff/\\xff/\\xff/../../..", "root"),
    "mkfifo_buffer": lambda: os.mkfifo(_Buffer(b"fifo3")),
})
OUTCOMES = {name: _tried(change) for name, change in ATTEMPTS.items()}
def probe():
    return OUTCOMES
"""


def test_a_change_relative_to_a_descriptor_is_judged_by_its_directory() -> None:
    names = re.findall(r'^    "(\w+)": lambda', RELATIVE_TO_A_DESCRIPTOR, re.MULTILINE)
    assert len(names) == 29
    result = _run(RELATIVE_TO_A_DESCRIPTOR, dict.fromkeys(names, "PermissionError"))
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    recorded = [str(event["detail"]) for event in result.audit_events if event["kind"] == "file_write"]
    assert len(recorded) >= len(names) and _kinds(result) == {"file_write"}, result.audit_events


# What a program does with descriptors of its own directories: walk, remove and make through them.
DESCRIPTORS_OF_ITS_OWN = """
import os, pathlib, shutil
os.makedirs("tree/a/b", exist_ok=True)
for name in ("tree/x", "tree/a/y", "tree/a/b/z"):
    open(name, "w").close()
WALKED = sorted(path + "/" + name for path, _, names, _ in os.fwalk("tree") for name in names)
fd = os.open("tree/a", os.O_RDONLY | os.O_DIRECTORY)
os.mkdir("made", dir_fd=fd)
os.rename("y", "made/y", src_dir_fd=fd, dst_dir_fd=fd)
os.close(os.open("new", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
os.mkfifo("fifo", dir_fd=fd)
os.symlink("made/y", "link", dir_fd=fd)
os.chmod("new", 0o600, dir_fd=fd)
os.remove("new", dir_fd=fd)
LEFT = sorted(os.listdir(fd))
shutil.rmtree(pathlib.Path("tree"))
os.makedirs("/".join(["deep"] * 80))  # red team sandbox14 `h1`: 64 levels or more was judged outside
shutil.rmtree("deep")
class _Text(str):
    pass
os.mkfifo(pathlib.Path("fifo2"))
os.remove(_Text("fifo2"))
import sqlite3
sqlite3.connect(":memory:").execute("create table t (x)")
sqlite3.connect("mine.db").close()
sqlite3.connect("file:mine.db?mode=ro", uri=True).close()
def probe():
    return [WALKED, LEFT, os.path.exists("tree")]
"""


def test_changes_through_descriptors_of_its_own_directories_pass_unrecorded() -> None:
    expected = [["tree/a/b/z", "tree/a/y", "tree/x"], ["b", "fifo", "link", "made"], False]
    result = _run(DESCRIPTORS_OF_ITS_OWN, expected)
    assert result.outcome == "pass", (result.reason, result.cases[0].returned if result.cases else ())
    assert result.audit_events == (), result.audit_events
