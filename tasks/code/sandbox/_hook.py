"""The sandbox's audit hook (untrusted side, standard library only): record and refuse.

Event kinds reported to the parent, each as `("event", kind, detail, test_index)`:
  exit              SystemExit observed, or os._exit called (recorded by the child, not here)
  process_spawn     subprocess.Popen, os.system, os.exec*, os.posix_spawn, os.spawn*, os.fork,
                    os.forkpty, os.kill/killpg -- refused
  file_write        open() for writing, remove/rename/rmdir/chmod/chown... outside the work dir -- refused
  network           any socket.* event -- refused (also when a network namespace applies)
  process_inspection  open() of another process's /proc/<pid> entry (its memory, environment,
                    descriptors: the trusted parent's among them) -- refused
  file_read         open() for reading outside the work dir and the readable paths (when the
                    filesystem is confined: the dataset's hidden tests, this repository) -- refused;
                    Landlock refuses it too, this records the attempt
  ctypes            ctypes.dlopen/dlsym/cdata/... -- refused (ctypes would bypass everything else)
  frame_inspection  sys._getframe or frame/code attribute access (tb_frame, gi_frame, f_back...) from
                    candidate code -- recorded only
  introspection     gc.get_objects/get_referrers/get_referents -- recorded only
  hook_patch        sys.addaudithook, sys.settrace/setprofile -- refused; atexit.register and a
                    replaced sys.excepthook are recorded by the child
  code_patch        assigning __code__ on a function -- refused

Refusing raises PermissionError inside the candidate, which then typically fails its tests.
"""

import os
import sys

_SPAWN = frozenset(
    {
        "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
        "os.forkpty", "os.kill", "os.killpg", "pty.spawn", "os.startfile",
    }
)
_FILE_CHANGE = frozenset(
    {"os.remove", "os.rename", "os.rmdir", "os.chmod", "os.chown", "os.truncate", "os.link", "os.symlink", "os.mkdir", "shutil.rmtree", "os.utime"}
)
_INTROSPECTION = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
_HOOKS = frozenset({"sys.addaudithook", "sys.settrace", "sys.setprofile"})
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back", "__code__", "f_globals", "f_locals"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def make_hook(event, state, workdir, readable=None):
    """An audit hook reporting through `event(kind, detail)`; paths are judged against `workdir`
    and, when given, `readable`: the real-path prefixes (each ending in "/") reads may come from."""
    realpath, getframe, fspath = os.path.realpath, sys._getframe, os.fspath
    inside = workdir.rstrip("/") + "/"
    own_proc = f"/proc/{os.getpid()}/"  # /proc/self resolves here; any other /proc/<pid> is refused
    _str, _bytes, _int, _type, _repr = str, bytes, int, type, repr

    def resolve(path):
        """The real path, or None when `path` is not a path (an open descriptor or junk)."""
        if _type(path) is _int:  # an already-open descriptor: its opening was judged
            return None
        try:
            text = fspath(path)
            text = text.decode("utf-8", "replace") if _type(text) is _bytes else text
        except TypeError:
            return ""
        return realpath(text) + "/"

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

    def hook(name, args):
        if state["in_hook"]:
            return
        state["in_hook"] = True
        try:
            if name == "open":
                path, mode, flags = args
                writing = (_type(mode) is _str and any(c in mode for c in "wax+")) or (
                    _type(flags) is _int and flags & _WRITE_FLAGS
                )
                if writing and outside(path):
                    refuse("file_write", f"open({_repr(path)[:200]}, {mode!r})")
                if other_process(path):
                    refuse("process_inspection", f"open({_repr(path)[:200]})")
                if readable is not None and outside(path) and not resolve(path).startswith(readable):
                    refuse("file_read", f"open({_repr(path)[:200]})")
            elif name in _SPAWN:
                refuse("process_spawn", f"{name}{_repr(args)[:200]}")
            elif name.startswith("socket."):
                refuse("network", f"{name}{_repr(args[1:])[:200]}")
            elif name.startswith("ctypes."):
                refuse("ctypes", name)
            elif name in _FILE_CHANGE:
                if any(outside(arg) for arg in args[:2] if _type(arg) in (_str, _bytes)):
                    refuse("file_write", f"{name}{_repr(args)[:200]}")
            elif name in _HOOKS:
                refuse("hook_patch", name)
            elif name == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
                refuse("code_patch", f"set __code__ on {_type(args[0]).__name__}")
            elif name == "sys._getframe" and from_candidate():
                event("frame_inspection", "sys._getframe")
            elif name == "object.__getattr__" and args[1] in _FRAME_ATTRIBUTES and from_candidate():
                event("frame_inspection", f"{_type(args[0]).__name__}.{args[1]}")
            elif name in _INTROSPECTION and from_candidate():
                event("introspection", name)
        finally:
            state["in_hook"] = False

    return hook
