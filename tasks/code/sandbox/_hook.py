"""The jail's audit hook (untrusted side, standard library only): record and refuse.

The hook is the jail's recorder, not its wall: the kernel measures (`_jail.py`: namespaces, an
unprivileged uid, Landlock, seccomp) hold even when it is bypassed. It exists so that the shield
sees what the candidate tried. Event kinds, each reported as `["event", kind, detail, call]`:
  process_spawn     subprocess.Popen, os.system, os.exec*, os.posix_spawn, os.spawn*, os.fork,
                    os.forkpty, os.kill/killpg, signal.pthread_kill -- refused
  file_write        open() for writing (but of /dev/null), remove/rename/rmdir/chmod/chown... outside
                    the work dir -- refused
  network           any socket.* event but a Unix stream socket's creation (a socketpair's ends:
                    seccomp kills the `socket` system call itself) -- refused (the jail also has
                    an empty network namespace)
  process_inspection  open() of another process's /proc/<pid> entry -- refused
  file_read         open() for reading, outside the work dir and the readable paths, of a path that
                    exists -- refused; Landlock refuses it too, this records the attempt
  ctypes            ctypes.dlopen/dlsym/cdata/... -- refused (ctypes would bypass everything else)
  frame_inspection  sys._getframe or frame/code attribute access from candidate code (not the
                    library's own module-naming reads) -- recorded; sys._current_frames -- refused
  introspection     gc.get_objects/get_referrers/get_referents -- refused (they reach every object
                    of the jail, this hook's own closure among them)
  hook_patch        sys.addaudithook, sys.settrace/setprofile -- refused (but doctest's own restoring
                    of an absent trace, a call that changes nothing); atexit.register called by
                    candidate code and a replaced sys.excepthook -- recorded (raised by the jail)
  exit              SystemExit or os._exit (the jail raises "sandbox.exit") -- recorded
  code_patch        assigning __code__, __defaults__ or __kwdefaults__ on one of the sandbox's own
                    functions (this hook's, the exit and atexit recorders of `_jail.py`) -- refused; on any other function
                    (the candidate's, the library's: `types.coroutine` does it) it is allowed
The trusted parent adds kinds of its own (`exit`, `kernel_refusal`, see `channel.py`).

No candidate code runs inside the hook and nothing the candidate can reach can silence it: details
are built from exact builtin types only (a candidate's `__repr__`/`__fspath__` is never called),
paths are resolved and records written with C functions captured when the hook is made (no name is
looked up at call time, where a patched module or builtin would run candidate code inside the
hook), and the hook holds the only reference to its own writer. Before each record it checks that
its descriptor is still the reply pipe it was given; if the candidate closed or replaced it
(`dup2`), the jail exits at once with `DIVERTED_STATUS`, which the parent records. Its reentrancy guard is per thread,
so one thread inside the hook never silences another, and a Python signal handler that runs
while the hook is busy on its thread is judged too (only the hook's own frame reads are exempt,
`_OWN_EVENTS`). Refusing raises PermissionError inside the
candidate.
"""

import os
import sys
from types import FrameType  # already imported by the fork server (functools, signal): costs nothing

_SPAWN = frozenset(
    {
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
        "os.kill", "os.killpg", "pty.spawn", "os.startfile", "signal.pthread_kill",
    }
)
_FILE_CHANGE = frozenset(
    {"os.remove", "os.rename", "os.rmdir", "os.chmod", "os.chown", "os.truncate", "os.link", "os.symlink", "os.mkdir",
     "shutil.rmtree", "os.utime"}
)
_INTROSPECTION = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
_HOOKS = frozenset({"sys.addaudithook", "sys.settrace", "sys.setprofile"})
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "__code__", "f_globals", "f_locals"})
# Library modules that read their caller's frame only to name the calling module (namedtuple,
# typing.NamedTuple, enum, warnings' stack level, logging's caller lookup).
_BENIGN_FRAME_READERS = ("collections/__init__.py", "typing.py", "enum.py", "warnings.py", "logging/__init__.py")
# The events the hook's own work raises (its frame and `__code__` reads): nothing to record when
# they come from inside the hook.
_OWN_EVENTS = frozenset({"sys._getframe", "object.__getattr__"})
_AF_UNIX, _SOCK_STREAM = 1, 1
SEAL_EVENT = "sandbox.seal"  # raised by the jail to have the hook's seal checked (`_sealed`)
# What makes a function do something else, besides its closure's cells (`_sealed`): refused on the
# sandbox's own functions.
_FUNCTION_STATE = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
DIVERTED_STATUS = 86  # the jail's exit status when its record descriptor no longer is the reply pipe
CPU_LIMIT_STATUS = 87  # the jail's exit status when its CPU-time soft limit fired (SIGXCPU)
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


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
        return "<" + qualname(t)[:60] + ">"

    return text


def _make_realpath():
    """os.path.realpath (non-strict) from C functions only: the library version looks names up in
    module globals at call time, which a candidate could replace to run its code inside the hook."""
    _lstat, _readlink, _getcwd, _os_error = os.lstat, os.readlink, os.getcwd, OSError
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


def make_hook(fd, workdir, readable, call_box, candidate_file="<candidate>", scratch=()):
    """An audit hook writing its events as records to `fd`; paths are judged against `workdir`
    (and `scratch`, other directories of the jail's own, such as its private /dev/shm) and, when
    given, `readable`: the real-path prefixes (each ending in "/") reads may come from.
    `call_box[0]` is the call being answered (None between calls), which labels each event;
    `candidate_file` is the file name the candidate's code was compiled with.

    Everything the hook uses is captured here and is either immutable or a C function, so no
    name it looks up at call time can be replaced by the candidate."""
    from _json import encode_basestring_ascii as quote
    from _thread import get_ident
    from gc import disable as gc_disable
    from gc import enable as gc_enable
    from gc import isenabled as gc_isenabled

    realpath, getframe, write, fstat, exit_now = _make_realpath(), sys._getframe, os.write, os.fstat, os._exit
    channel = fstat(fd)
    channel_id = (channel.st_dev, channel.st_ino)
    inside = tuple(path.rstrip("/") + "/" for path in (workdir, *scratch))
    try:  # /proc/self resolves here; any other /proc/<pid> is refused (in a PID namespace
        own_proc = f"/proc/{os.readlink('/proc/self')}/"  # getpid() is 1, /proc still counts from outside)
    except OSError:
        own_proc = f"/proc/{os.getpid()}/"
    _str, _bytes, _int, _type, _any = str, bytes, int, type, any
    _permission_error, _int_repr, _os_error = PermissionError, int.__repr__, OSError
    spawn, file_change, introspection, hooks = _SPAWN, _FILE_CHANGE, _INTROSPECTION, _HOOKS
    frame_attributes, write_flags = _FRAME_ATTRIBUTES, _WRITE_FLAGS
    text = make_text()
    library = os.path.dirname(os.__file__)
    benign = frozenset(library + "/" + name for name in _BENIGN_FRAME_READERS)
    busy = set()  # threads now inside the hook: the hook's own calls raise events too
    diverted_status = DIVERTED_STATUS
    from io import open as _open

    _lstat, _compile, code_type = os.lstat, compile, _type(make_text.__code__)
    _absent = (FileNotFoundError, NotADirectoryError)
    doctest_path = library + "/doctest.py"
    function_type, code_of = _type(make_text), _type(make_text).__dict__["__code__"].__get__
    function_state = _FUNCTION_STATE
    sandbox_dir = os.path.dirname(os.path.abspath(__file__)) + "/"
    own_events = _OWN_EVENTS

    def event(kind, detail):
        try:
            here = fstat(fd)
            diverted = (here.st_dev, here.st_ino) != channel_id
        except _os_error:
            diverted = True
        if diverted:  # the descriptor was closed or replaced: end the jail rather than lose this
            exit_now(diverted_status)
        call = call_box[0]
        label = _int_repr(call) if _type(call) is _int else "null"
        line = '["event",' + quote(kind) + "," + quote(detail[:300]) + "," + label + "]\n"
        data = line.encode("ascii")
        while data:
            data = data[write(fd, data):]

    def resolve(path):
        """The real path; None for an open descriptor; "" for anything that is not a plain path."""
        t = _type(path)
        if t is _int:
            return None  # an already-open descriptor: its opening was judged
        if t is _bytes:
            path = path.decode("utf-8", "replace")
        elif t is not _str:
            return ""
        return realpath(path) + "/"

    def outside(path):
        resolved = resolve(path)
        return resolved is not None and not resolved.startswith(inside)

    def other_process(path):
        resolved = resolve(path)
        if not resolved or not resolved.startswith("/proc/") or resolved.startswith(own_proc):
            return False
        return resolved[6:].split("/", 1)[0].isdigit()

    def from_candidate():
        """The audited call was made by candidate code, directly or through up to three library
        frames, and not by one of the library functions that read their caller's frame only to
        name a module (`_BENIGN_FRAME_READERS`, so an honest namedtuple leaves no record)."""
        frame: FrameType | None = getframe(4)  # from_candidate <- judge <- hook <- checked <- the frame that made the call
        if frame is not None and frame.f_code.co_filename in benign:
            return False
        for _ in range(4):
            if frame is None:
                return False
            if frame.f_code.co_filename == candidate_file:
                return True
            frame = frame.f_back
        return False

    def called_by_candidate():
        """The frame above the jail's wrapper that raised the event is candidate code."""
        frame = getframe(5)  # called_by_candidate <- judge <- hook <- checked <- wrapper <- its caller
        return frame is not None and frame.f_code.co_filename == candidate_file

    def refuse(kind, detail):
        event(kind, detail)
        raise _permission_error("sandbox refused " + detail[:80])

    def judge(name, args):
        if name == "open":
            path, mode, flags = args
            writing = (_type(mode) is _str and ("w" in mode or "a" in mode or "x" in mode or "+" in mode)) or (
                _type(flags) is _int and flags & write_flags
            )
            if writing and outside(path) and resolve(path) != "/dev/null/":  # the ordinary sink
                refuse("file_write", "open(" + text(path) + ", " + text(mode) + ")")
            if other_process(path):
                refuse("process_inspection", "open(" + text(path) + ")")
            # A path that does not exist reveals nothing `os.stat` would not, and changes nothing:
            # its open fails as it would anywhere (pdb looks for ~/.pdbrc, the locale for its files).
            if readable is not None and outside(path) and not resolve(path).startswith(readable) and exists(path):
                refuse("file_read", "open(" + text(path) + ")")
        elif name in spawn:
            refuse("process_spawn", name + text(args))
        elif name == "socket.__new__" and args[1:3] == (_AF_UNIX, _SOCK_STREAM):
            pass  # one end of a socketpair (asyncio's self-pipe); seccomp kills a socket() of any kind
        elif name.startswith("socket."):
            refuse("network", name + text(args[1:]))
        elif name.startswith("ctypes."):
            refuse("ctypes", name)
        elif name in file_change:
            if _any(outside(arg) for arg in args[:2] if _type(arg) is _str or _type(arg) is _bytes):
                refuse("file_write", name + text(args))
        elif name == "sys.settrace" and restores_no_trace():
            pass  # doctest's run restoring the (absent) trace it saved: a call that changes nothing
        elif name in hooks:
            refuse("hook_patch", name)
        elif name in introspection:
            refuse("introspection", name)
        elif name == "sys._current_frames":
            refuse("frame_inspection", name)
        elif name == "object.__setattr__" and args[1:2] and args[1] in function_state and sandbox_function(args[0]):
            refuse("code_patch", "set " + text(args[1]) + " on " + text(args[0]))
        elif name == "sys._getframe" and from_candidate():
            event("frame_inspection", "sys._getframe")
        elif name == "object.__getattr__" and args[1:2] and args[1] in frame_attributes and from_candidate():
            event("frame_inspection", text(args[0]) + "." + text(args[1]))
        elif name == "sandbox.atexit_register" and called_by_candidate():
            event("hook_patch", "atexit.register")
        elif name == "sandbox.exit" or name == "sandbox.hook_patch":
            detail = args[0] if args and _type(args[0]) is _str else "os._exit(" + (text(args[0]) if args else "") + ")"
            event("exit" if name == "sandbox.exit" else "hook_patch", detail)

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

    def doctest_run_code():
        """The code of the library's own `doctest.DocTestRunner.run`, compiled from its file with
        functions captured when the hook was made (no candidate code runs here). Not cached: a
        cache would be state the candidate could reach, and doctest restores its trace once a run."""
        with _open(doctest_path, "rb") as source:
            module = _compile(source.read(), doctest_path, "exec", dont_inherit=True)
        runner = [c for c in module.co_consts if _type(c) is code_type and c.co_name == "DocTestRunner"]
        run = [c for c in (runner[0].co_consts if runner else ()) if _type(c) is code_type and c.co_name == "run"]
        return run[0] if run else None

    def restores_no_trace():
        """This `sys.settrace` is doctest's `DocTestRunner.run` restoring the trace it saved at its
        start, and that was None. The caller's code is compared with the library's own (so it
        passes its local `save_trace`, never another value) and that local is read from its frame."""
        frame = getframe(4)  # restores_no_trace <- judge <- hook <- checked <- the caller of sys.settrace
        if frame is None or frame.f_code.co_filename != doctest_path or frame.f_code != doctest_run_code():
            return False
        names = frame.f_locals
        return _type(names) is dict and "save_trace" in names and names["save_trace"] is None

    def sandbox_function(function):
        """`function` is one of the sandbox's own (its code was compiled from a sandbox module):
        the recorders and wrappers the candidate can reach, whose code must stay the jail's."""
        if _type(function) is not function_type:
            return False
        return code_of(function).co_filename.startswith(sandbox_dir)

    def hook(name, args):
        thread = get_ident()
        if thread in busy:
            # Re-entered on this thread: by the hook's own frame and code reads (judged below as
            # nothing to record), or by a Python signal handler that ran inside the hook, whose
            # events are judged like any other.
            if name not in own_events:
                judge(name, args)
            return
        busy.add(thread)
        # A collection that starts inside the hook would run the candidate's finalizers here, where
        # the reentrancy guard exempts every event they raise: no collection starts in the hook.
        collecting = gc_isenabled()
        if collecting:
            gc_disable()
        try:
            judge(name, args)
        finally:
            busy.discard(thread)
            if collecting:
                gc_enable()

    return _sealed(hook, exit_now, diverted_status)


def _sealed(hook, exit_now, status):
    """`hook`, checked before every event: the cells of its closures (and of every function they
    reach) must still hold what they held when it was made, or the jail exits with `status`.

    A Python signal handler that fires while the hook runs receives the hook's own frame, from
    which `f_locals` and `__closure__` reach its cells, and a cell's contents can be replaced with
    no audit event (its functions' `__code__` and defaults are refused, `_FUNCTION_STATE`). So the
    recorder cannot be silenced unseen: the next event after such a change ends the jail, which the
    parent records as `evidence_tampering`. The check itself holds no cell: what it uses are its
    own defaults. It is skipped for `_OWN_EVENTS` (`sys._getframe` and attribute reads, which the
    hook's own work raises many times per event): a change is still caught at the next other event,
    and the jail raises one (`SEAL_EVENT`) after every call and before it reports the program
    loaded, so only frame-inspection records made since a change can go unseen, and then the run
    ends as tampering."""
    from types import CellType

    function_type = type(hook)
    cells, seen, pending = [], set(), [hook]
    while pending:
        function = pending.pop()
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
                pending.append(value)
    assert all(type(cell) is CellType for cell, _ in cells)

    def checked(name, args, _cells=tuple(cells), _hook=hook, _exit=exit_now, _status=status, _own=_OWN_EVENTS):
        if name not in _own:  # the hook's own frame reads come by the thousand; see below
            for cell, value in _cells:
                if cell.cell_contents is not value:
                    _exit(_status)
        _hook(name, args)

    return checked
