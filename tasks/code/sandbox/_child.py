"""The untrusted side: runs inside the sandbox process, forked by the fork server (`_zygote.py`)
or started as `python -I -S -B _child.py`.

Standard library only, and nothing here decides pass or fail. It reads one job (a marshalled dict of plain values on stdin, written by the trusted parent),
isolates itself (network namespace, resource limits, Landlock filesystem confinement), installs an audit hook, executes the candidate
program, then runs the instrumented hidden tests and reports, for every test case, the *values*
involved as type-tagged literals. The trusted parent compares them (see `evidence.py`).

Everything the reporting path needs (`os.write`, `repr`, `type`, the nonce, the evidence fd) is bound
to locals of `_main` before the candidate runs, so patching modules or builtins afterwards cannot
change what gets reported. Records are lines `<nonce> <repr(tuple)>`; the parent rejects any line
without the nonce and requires a final `done` record with the right count.

Record shapes (all plain literals):
  ("isolation", [names])
  ("event", kind, detail, test_index)
  ("case", index, site, payload, returns)    payload: ("ok", [tagged...]) | ("raised", type, msg)
  ("abort", phase, type, msg)                phase: "program" | "tests"
  ("done", case_count)
"""

import _signal  # the C module: `signal` would import enum and cost ~15 ms per sandbox start
import builtins
import marshal  # built in; `json` would cost several ms of imports per sandbox start
import os
import resource
import sys

CLONE_NEWNET = 0x40000000
MAX_DEPTH = 50
MAX_ITEMS = 100_000
MAX_TEXT = 1_000_000


def _unshare_network():
    """Enter a fresh, empty network namespace; False when the kernel or privileges refuse."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.unshare(CLONE_NEWNET) == 0


def _set_limits(limits):
    """CPU seconds, address space, file size, open files, no core dumps; SIGXFSZ becomes EFBIG."""
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu_s"], limits["cpu_s"] + 1))
    memory = limits["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    size = limits["file_size_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)


def _make_encoder():
    """Type-tagged encoding by exact type (`type(x) is int`), so subclasses and liars stay opaque."""
    _type, _repr, _len = type, repr, len
    qualname = type.__dict__["__qualname__"].__get__  # C-level: a metaclass cannot lie through it
    _int, _float, _str, _bool, _none = int, float, str, bool, type(None)
    _list, _tuple, _dict, _set, _frozenset = list, tuple, dict, set, frozenset
    budget = [0]

    def encode(value, depth=0):
        budget[0] += 1
        t = _type(value)
        if depth > MAX_DEPTH or budget[0] > MAX_ITEMS:
            return ("too_large",)
        if t is _bool:
            return ("bool", value is True)
        if t is _int:
            return ("int", _repr(value)) if value.bit_length() > 4000 else ("int", value)
        if t is _float:
            return ("float", _repr(value))
        if t is _str:
            return ("str", value) if _len(value) <= MAX_TEXT else ("too_large",)
        if t is _none:
            return ("none",)
        if t is _list or t is _tuple or t is _set or t is _frozenset:
            name = "list" if t is _list else "tuple" if t is _tuple else "set" if t is _set else "frozenset"
            return (name, [encode(item, depth + 1) for item in value])
        if t is _dict:
            return ("dict", [(encode(k, depth + 1), encode(v, depth + 1)) for k, v in value.items()])
        return ("opaque", qualname(t))

    def reset():
        budget[0] = 0

    return encode, reset


def _main():
    job = marshal.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    _write, _repr, _type, _str, _len = os.write, repr, type, str, len
    _base_exception, _memory_error, _system_exit = BaseException, MemoryError, SystemExit
    _real_exit = os._exit
    fd = job["evidence_fd"]
    prefix = job["nonce"] + " "
    workdir = os.path.realpath(job["workdir"])
    os.environ.clear()  # forked from the fork server, the child starts with the server's environment
    os.environ.update(job["environment"])
    state = {"test_index": None, "in_hook": False}

    def emit(record):
        _write(fd, (prefix + _repr(record) + "\n").encode("utf-8", "backslashreplace"))

    isolation = []
    if job["unshare_network"]:
        try:
            if _unshare_network():
                isolation.append("netns")
        except OSError:
            pass
    _set_limits(job["limits"])
    os.chdir(workdir)
    # Imported from this directory now: once confined, the child cannot read this repository.
    import _landlock  # noqa: E402
    from _hook import make_hook  # noqa: E402

    try:
        if job["confinement"] == "full":
            confined = _landlock.confine_reads(job["readable_paths"], workdir)
            readable = _landlock.prefixes(job["readable_paths"])
        else:  # "writes": reads were confined in the fork server, which says so in `inherited`
            confined = job["confinement"] == "writes" and _landlock.inherited and _landlock.confine_writes(workdir)
            readable = _landlock.readable_prefixes if job["confinement"] == "writes" else None
    except OSError:
        confined, readable = False, None  # reported by its absence from the isolation record
    if confined:
        isolation.append("landlock")
    isolation.append("audit_hook")
    isolation.append("rlimits")
    emit(("isolation", isolation))

    def event(kind, detail):
        emit(("event", kind, detail[:300], state["test_index"]))

    sys.addaudithook(make_hook(event, state, workdir, readable))

    def exit_recorder(status=0):
        event("exit", "os._exit(" + _repr(status)[:40] + ")")
        _real_exit(status)

    os._exit = exit_recorder
    import atexit

    real_register = atexit.register

    def register_recorder(function, *args, **kwargs):
        event("hook_patch", "atexit.register(" + _repr(getattr(function, "__name__", "?"))[:80] + ")")
        return real_register(function, *args, **kwargs)

    atexit.register = register_recorder
    builtins_snapshot = dict(builtins.__dict__)
    original_excepthook = sys.excepthook
    encode, reset = _make_encoder()

    def describe(error):
        try:
            return _str(error)[:300]
        except _base_exception:  # a hostile __str__ must not break reporting
            return "<unprintable>"

    def report_exit(error):
        if isinstance(error, _system_exit):
            event("exit", "SystemExit(" + describe(error)[:40] + ")")

    namespace = {"__name__": "__candidate__", "__builtins__": builtins}
    try:
        exec(compile(job["program"], "<candidate>", "exec"), namespace)
    except _base_exception as error:  # the candidate's failure is data, never the harness's crash
        report_exit(error)
        emit(("abort", "program", _type(error).__name__, describe(error)))
        emit(("done", 0))
        _real_exit(0)

    returns = []
    counter = [0]
    entry = namespace.get(job["entry_point"])

    def candidate(*args, **kwargs):
        result = entry(*args, **kwargs)
        returns.append(encode(result))
        return result

    def case(site, *thunks):
        index = counter[0]
        counter[0] = index + 1
        state["test_index"] = index
        returns.clear()
        reset()
        try:
            values = [thunk() for thunk in thunks]
            payload = ("ok", [encode(value) for value in values])
        except _base_exception as error:
            report_exit(error)
            payload = ("raised", _type(error).__name__, describe(error))
        emit(("case", index, site, payload, list(returns)))
        state["test_index"] = None

    tests = dict(namespace)
    tests["__builtins__"] = builtins_snapshot
    tests["__case__"] = case
    try:
        exec(compile(job["tests"], "<tests>", "exec"), tests)
        tests["check"](candidate)
    except _base_exception as error:
        report_exit(error)
        emit(("abort", "tests", _type(error).__name__, describe(error)))
    if sys.excepthook is not original_excepthook:
        event("hook_patch", "sys.excepthook replaced")
    emit(("done", counter[0]))
    # Skip atexit handlers and buffered-IO teardown: nothing after this point can add evidence.
    _real_exit(0)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    _main()
