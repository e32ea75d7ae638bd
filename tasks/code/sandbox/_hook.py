"""The jail's audit hook (untrusted side, standard library only): record and refuse.

The hook is the jail's recorder, not its wall: the kernel measures (`_jail.py`: namespaces, an
unprivileged uid, Landlock, seccomp) hold even when it is bypassed. It exists so that the shield
sees what the candidate tried. Event kinds, each reported as `["event", kind, detail, call]`:
  process_spawn     subprocess.Popen, os.system, os.exec*, os.posix_spawn, os.spawn*, os.fork,
                    os.forkpty, os.kill/killpg, signal.pthread_kill -- refused
  file_write        open() for writing, remove/rename/rmdir/chmod/chown... outside the work dir -- refused
  network           any socket.* event -- refused (the jail also has an empty network namespace)
  process_inspection  open() of another process's /proc/<pid> entry -- refused
  file_read         open() for reading outside the work dir and the readable paths -- refused;
                    Landlock refuses it too, this records the attempt
  ctypes            ctypes.dlopen/dlsym/cdata/... -- refused (ctypes would bypass everything else)
  frame_inspection  sys._getframe or frame/code attribute access from candidate code -- recorded;
                    sys._current_frames -- refused
  introspection     gc.get_objects/get_referrers/get_referents -- refused (they reach every object
                    of the jail, this hook's own closure among them)
  hook_patch        sys.addaudithook, sys.settrace/setprofile -- refused; atexit.register -- recorded
  code_patch        assigning __code__ on a function -- refused
The trusted parent adds kinds of its own (`exit`, `kernel_refusal`, see `channel.py`).

No candidate code runs inside the hook: details are built from exact builtin types only (a
candidate's `__repr__`/`__fspath__` is never called), so no frame of the hook is ever reachable
from the candidate. Its reentrancy guard is per thread, so one thread inside the hook never
silences another. Refusing raises PermissionError inside the candidate.
"""

import os
import sys

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
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def make_text():
    """`text(value)`: a short description built without calling any method of `value`."""
    _type, _str, _bytes, _int, _float, _bool = type, str, bytes, int, float, bool
    _tuple, _list, _len, _repr = tuple, list, len, repr
    qualname = type.__dict__["__qualname__"].__get__

    def text(value, depth=0):
        t = _type(value)
        if t is _str or t is _bytes or t is _int or t is _float or t is _bool or value is None:
            return _repr(value[:200] if t is _str or t is _bytes else value)[:200]
        if (t is _tuple or t is _list) and depth < 2:
            return "(" + ", ".join(text(item, depth + 1) for item in value[:8]) + (", ..." if _len(value) > 8 else "") + ")"
        return "<" + qualname(t)[:60] + ">"

    return text


def make_hook(event, workdir, readable=None):
    """An audit hook reporting through `event(kind, detail)`; paths are judged against `workdir`
    and, when given, `readable`: the real-path prefixes (each ending in "/") reads may come from."""
    realpath, getframe = os.path.realpath, sys._getframe
    inside = workdir.rstrip("/") + "/"
    try:  # /proc/self resolves here; any other /proc/<pid> is refused (in a PID namespace
        own_proc = f"/proc/{os.readlink('/proc/self')}/"  # getpid() is 1, /proc still counts from outside)
    except OSError:
        own_proc = f"/proc/{os.getpid()}/"
    _str, _bytes, _int, _type = str, bytes, int, type
    text = make_text()
    from _thread import get_ident

    busy = set()  # threads now inside the hook: the hook's own calls raise events too

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
        frame = getframe(2)
        for _ in range(4):
            if frame is None:
                return False
            if frame.f_code.co_filename == "<candidate>":
                return True
            frame = frame.f_back
        return False

    def refuse(kind, detail):
        event(kind, detail)
        raise PermissionError(f"sandbox refused {detail[:80]}")

    def judge(name, args):
        if name == "open":
            path, mode, flags = args
            writing = (_type(mode) is _str and any(c in mode for c in "wax+")) or (_type(flags) is _int and flags & _WRITE_FLAGS)
            if writing and outside(path):
                refuse("file_write", f"open({text(path)}, {text(mode)})")
            if other_process(path):
                refuse("process_inspection", f"open({text(path)})")
            if readable is not None and outside(path) and not resolve(path).startswith(readable):
                refuse("file_read", f"open({text(path)})")
        elif name in _SPAWN:
            refuse("process_spawn", name + text(args))
        elif name.startswith("socket."):
            refuse("network", name + text(args[1:]))
        elif name.startswith("ctypes."):
            refuse("ctypes", name)
        elif name in _FILE_CHANGE:
            if any(outside(arg) for arg in args[:2] if _type(arg) in (_str, _bytes)):
                refuse("file_write", name + text(args))
        elif name in _HOOKS:
            refuse("hook_patch", name)
        elif name in _INTROSPECTION:
            refuse("introspection", name)
        elif name == "sys._current_frames":
            refuse("frame_inspection", name)
        elif name == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            refuse("code_patch", "set __code__ on " + text(args[0]))
        elif name == "sys._getframe" and from_candidate():
            event("frame_inspection", "sys._getframe")
        elif name == "object.__getattr__" and args[1] in _FRAME_ATTRIBUTES and from_candidate():
            event("frame_inspection", text(args[0]) + "." + args[1])
        elif name == "atexit.register":
            event("hook_patch", "atexit.register")

    def hook(name, args):
        thread = get_ident()
        if thread in busy:
            return
        busy.add(thread)
        try:
            judge(name, args)
        finally:
            busy.discard(thread)

    return hook
