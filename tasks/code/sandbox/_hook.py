"""The jail's audit hook (untrusted side: the standard library and the sandbox's C gate): record and refuse.

The hook is the jail's recorder, not its wall: the kernel measures (`_jail.py`: namespaces, an
unprivileged uid, Landlock, seccomp) hold even when it is bypassed. It exists so that the shield
sees what the candidate tried. Event kinds, each reported as `["event", kind, detail, call]`:
  process_spawn     subprocess.Popen, os.system, os.exec*, os.posix_spawn, os.spawn*, os.fork,
                    os.forkpty, os.kill/killpg of another pid -- refused (a signal to itself, its
                    own group or its own threads, which seccomp also allows, leaves no record)
  file_write        open() for writing (but of /dev/null), remove/rename/rmdir/chmod/chown/mkfifo/
                    mknod/setxattr/sqlite3.connect... outside the work dir, a path relative to a directory
                    descriptor judged by the directory it is of (`changed_outside`) -- refused
  network           any socket.* event but a Unix stream socket's creation (a socketpair's ends:
                    seccomp refuses the `socket` system call itself) and socket.gethostname (the
                    UTS namespace's own name) -- refused (the jail also has an empty network
                    namespace)
  process_inspection  open() of another process's /proc/<pid> entry -- refused
  file_read         open() for reading, outside the work dir and the readable paths, of a path that
                    exists -- refused; Landlock refuses it too, this records the attempt
  ctypes            ctypes.dlopen/dlsym/cdata/..., and the import of a module of `NATIVE` (ctypes,
                    CPython's test modules, subinterpreters) by any name or from its file --
                    refused (no jail holds one, so any way to it loads an extension from disk and
                    raises `import`; its file is blanked in the jail's root too: docs/sandbox.md,
                    "No native code in the jail")
  frame_inspection  an audited read that would hand out a frame of the sandbox's own code (the
                    jail's, this hook's, the fork server's: `sandbox_frame`): sys._getframe, a
                    traceback's tb_frame, a generator's, coroutine's or async generator's
                    gi_frame/cr_frame/ag_frame -- refused; sys._current_frames, sys._current_exceptions -- refused;
                    what records every thread's frames at an instant the candidate picks
                    (`OBSERVERS`: faulthandler.dump_traceback_later and register, enable where a
                    fatal signal has the candidate's own action, tracemalloc.start; raised by the
                    gate's wrappers) -- refused. Frames
                    and code objects of the candidate's own code or of the library are ordinary
                    (tracebacks, inspect, logging) and leave no record, and reading code
                    (`__code__`, `f_code`, `gi_code`) is never judged. `f_back`, `f_globals`,
                    `f_locals` and a signal handler's frame raise no event in CPython 3.11: the
                    hook cannot see them (docs/sandbox.md says what they reach).
  introspection     gc.get_objects/get_referrers/get_referents -- refused (they reach every object
                    of the jail, this hook's own closure among them)
  hook_patch        sys.addaudithook, sys.settrace/setprofile -- refused (but of None, a call that
                    changes nothing, which the gate passes: it reads the argument); a replaced sys.excepthook
                    -- recorded (raised by the jail). (`os._exit` and `atexit.register` are the
                    interpreter's own, unwrapped: a wrapper is a Python function, a tell. The jail
                    ends in os._exit, so no atexit handler ever runs; an exit is the parent's
                    record, below.)
  exit              SystemExit out of a call (the jail raises "sandbox.exit") -- recorded
  code_patch        a code object built from bytes (`code.__new__`: CodeType, code.replace; not
                    `types.coroutine`'s flag, `library_code_patch`), `marshal.loads`/`load` of bytes
                    the compiler did not make (`own_bytecode`) -- refused (bytecode of the
                    candidate's own reads and writes memory at will), each judged by its data; assigning __code__, __defaults__ or __kwdefaults__ on one of the sandbox's own
                    functions (this hook's, the jail's) -- refused; on any other function
                    (the candidate's, the library's: `types.coroutine` does it) it is allowed
The trusted parent adds kinds of its own (`exit`, `kernel_refusal`, `evidence_tampering`, see
`channel.py` and `executor.py`).

What the candidate can rebind decides nothing, by construction: the code of every function the
hook runs loads no global or builtin name (test_hook.py walks their code objects), so everything
it calls is a C function or a closure value captured in `make_hook`, before any candidate code,
and those closures are sealed (`_sealed`). Details are built from exact builtin types only (a
candidate's `__repr__`/`__fspath__`/`__eq__`/`__hash__` is never called: every argument is
type-checked before it is compared), paths are resolved with C functions, and the hook holds the
only reference to its own writer. Before each record it checks that its descriptor is still the
reply pipe it was given; if the candidate closed or replaced it (`dup2`), the jail exits at once
with `DIVERTED_STATUS`, which the parent records as `evidence_tampering`.

A refusal holds even when its record is lost: CPython fails the audited operation whenever the
hook raises. A Python signal handler can run inside the hook (it receives the hook's frame) and
raise to unwind it; the hook then settles the same event again with the thread's signals blocked,
so the record is written, and then raises the refusal, or for an operation it allows the handler's
exception (as it would surface from the operation in plain Python); interrupted three times, the
jail exits with `DIVERTED_STATUS`. A handler that raises before the hook's first instruction
(the eval loop's check at the function's entry) stops it before it starts; the gate (`_gate.c`,
in C) noted the event before it called the hook, and the note left over is recorded at the next
seal (`pending`). The hook's frames do not count against the candidate's recursion limit (the
gate gives it a headroom of its own), so a call from the deepest frame the limit allows is judged
and recorded like any other.

The hook is not itself an audit hook of CPython's: the gate is (`install`), and hands it only the
events of `JUDGED`, but those of them it settles in C where the judgement is plainly "let pass".
"""

import os
import sys
from types import FrameType, MappingProxyType  # already imported by the fork server (functools, signal): costs nothing

try:  # the sandbox's C gate: a top-level module in the fork server and the jail, the package's here
    import _gate
except ImportError:
    from tasks.code.sandbox import _gate  # type: ignore[attr-defined]

# Modules that reach native code, or an interpreter without this hook, from pure Python: ctypes,
# CPython's test modules (arbitrary memory reads and writes among their functions), and the
# subinterpreter modules (a subinterpreter has no audit hook of the jail's). Refused and recorded
# (`ctypes`) by whatever name they are asked for; the jail's root holds none of their files either
# (`_root.plan` blanks them).
NATIVE = frozenset({
    "ctypes", "_ctypes", "_ctypes_test", "_testcapi", "_testinternalcapi", "_testbuffer", "_testmultiphase",
    "_testimportmultiple", "_testclinic", "_testsinglephase", "_xxsubinterpreters", "_xxinterpchannels", "_xxtestfuzz",
})
_SPAWN = frozenset(
    {
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
        "os.kill", "os.killpg", "pty.spawn", "os.startfile", "signal.pthread_kill",
    }
)
# Each event that changes the file system, with where its paths are among its arguments, each with
# where the directory descriptor it is relative to is (`dir_fd`, -1 when none; None where the
# call takes none). `os.symlink`'s first argument, the link's target, is judged on its own
# (`link_outside`). The gate raises the last three: CPython's `os.open` event names no `dir_fd`, and
# `os.mkfifo` and `os.mknod` raise none (`_gate.c`, `ROUTES`).
_CHANGED_PATHS = MappingProxyType({
    "os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "shutil.rmtree": ((0, 1),), "os.mkdir": ((0, 2),),
    "os.chmod": ((0, 2),), "os.chown": ((0, 3),), "os.utime": ((0, 3),), "os.rename": ((0, 2), (1, 3)),
    "os.link": ((0, 2), (1, 3)), "os.symlink": ((1, 2),), "os.truncate": ((0, None),), "os.setxattr": ((0, None),),
    "os.removexattr": ((0, None),), "sandbox.open_at": ((0, 2),), "sandbox.mkfifo": ((0, 1),), "sandbox.mknod": ((0, 1),),
})
_FILE_CHANGE = frozenset(_CHANGED_PATHS)
_INTROSPECTION = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
_HOOKS = frozenset({"sys.addaudithook", "sys.settrace", "sys.setprofile"})
# Raised by the gate's wrappers of what would record the frames of the sandbox's own code, at an
# instant the candidate picks and with no event of CPython's (`_gate.c`, `ROUTES`).
OBSERVERS = frozenset({"faulthandler.dump_traceback_later", "faulthandler.register", "faulthandler.enable", "tracemalloc.start"})
# The audited attribute reads (`object.__getattr__`, CPython 3.11's READ_RESTRICTED members) that
# hand out a frame; `f_back` raises no event (see docs/sandbox.md, Confinement).
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_AF_UNIX, _SOCK_STREAM = 1, 1
SEAL_EVENT = "sandbox.seal"  # raised by the jail to have the hook's seal checked (`_sealed`)
# What makes a function do something else, besides its closure's cells (`_sealed`): refused on the
# sandbox's own functions.
_FUNCTION_STATE = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
# The jail's exit status when its record descriptor no longer is the reply pipe, its seal is broken
# or its judgement was interrupted three times (`_sealed`).
DIVERTED_STATUS = 86
CPU_LIMIT_STATUS = 87  # the jail's exit status when its CPU-time soft limit fired (SIGXCPU)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
# Every event `judge` decides on, by exact name and by prefix. The gate (`_gate.c`, the jail's one
# audit hook) hands only these to the hook, and passes the common harmless cases of some of them
# itself; every other event costs a C call and never a Python one.
JUDGED = frozenset(
    {
        "open", "code.__new__", "marshal.loads", "marshal.load", "import", "sys._current_frames", "sys._current_exceptions", "sys._getframe",
        "object.__getattr__", "object.__setattr__", "socket.__new__", "socket.gethostname", SEAL_EVENT,
        "sandbox.exit", "sandbox.hook_patch", "sqlite3.connect",
        # Answered by the gate alone, as the kernel answers a lock request it refuses (`_gate.c`,
        # `lock_check`): the filter makes every lock succeed without touching a kernel object.
        "fcntl.flock", "fcntl.lockf", "fcntl.fcntl", "os.lockf",
    }
) | _SPAWN | _FILE_CHANGE | _INTROSPECTION | _HOOKS | OBSERVERS
JUDGED_PREFIXES = ("socket.", "ctypes.")


def make_text():
    """`text(value)`: a short description built without calling any method of `value`."""
    _type, _str, _bytes, _int, _float, _bool = type, str, bytes, int, float, bool
    _tuple, _list, _len, _repr, _none = tuple, list, len, repr, type(None)
    qualname = type.__dict__["__qualname__"].__get__

    def text(value, depth=0):
        t = _type(value)
        if t is _str or t is _bytes:
            return _repr(value[:200])[:200]
        if t is _int or t is _float or t is _bool or t is _none:
            return _repr(value)[:200]
        if (t is _tuple or t is _list) and depth < 2:
            parts = [text(item, depth + 1) for item in value[:8]]
            return "(" + ", ".join(parts) + (", ..." if _len(value) > 8 else "") + ")"
        name = qualname(t)  # a class's `__qualname__` may be a str subclass of its own (red team sandbox12 `j2`)
        return "<" + (name[:60] if _type(name) is _str else "?") + ">"

    return text


def _make_realpath():
    """os.path.realpath (non-strict) from C functions only: the library version looks names up in
    module globals at call time, which a candidate could replace to run its code inside the hook."""
    # ValueError too: a path with a NUL byte (`shutil.rmtree` raises its event before it converts
    # its argument; red team sandbox13 `h2`: the hook's own failure ended an honest run).
    _lstat, _readlink, _getcwd, _os_error = os.lstat, os.readlink, os.getcwd, (OSError, ValueError)
    link_mode, type_mask = 0o120000, 0o170000

    def realpath(path):
        if not path.startswith("/"):
            try:
                path = _getcwd() + "/" + path
            except _os_error:
                return path
        pending = path.split("/")[::-1]
        done: list[str] = []
        links = 0
        while pending:
            part = pending.pop()
            if part == "" or part == ".":
                continue
            if part == "..":
                if done:
                    done.pop()
                continue
            here = "/" + "/".join(done) + ("/" if done else "") + part
            try:
                mode = _lstat(here).st_mode
            except _os_error:
                done.append(part)
                continue
            if mode & type_mask == link_mode and links < 40:
                links += 1
                try:
                    target = _readlink(here)
                except _os_error:
                    done.append(part)
                    continue
                if target.startswith("/"):
                    done = []
                pending.extend(target.split("/")[::-1])
                continue
            done.append(part)
        return "/" + "/".join(done)

    return realpath


def _sandbox_globals(sandbox_dir):
    """The module namespaces of the sandbox's own code: those of every frame now on the stack (the
    jail's `run`, the fork server's frames below it, this module) but a library module's, and of
    every loaded module whose file is in `sandbox_dir`. Called before any candidate code; the
    tuple keeps them alive, so their ids stay theirs."""

    def ours(namespace):
        path = namespace.get("__file__")
        return type(path) is not str or path.startswith(sandbox_dir)

    namespaces = {}
    frame: FrameType | None = sys._getframe(0)
    while frame is not None:
        if ours(frame.f_globals):
            namespaces[id(frame.f_globals)] = frame.f_globals
        frame = frame.f_back
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if type(path) is str and path.startswith(sandbox_dir):
            namespaces[id(module.__dict__)] = module.__dict__
    return tuple(namespaces.values())


def make_hook(fd, workdir, readable, call_box, candidate_file="<candidate>", scratch=(), pending=None):
    """An audit hook writing its events as records to `fd`; paths are judged against `workdir`
    (and `scratch`, other directories of the jail's own, such as its private /dev/shm) and, when
    given, `readable`: the real-path prefixes (each ending in "/") reads may come from.
    `call_box[0]` is the call being answered (None between calls), which labels each event;
    `candidate_file` is the file name the candidate's code was compiled with. `pending`, when
    given, is the dict the gate notes each event in before it calls the hook (in C: no signal
    handler can interrupt it), by name, with the address of its arguments (never the arguments:
    a note left over would keep the candidate's objects until the seal let them go in the hook's
    frame): each event's entry is removed when its judgement is settled, and at `SEAL_EVENT` an
    entry left over is a judgement that never started (a signal handler raised on the hook's
    entry), recorded as `evidence_tampering`.

    Everything the hook's functions use is captured here, as a closure value, and is either
    immutable or a C function: their code loads no global or builtin name, so nothing the
    candidate rebinds later (a builtin, a module attribute) is ever called by the hook."""
    from _json import encode_basestring_ascii as quote
    from _signal import SIG_BLOCK, SIG_SETMASK, pthread_sigmask, valid_signals
    from _thread import get_ident
    from io import open as _open
    from time import sleep

    realpath, getframe, write, fstat, exit_now = _make_realpath(), sys._getframe, os.write, os.fstat, os._exit
    channel = fstat(fd)
    channel_id = (channel.st_dev, channel.st_ino)
    inside = tuple(path.rstrip("/") + "/" for path in (workdir, *scratch))
    try:  # /proc/self resolves here; any other /proc/<pid> is refused (in a PID namespace
        own_proc = f"/proc/{os.readlink('/proc/self')}/"  # getpid() is 1, /proc still counts from outside)
    except OSError:
        own_proc = f"/proc/{os.getpid()}/"
    _str, _bytes, _int, _type, _any, _len, _dict = str, bytes, int, type, any, len, dict
    _int_repr, _os_error = int.__repr__, OSError
    spawn, file_change, introspection, hooks, observers = _SPAWN, _FILE_CHANGE, _INTROSPECTION, _HOOKS, OBSERVERS
    own_pid, own_signal_events = os.getpid(), frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})
    frame_attributes, write_flags, af_unix, sock_stream = _FRAME_ATTRIBUTES, _WRITE_FLAGS, _AF_UNIX, _SOCK_STREAM
    text = make_text()
    library = os.path.dirname(os.__file__)
    diverted_status, seal_event = DIVERTED_STATUS, SEAL_EVENT

    _lstat, code_type = os.lstat, _type(make_text.__code__)
    stat, _range, changed_paths, _issubclass = os.stat, range, _CHANGED_PATHS, issubclass
    _join_text, _join_bytes = str.join, bytes.join
    # Bytes decoded as `os.fsdecode` does, so that the str the judge resolves names the bytes the
    # kernel reads ("replace" made b"\xff" a U+FFFD, another name, and a link through it was
    # resolved wrongly: red team sandbox15 `r1`, `r2`).
    fs_encoding, fs_errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    _unreadable = (OSError, OverflowError, ValueError, TypeError)
    root = os.stat("/")
    root_place = (root.st_dev, root.st_ino)
    places = [(os.stat(path), os.stat(path + "/..")) for path in inside_paths(workdir, scratch)]
    inside_places = frozenset((here.st_dev, here.st_ino) for here, _ in places)
    own_devices = frozenset(here.st_dev for here, above in places if here.st_dev != above.st_dev)  # mounts of their own
    _absent = (FileNotFoundError, NotADirectoryError, ValueError)  # ValueError: a NUL byte names nothing
    function_type, code_of = _type(make_text), _type(make_text).__dict__["__code__"].__get__
    function_state = _FUNCTION_STATE
    sandbox_dir = os.path.dirname(os.path.abspath(__file__)) + "/"
    # What a frame is and whose code it runs, read with C getters that raise no audit event.
    frame_type, frame_globals = FrameType, FrameType.__dict__["f_globals"].__get__
    sandbox_namespaces = _sandbox_globals(sandbox_dir)
    generator_type, coroutine_type, async_generator_type = _frame_holder_types()
    traceback_type = _traceback_type()
    # The C getters of the audited attributes that hand out a frame, each with its type: a tuple,
    # never a dict, so no state here can be changed (a handler inside the hook reaches its closures).
    frame_getters = tuple(
        (holder, attribute, holder.__dict__[attribute].__get__)
        for holder, attribute in (
            (traceback_type, "tb_frame"), (generator_type, "gi_frame"), (coroutine_type, "cr_frame"),
            (async_generator_type, "ag_frame"),
        )
    )
    native = NATIVE
    standard_streams = ("/dev/stdout/", "/dev/stderr/", "/dev/stdin/", "/dev/fd/")
    # The two library functions that make code objects as honest programs need them: the import
    # system's `_compile_bytecode` (for .pyc files of the standard library) and `types.coroutine`.
    import types

    compile_bytecode_code = sys.modules["_frozen_importlib_external"]._compile_bytecode.__code__
    coroutine_code = types.coroutine.__code__
    # A frame's local read in place, never through `f_locals` (which stores every local into a dict
    # the candidate may have planted a key in first: red team sandbox15 `k6`, `k7`).
    code_of_frame, frame_local = FrameType.__dict__["f_code"].__get__, _gate.frame_local
    library_prefix = library + "/"
    reading: dict[int, object] = {}  # thread -> the object whose frame this thread's judgement is reading (its own event)
    coroutine_calls: dict[int, object] = {}  # id -> frame of each `types.coroutine` call that made its code object
    _id, _zip, _from_bytes = id, zip, int.from_bytes
    # marshal's type codes (Python/marshal.c), by what follows each: nothing; a fixed width; a
    # 4-byte count of items, or of bytes ("l": of 2-byte digits, negative for a negative int); a
    # 1-byte count of bytes.
    plain_kinds = frozenset(b"0NFTS.")
    # Read-only: the hook's state must not be changed through its frames (red team sandbox10 `p2`:
    # a finalizer run in them widened an entry, and forged bytecode loaded unrecorded).
    fixed_widths = MappingProxyType({0x69: 4, 0x67: 8, 0x79: 16, 0x72: 4})  # i, g, y, r
    counted_kinds = frozenset(b"([<>")
    sized_kinds = frozenset(b"stuaAl")
    short_sized_kinds = frozenset(b"zZf")
    every_signal = frozenset(valid_signals())

    def event_line(kind, detail):
        call = call_box[0]
        label = _int_repr(call) if _type(call) is _int else "null"
        # RS first, one write of at most PIPE_BUF: 300 characters escaped are at most 3,600 bytes
        # (a non-BMP character is a 12-byte surrogate pair), so the line stays under 4096 bytes.
        return '\x1e["event",' + quote(kind) + "," + quote(detail[:300]) + "," + label + "]\n"

    def record(kind, detail):
        try:
            here = fstat(fd)
            diverted = (here.st_dev, here.st_ino) != channel_id
        except _os_error:
            diverted = True
        if diverted:  # the descriptor was closed or replaced: end the jail rather than lose this
            exit_now(diverted_status)
        data = event_line(kind, detail).encode("ascii")
        while data:
            data = data[write(fd, data):]

    def plain_path(path):
        """`path` as the kernel will read it: a str or bytes subclass's own characters, copied
        from C (its methods are never called, and it cannot change: red team sandbox14 `r1`, `r6`
        passed through the judge unread), anything else as it is."""
        kind = _type(path)
        if kind is _str or kind is _bytes:
            return path
        if _issubclass(kind, _str):
            return _join_text("", (path,))
        if _issubclass(kind, _bytes):
            return _join_bytes(b"", (path,))
        return path

    def resolve(path):
        """The real path; None for an open descriptor; "" for anything that is not a plain path."""
        path = plain_path(path)
        t = _type(path)
        if t is _int:
            return None  # an already-open descriptor: its opening was judged
        if t is _bytes:
            path = path.decode(fs_encoding, fs_errors)
        elif t is not _str:
            return ""
        return realpath(path) + "/"

    def native_import(args):
        """The `import` event is of a module that reaches native code (`NATIVE`), told by the last
        part of the name asked for and by the file loaded (an extension's init symbol is its
        file's, whatever name it is loaded under: "alias._ctypes" is `_ctypes`)."""
        if not args or _type(args[0]) is not _str:
            return None
        name = args[0].rpartition(".")[2]
        path = args[1] if _len(args) > 1 and _type(args[1]) is _str else ""
        loaded = path.rpartition("/")[2].partition(".")[0]
        if name in native or loaded in native:
            return args[0] if name in native else args[0] + " (" + loaded + ")"
        if path and (not path.startswith(library_prefix) or ".." in path):
            # An extension of the candidate's own (red team sandbox6 `n1`: written into the work
            # dir and imported): only the standard library's may load.
            return args[0] + " (from " + path + ")"
        return None

    def outside(path):
        resolved = resolve(path)
        return resolved is not None and not resolved.startswith(inside)

    def standard_stream(path):
        """/dev/stdout, /dev/stderr, /dev/stdin or /dev/fd/N: a program's own streams by name
        (red team sandbox6 `h4`, `h5`). With no /proc they are not there, so the open fails with
        FileNotFoundError as on any machine without /proc, and it writes nothing: no record."""
        resolved = resolve(path)
        return _type(resolved) is _str and resolved.startswith(standard_streams)

    def other_process(path):
        resolved = resolve(path)
        if not resolved or not resolved.startswith("/proc/") or resolved.startswith(own_proc):
            return False
        return resolved[6:].split("/", 1)[0].isdigit()

    def sandbox_frame(frame):
        """`frame` runs the sandbox's own code (its globals are one of the sandbox's modules)."""
        if _type(frame) is not frame_type:
            return False
        namespace = frame_globals(frame)
        for sandbox_namespace in sandbox_namespaces:  # by identity (`id()` would raise an event)
            if namespace is sandbox_namespace:
                return True
        return False

    def frame_read(holder, attribute):
        """What reading `attribute` of `holder` hands out: a frame, None, or None for a holder this
        thread is already reading (the audited read below raises the same event again)."""
        holder_type, getter = _type(holder), None
        for known, name, known_getter in frame_getters:
            if holder_type is known and attribute == name:
                getter = known_getter
        thread = get_ident()
        if getter is None or reading.get(thread) is holder:
            return None
        reading[thread] = holder
        try:
            return getter(holder)
        finally:
            reading.pop(thread, None)

    def caller_code(extra):
        """(frame, code) of the frame that made the audited C call, for a helper of `judge`
        (`extra`: the frames between `settle` and the hook, 1 when the hook settles again);
        (None, None) when that is no frame."""
        frame = getframe(5 + extra)  # caller_code <- own_bytecode or library_code_patch <- judge <- settle <- hook <- (C) <- its caller
        return (frame, code_of_frame(frame)) if _type(frame) is frame_type else (None, None)

    def read_file(path, skip):
        """The bytes of the file at `path` past its first `skip`; None when it cannot be read."""
        try:
            with _open(path, "rb") as file:
                return file.read()[skip:]
        except _os_error:
            return None

    def own_bytecode(args, extra):
        """`marshal.loads` of bytes that make no code object the compiler did not make, told by the
        bytes alone: those of the standard library's .pyc file the import system names
        (`bytecode_path`), byte for byte, or bytes that hold no code object at all (plain data,
        red team sandbox8 `h4`), read in one pass over them by marshal's own format
        (`holds_code`). The frame's locals only say where to look: a candidate can call
        `_compile_bytecode` itself with any (sandbox7 `m1`, `m2`). Any other code object can read
        and write memory at will (sandbox6 `b1`). The judge compiles and loads nothing of the
        candidate's: a source's coding cookie or a SyntaxWarning ran the candidate's codec search
        function or `warnings.showwarning` inside it (sandbox8 `c1`, `c3`), code that compares
        equal to the compiler's is not the compiler's (`==` leaves out the stack size, the kinds of
        the locals, the exception table: sandbox8 `k1`), and the judge's trust in its own load was
        state a finalizer run in its frames could set (sandbox9 `g2`)."""
        if _len(args) != 1 or _type(args[0]) is not _bytes:
            return False
        data = args[0]
        frame, code = caller_code(extra)
        if code is compile_bytecode_code:
            path = frame_local(frame, "bytecode_path")
            if _type(path) is _str and path.startswith(library_prefix) and ".." not in path:
                return read_file(path, 16) == data
        return not holds_code(data)

    def holds_code(data):
        """The marshal bytes `data` hold a code object, or cannot be read (then marshal fails as
        well): read once, left to right, with a count of the items each open container still
        holds (-1 for a dict, read until its "0"), so the time is linear in their length, whatever
        they share or nest (a walk of what they load was exponential for shared lists and refused
        deep ones: sandbox9 `m1`, `m2`)."""
        size, at, left = _len(data), 0, [1]
        while left:
            if left[-1] == 0:
                left.pop()
                continue
            if at >= size:
                return True
            kind = data[at] & 0x7F
            at += 1
            if left[-1] > 0:
                left[-1] -= 1
            elif kind == 0x30:  # "0" where a dict's key would be: its end
                left.pop()
                continue
            else:  # a dict's key: its value follows
                left.append(1)
            if kind == 0x63:  # "c": a code object
                return True
            if kind in plain_kinds:
                continue
            width = fixed_widths.get(kind)
            if width is not None:
                at += width
            elif kind in counted_kinds or kind in sized_kinds:  # a 4-byte count, then items or bytes
                if at + 4 > size:
                    return True
                count = _from_bytes(data[at:at + 4], "little", signed=True)
                at += 4
                if count < 0:
                    if kind != 0x6C:
                        return True
                    count = -count
                if kind in counted_kinds:
                    left.append(count)
                else:
                    at += count * 2 if kind == 0x6C else count
            elif kind == 0x29 or kind in short_sized_kinds:  # a 1-byte count, then items or bytes
                if at >= size:
                    return True
                count = data[at]
                at += 1
                if kind == 0x29:
                    left.append(count)
                else:
                    at += count
            elif kind == 0x7B:  # "{": pairs until "0"
                left.append(-1)
            elif kind == 0x78:  # "x": an old complex, two texts of a 1-byte size
                for _ in (0, 1):
                    if at >= size:
                        return True
                    at += 1 + data[at]
            else:
                return True
        return at != size

    def library_code_patch(args, extra):
        """`code.__new__` raised by `types.coroutine` setting CO_ITERABLE_COROUTINE on the compiled
        code it holds (`asyncio` does it at import), told by the data: the frame has bound its `co`
        to a code object, the event's fields are that code's own but for the one flag, and it is
        the first code object this call of `types.coroutine` makes. Candidate code can run there,
        as C callables the candidate handed it (a property's getter or setter, red team sandbox7
        `g1`), but only before `co` is bound or after `co.replace` made the one code object, whose
        other fields (its constants among them, which the event does not show) are `co`'s."""
        frame, code = caller_code(extra)
        if code is not coroutine_code or _len(args) != 9 or _id(frame) in coroutine_calls:
            return False
        co = frame_local(frame, "co")
        if _type(co) is not code_type:
            return False
        own = (co.co_code, co.co_filename, co.co_name, co.co_argcount, co.co_posonlyargcount, co.co_kwonlyargcount,
               co.co_nlocals, co.co_stacksize, co.co_flags | 0x100)
        for given, expected in _zip(args, own):
            # Compared only as exact builtins: a code object compiled with a str subclass of the
            # candidate's as its file name ran its `__ne__` here (red team sandbox13 `n2`).
            kind = _type(given)
            if kind is not _type(expected) or not (kind is _str or kind is _bytes or kind is _int) or given != expected:
                return False
        if _len(coroutine_calls) >= 10_000:
            return False
        coroutine_calls[_id(frame)] = frame  # kept alive: no other call's frame takes its id
        return True

    def changed_outside(name, args, position, at):
        """The path at `position` of an event's arguments names a place outside the jail's own
        directories, relative to the directory descriptor at `at` (-1, or None: the working
        directory) where the path is relative. A descriptor is judged by the directory it is of
        (`directory_inside`); a path relative to one with a ".." step, or to anything but an int,
        is outside (the kernel resolves what the judge cannot), and so is a path the judge cannot
        read (a buffer another thread may change before the call reads it, an object that names a
        descriptor through `__index__`)."""
        path = plain_path(args[position])
        base = args[at] if at is not None and at < _len(args) else -1
        kind = _type(path)
        if kind is _int:
            return False  # a descriptor, whose opening was judged
        if kind is not _str and kind is not _bytes:
            return name != "shutil.rmtree"  # its PathLike is read by its own code: each removal it makes is judged
        named = path.decode(fs_encoding, fs_errors) if kind is _bytes else path
        if named.startswith("/") or base is None or (_type(base) is _int and base == -1):  # shutil.rmtree's none is None
            return outside(path)
        return _type(base) is not _int or "\x00" in named or ".." in named.split("/") or not directory_inside(base)

    def directory_inside(descriptor):
        """The directory `descriptor` is of is one of the jail's own or below one: it lies on the
        file system of one that is a mount of its own (the jail's tmpfs mounts hold nothing
        else), or it, or a directory above it (walked up by `..`, with `os.stat` relative to
        it: no audit event), is one (a walk of 64 levels refused an honest deeper tree's
        removal: red team sandbox14 `h1`)."""
        above = "."
        for _ in _range(1024):
            try:
                found = stat(above, dir_fd=descriptor)
            except _unreadable:
                return False
            place = (found.st_dev, found.st_ino)
            if place in inside_places or (above == "." and found.st_dev in own_devices):
                return True
            if place == root_place:
                return False
            above = ".." if above == "." else above + "/.."
        return False

    def link_outside(args):
        """`os.symlink(target, link, dir_fd)` makes a link that points outside, or may once it is
        moved: an absolute target outside, or a relative one that steps up (`..`): made deep and
        moved up, such a link pointed outside, and a path through it was passed as inside (red
        team sandbox14 `r3`; the gate passes a relative path with no `..` on the premise that
        every link in the jail's directories points there too). A relative target with no `..`
        points below the link's own directory wherever it goes, and the link's path is judged
        on its own."""
        target = plain_path(args[0])
        if _type(target) is _bytes:
            target = target.decode(fs_encoding, fs_errors)
        if _type(target) is not _str:
            return True  # not readable here: the call reads what the judge cannot
        if target.startswith("/"):
            return outside(target)
        return "\x00" in target or ".." in target.split("/")

    def database_outside(database):
        """`sqlite3.connect(database)` opens (and creates) a file outside the jail's own
        directories: SQLite opens it in C, with no event but this one. A URI's path is judged
        (`file:`, with no `%` escape: SQLite decodes them, the judge does not); anything that is
        not a str or bytes is outside (a PathLike's `__fspath__` is the candidate's to define)."""
        database = plain_path(database)
        if _type(database) is _bytes:
            database = database.decode(fs_encoding, fs_errors)
        if _type(database) is not _str:
            return True
        if database.startswith("file:"):
            database = database[5:].partition("?")[0].partition("#")[0]
            if database.startswith("//"):
                database = "/" + database[2:].partition("/")[2]  # the authority: "" or "localhost"
            if "%" in database:
                return True
        return database != "" and database != ":memory:" and outside(database)

    def judge(name, args, extra):
        """(kind, detail, refused) for an event to record, None for one to let pass."""
        if name == "open" and _len(args) == 3:
            path, mode, flags = args
            writing = (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (
                _type(flags) is _int and flags & write_flags
            )
            if writing and outside(path) and resolve(path) != "/dev/null/" and not standard_stream(path):  # the ordinary sink
                return "file_write", "open(" + text(path) + ", " + text(mode) + ")", True
            if other_process(path):
                return "process_inspection", "open(" + text(path) + ")", True
            # A path that does not exist reveals nothing `os.stat` would not, and changes nothing:
            # its open fails as it would anywhere (pdb looks for ~/.pdbrc, the locale for its files).
            # Nor does the sandbox's own source, which `linecache` opens for any stack an honest
            # program prints (`inspect.stack`, `traceback.print_stack`): Landlock refuses it unrecorded.
            if readable is not None and outside(path) and not resolve(path).startswith(readable) and exists(path) and (
                not resolve(path).startswith(sandbox_dir)
            ):
                return "file_read", "open(" + text(path) + ")", True
        elif name in own_signal_events and _len(args) >= 1 and _type(args[0]) is _int and (
            name == "signal.pthread_kill" or args[0] == own_pid or args[0] == 0 or args[0] == -own_pid
        ):
            pass  # a signal to itself, its own group or one of its own threads (seccomp allows no other)
        elif name in spawn:
            return "process_spawn", name + text(args), True
        elif name == "socket.__new__" and _len(args) >= 3 and _type(args[1]) is _int and _type(args[2]) is _int and (
            args[1] == af_unix and args[2] == sock_stream
        ):
            pass  # one end of a socketpair (asyncio's self-pipe); seccomp refuses a socket() of any kind (EACCES)
        elif name == "socket.gethostname":
            pass  # the UTS namespace's own name, as `os.uname().nodename` gives it unaudited
        elif name.startswith("socket."):
            return "network", name + text(args[1:]), True
        elif name.startswith("ctypes."):
            return "ctypes", name, True
        elif name == "code.__new__" and not library_code_patch(args, extra):
            # A code object built from bytes (`CodeType(...)`, `code.replace(co_code=...)`): CPython
            # runs bytecode unchecked, so such bytes read and write memory at will (sandbox6 `b1`).
            return "code_patch", "code.__new__ " + (text(args[2]) if _len(args) > 2 else ""), True
        elif (name == "marshal.loads" or name == "marshal.load") and not own_bytecode(args, extra):
            return "code_patch", name + " of bytes not the standard library's own bytecode", True
        elif name == "import" and native_import(args) is not None:
            return "ctypes", "import " + native_import(args), True  # any way, importlib's too: no copy is in memory
        elif name in file_change:
            if name == "sandbox.open_at" and _len(args) == 3 and _type(args[1]) is _int and not args[1] & write_flags:
                return None  # a read: its directory's opening was judged (a readable directory, or refused)
            if _any(changed_outside(name, args, position, at) for position, at in changed_paths[name] if position < _len(args)) or (
                name == "os.symlink" and _len(args) >= 2 and link_outside(args)
            ):
                return "file_write", name + text(args), True
        elif name == "sqlite3.connect" and args and database_outside(args[0]):
            return "file_write", "sqlite3.connect(" + text(args[0]) + ")", True
        elif name in hooks:
            return "hook_patch", name, True
        elif name in introspection:
            return "introspection", name, True
        elif name == "sys._current_frames" or name == "sys._current_exceptions":  # other threads' frames, or their tracebacks
            return "frame_inspection", name, True
        elif name in observers:
            return "frame_inspection", name + " (it records the stacks of every thread, the sandbox's code included)", True
        elif name == "sys._getframe":
            if args and sandbox_frame(args[0]):
                return "frame_inspection", "sys._getframe() reaching a frame of the sandbox", True
        elif name == "object.__getattr__" and _len(args) == 2 and _type(args[1]) is _str:
            attribute = args[1]
            if attribute in frame_attributes and sandbox_frame(frame_read(args[0], attribute)):
                return "frame_inspection", text(args[0]) + "." + attribute + " reaching a frame of the sandbox", True
        elif name == "object.__setattr__" and _len(args) == 3 and _type(args[1]) is _str:
            if args[1] in function_state and sandbox_function(args[0]):
                return "code_patch", "set " + text(args[1]) + " on " + text(args[0]), True
        elif name == seal_event and pending is not None and pending:
            left = unsettled()
            if left:
                return "evidence_tampering", "audited calls the hook could not judge: " + ", ".join(left), False
        elif name == "sandbox.exit" or name == "sandbox.hook_patch":
            detail = args[0] if args and _type(args[0]) is _str else "os._exit(" + (text(args[0]) if args else "") + ")"
            return ("exit" if name == "sandbox.exit" else "hook_patch"), detail, False
        return None

    def unsettled():
        """The events whose judgement never started: noted before this seal and still noted, the
        same event, once other threads have had up to 20 ms to finish the judgements they are in
        (microseconds each). Paid only when a note is left over."""
        left = [(name, note) for name, note in pending.items() if name != seal_event]  # a note: the event's arguments' address
        waited = 0
        while left and waited < 20:
            sleep(0.001)
            waited += 1
            left = [(name, note) for name, note in left if pending.get(name) is note]
        for name, _ in left:
            pending.pop(name, None)
        return [name for name, _ in left][:8]

    def exists(path):
        """`path` (as `open` was given it) names something: resolved without following a last link."""
        resolved = resolve(path)
        if resolved is None or resolved == "":
            return True
        try:
            _lstat(resolved[:-1])
        except _absent:
            return False
        except _os_error:  # not traversable: it may well exist
            return True
        return True

    def sandbox_function(function):
        """`function` is one of the sandbox's own (its code was compiled from a sandbox module):
        the recorders and wrappers the candidate can reach, whose code must stay the jail's."""
        if _type(function) is not function_type:
            return False
        name = code_of(function).co_filename  # a str subclass's `startswith` is the candidate's (sandbox13 `n1`)
        return _type(name) is _str and name.startswith(sandbox_dir)

    return _sealed(judge, record, exit_now, diverted_status, pthread_sigmask, SIG_BLOCK, SIG_SETMASK, every_signal, pending)


def install(gate, hook, pending, workdir, scratch=()):
    """Add `gate` (the `_gate` C module, `_gate.c`) as this process's one audit hook, handing `hook`
    (`make_hook`'s, made with the same `pending`) the events it judges. Called once, by the jail,
    before any candidate code; the gate keeps the only references to `hook` and `pending`."""
    sandbox_dir = os.path.dirname(os.path.abspath(__file__)) + "/"
    inside = tuple(os.path.realpath(path) for path in (workdir, *scratch))
    gate.install(hook, pending, tuple(sorted(JUDGED)), JUDGED_PREFIXES, _sandbox_globals(sandbox_dir), sandbox_dir, inside, os.getpid())


def inside_paths(workdir, scratch):
    """The jail's own directories (the work dir and `scratch`) that exist."""
    return [path for path in (workdir, *scratch) if os.path.isdir(path)]


def _frame_holder_types():
    """The generator, coroutine and async generator types (as `types` defines them)."""
    def generator():
        yield

    async def coroutine():
        pass

    async def async_generator():
        yield

    running = coroutine()
    kinds = type(generator()), type(running), type(async_generator())
    running.close()
    return kinds


def _traceback_type():
    try:
        raise ValueError
    except ValueError as error:
        return type(error.__traceback__)


def _sealed(judge, record, exit_now, status, mask, block, set_mask, every_signal, pending):
    """The audit hook: `judge` each event, `record` what it returns, refuse what it refuses, all
    checked first against a seal: the cells of the closures of `judge` and `record` (and of every
    function they reach) must still hold what they held when the hook was made, or the jail exits
    with `status`.

    A Python signal handler that fires while the hook runs receives the hook's own frame, from
    which `f_locals` and `__closure__` reach its cells, and a cell's contents can be replaced with
    no audit event (its functions' `__code__` and defaults are refused, `_FUNCTION_STATE`). So the
    recorder cannot be silenced unseen: the next event after such a change ends the jail, which the
    parent records as `evidence_tampering`; the jail also raises one (`SEAL_EVENT`) after every call
    and before it reports the program loaded.

    Such a handler can also raise, to unwind the hook before it records. The hook catches what
    unwinds its judgement and settles the event again with this thread's signals blocked (a
    handler still runs when another thread received the signal), then raises the refusal, or else
    the handler's exception, from the audited operation; interrupted three times, the jail exits
    with `status`. Only the eval loop's check at the hook's own entry, before its first
    instruction, lies outside that: an exception raised there fails the operation, and the note
    the gate made of the event (`pending`) is left over for the next seal to record.
    `settle` removes each event's note as it starts."""
    from types import CellType

    function_type = type(judge)
    cells, seen, to_visit = [], set(), [judge, record]
    while to_visit:
        function = to_visit.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        for cell in function.__closure__ or ():
            if id(cell) in seen:
                continue
            seen.add(id(cell))
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not yet filled: none is, once make_hook has returned
                continue
            cells.append((cell, value))
            if type(value) is function_type:
                to_visit.append(value)
    assert all(type(cell) is CellType for cell, _ in cells)

    def settle(name, args, extra, _cells=tuple(cells), _judge=judge, _record=record, _exit=exit_now, _status=status,
               _pending=pending, _id=id):
        for cell, value in _cells:
            if cell.cell_contents is not value:
                _exit(_status)
        if _pending is not None and _pending.get(name) == _id(args):  # the gate notes the arguments' address
            del _pending[name]
        verdict = _judge(name, args, extra)
        if verdict is not None:
            _record(verdict[0], verdict[1])
        return verdict

    def settle_blocked(name, args, settled, _settle=settle, _mask=mask, _block=block, _set_mask=set_mask, _every=every_signal):
        previous = _mask(_block, ())  # the mask as it is: nothing changed yet if a handler raises here
        try:
            _mask(_block, _every)
            settled[0] = _settle(name, args, 1)
            settled[1] = True
        finally:
            _mask(_set_mask, previous)  # a signal that came meanwhile runs its handler here: settled already

    def hook(name, args, _settle=settle, _again=settle_blocked, _exit=exit_now, _status=status, _base=BaseException,
             _refusal=PermissionError, _starved=(RecursionError, MemoryError)):
        # No loop: a loop's backward jump is where the eval loop runs a pending signal handler, and
        # between one `try` and the next there are only stores and forward jumps, where it runs none.
        interruption = None
        settled: list = [None, False]  # [verdict, settled]
        try:
            settled[0] = _settle(name, args, 0)
            settled[1] = True
        except _starved:
            # The hook ran out of stack or memory: the call fails as it would if the hook could not
            # start (CPython fails an audited call whose hook raises), with no record, and it is no
            # interruption (an honest deepcopy at the recursion limit lands here, red team sandbox3
            # `h_recursion`). A handler that raises one of these on purpose only refuses the call.
            raise
        except _base as error:
            interruption = error
        if not settled[1]:
            try:
                _again(name, args, settled)
            except _starved:
                raise
            except _base as error:
                interruption = error
            if not settled[1]:
                try:
                    _again(name, args, settled)
                except _starved:
                    raise
                except _base as error:
                    interruption = error
                if not settled[1]:
                    _exit(_status)
        verdict = settled[0]
        if verdict is not None and verdict[2]:
            raise _refusal("sandbox refused " + verdict[1][:80])
        if interruption is not None:
            raise interruption

    return hook
