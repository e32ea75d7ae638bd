"""The jail (untrusted side): the process that holds the candidate, and nothing else.

Forked by the fork server's per-run "shell" (`_zygote.py`), below the init of a fresh PID
namespace when it runs as root, with a pid such as a login shell's child has.
Standard library only, and nothing here decides pass or fail: the hidden test runs in the trusted
parent (`runner.py`), which calls the candidate's entry point through this process over a channel
of two pipes carrying `_wire` records. The jail holds the read end of the request pipe and the
write end of the reply pipe: it can neither read what it sent nor write what the parent sends, and
it never sees the test, its expected values or the parent's ends.

Setup, in order, before any candidate code (each measure named in the `isolation` record only when
it really applied; `isolation.py` lists them all):
  pidns           in a PID namespace of its own, below a minimal init (done by the fork server):
                  when the init exits, the kernel kills everything left in the namespace, and no
                  pid outside is visible
  netns           an empty network namespace
  minimal_root    in a private mount namespace, a root of its own (`_root.py`), pivoted into with
                  the machine's root detached: read-only binds of the readable paths at their own
                  paths, /dev with null, zero, random, urandom and shm, the work dir; nothing else
                  of the machine is reachable by any path, `..` or descriptor opened after it.
                  Without it (no root, or the root could not be built) the machine's tree, with
                  the two tmpfs below mounted on it and the standard library re-exposed (`_expose`)
  tmpfs_workdir   a size-limited tmpfs on the work dir: the aggregate disk cap (RLIMIT_FSIZE
                  bounds each file, not their sum)
  private_shm     a size-limited tmpfs of its own on /dev/shm (POSIX semaphores and shared memory,
                  which multiprocessing's locks need): nothing there is shared with anyone
  unprivileged_uid  an unprivileged uid and gid of its own, its own gid as its only group, an empty
                  capability bounding set and no capabilities, not dumpable
  memory_cgroup, pids_cgroup, cpu_cgroup  its init's cgroups (`_cgroup.py`): all memory it holds
                  (memfd and tmpfs pages included), its number of tasks and one CPU, bounded by
                  the kernel outside its view
  rlimits         with all three cgroups, a login's (the fork server's own at its start), but
                  file size and no core dumps; without them CPU seconds, address space, open files
                  and threads too, the only bounds there (`_set_limits`)
  landlock        reads only the standard library and shared libraries (in its own root: one layer
                  of its own, reads below that root), writes only the work dir and /dev/shm
                  (`landlock_writes`), no TCP (`landlock_net`), no signals or abstract sockets
                  outside its own domain (`landlock_signal_scope`)
  stdin_devnull   fd 0 is /dev/null (the job arrived on the request pipe, which is drained)
  write_only_channel  the reply descriptor is the write end of a pipe (no reading, seeking or truncating)
  seccomp         `_seccomp.py`: no new processes, no exec, no ptrace, no sockets but a Unix stream
                  socketpair, no signals outside the jail (its own signal handlers are its business)
  audit_hook      `_hook.py`: records and refuses what the shield must see
Then the candidate's surroundings are made those of an ordinary `python main.py` started from a
shell (`_look_ordinary`): the program is the work dir's `main.py`, run as `__main__` with
`sys.argv == ["main.py"]`, the sandbox's own modules and path gone from `sys`, the fork server's
frozen objects unfrozen, no signal handler of the sandbox's installed.
Records sent (see `_wire.py` for values):
  ["isolation", [names]]  ["ready"] | ["abort", phase, type, message]   phase: program | entry_point
  ["event", kind, detail, call_id]   ["return", call_id, value]   ["raised", call_id, type, message]
Requests read: ["job", {...}] once, then ["call", call_id, args, kwargs] ... ["end"].
"""

import _signal  # the C module: `signal` would import enum
import atexit
import builtins
import ctypes
import fcntl
import os
import resource
import sys

import _cgroup
import _hook
import _landlock
import _root
import _seccomp
import _wire

_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWIPC, _CLONE_NEWUTS = 0x00020000, 0x40000000, 0x08000000, 0x04000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 12, 1 << 14, 1 << 18
# POSIX shared memory and semaphores (multiprocessing's locks, ThreadPool's included) live here: a
# tmpfs of the jail's own, in its mount namespace, of at most the limits' `shm_mb` (its pages also
# count in the memory cgroup).
SHM = "/dev/shm"
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_READ_CHUNK = 1 << 16


def _cpu_limit_reached(signum, frame, _exit=os._exit, _status=_hook.CPU_LIMIT_STATUS):
    _exit(_status)


# The 16 resources a login has limits of, as the fork server found them when it started (it is
# exec'd by the trusted parent, which runs under the machine's ordinary limits): read once, here,
# when the server imports this module, before anything of the sandbox changes a limit.
_RESOURCES = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
LOGIN_LIMITS = {number: resource.getrlimit(number) for number in _RESOURCES}
_MIB = 1 << 20


def _set_limits(limits, bounded):
    """The limits the jail runs under and shows. `bounded`: the memory, pids and cpu cgroups
    apply (`_cgroup.applied`), which bound what it holds, its tasks and its CPU from outside its
    view: then its limits are a login's (`_login_limits`), so none of them tells it that it is
    being graded. Otherwise rlimits are the only bound there is (`_fallback_limits`). A value
    the kernel refuses (past a hard limit) is clamped to the server's hard limit. RLIMIT_FSIZE is
    `file_size_mb` in both (it bounds the stderr file); SIGXFSZ becomes EFBIG (as Python sets it).
    Set while still root, before the uid changes."""
    shown = _login_limits(limits.get("hard_factor", 1) > 1) if bounded else _fallback_limits(limits)
    for number, (soft, hard) in shown.items():
        try:
            resource.setrlimit(number, (soft, hard))
        except (ValueError, OSError):
            resource.setrlimit(number, (min(soft, LOGIN_LIMITS[number][1]), LOGIN_LIMITS[number][1]))
    size = limits["file_size_mb"] * _MIB
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size * limits.get("hard_factor", 1)))
    if os.getpid() == 1 and not bounded:
        _signal.signal(_signal.SIGXCPU, _cpu_limit_reached)
    _signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)


def _login_limits(variant):
    """The server's own limits at its start but RLIMIT_FSIZE (set apart) and a core dump's soft
    limit of 0 (Debian's default). The variant shows another login's: a descriptors' soft limit of
    1024 (systemd's, Debian's default) where the first shows another (4096 where it shows 1024)
    and a 16 MiB stack where the first shows 8 MiB (8 MiB where it shows anything else): values
    ordinary machines have, each within the first's hard limit (raising a hard limit needs
    CAP_SYS_RESOURCE, which a container may lack)."""
    shown = {number: value for number, value in LOGIN_LIMITS.items() if number != resource.RLIMIT_FSIZE}
    shown[resource.RLIMIT_CORE] = (0, LOGIN_LIMITS[resource.RLIMIT_CORE][1])
    if variant:
        soft, hard = shown[resource.RLIMIT_NOFILE]
        shown[resource.RLIMIT_NOFILE] = (1024 if soft != 1024 else min(4096, hard), hard)
        soft, hard = shown[resource.RLIMIT_STACK]
        shown[resource.RLIMIT_STACK] = (16 * _MIB if soft == 8 * _MIB else 8 * _MIB, hard)  # clamped to hard when set
    return shown


def _fallback_limits(limits):
    """Without the cgroups: CPU seconds, address space, open files (a login's shape: soft a
    quarter of hard), no core dumps, at most `threads` threads besides its own (RLIMIT_NPROC of
    its uid, which no other jail shares then: `_zygote.jail_uid`). The variant's hard limits lie
    `hard_factor` times above its soft ones. Below its init the jail dies of SIGXCPU at the soft
    CPU limit like any process, and the parent reads that as a timeout; only a jail that is PID 1
    (no PID namespace: the kernel drops a signal to an init that has no handler) needs a handler,
    which turns the soft limit into CPU_LIMIT_STATUS."""
    factor = limits.get("hard_factor", 1)
    memory = limits["memory_mb"] * _MIB
    return {
        resource.RLIMIT_CPU: (limits["cpu_s"], limits["cpu_s"] + 1),
        resource.RLIMIT_AS: (memory, memory * factor),
        resource.RLIMIT_NOFILE: (max(16, limits["open_files"] // 4), limits["open_files"]),
        resource.RLIMIT_CORE: (0, 0),
        resource.RLIMIT_NPROC: (limits["threads"] + 1, (limits["threads"] + 1) * factor),
    }


def _namespaces(libc, workdir, disk_mb, shm_mb, network, plan):
    """Network, mount, IPC and UTS namespaces, then the jail's own root (`_root.enter`: the
    readable paths, the work dir's tmpfs of `disk_mb`, a private /dev/shm, and nothing else of the
    machine); where that cannot be built, the machine's tree with those two tmpfs mounted on it
    and the standard library exposed to other uids (`_expose`). The names of what applied, and
    whether the jail can still import the standard library once unprivileged."""
    applied = []
    if network and libc.unshare(_CLONE_NEWNET) == 0:
        applied.append("netns")
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0:
        return applied, False
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return applied, False
    exposure, root_plan = plan
    if root_plan is not None:
        try:
            return applied + _root.enter(libc, root_plan, workdir, workdir, disk_mb, shm_mb, SHM), True
        except OSError:
            pass  # nothing pivoted: the machine's tree, confined by Landlock and the hook alone
    options = f"size={disk_mb}m,nr_inodes=4096,mode=0700".encode()
    if libc.mount(b"tmpfs", workdir.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) == 0:
        applied.append("tmpfs_workdir")
    shm_options = f"size={shm_mb}m,nr_inodes=256,mode=1777".encode()
    if os.path.isdir(SHM) and libc.mount(b"tmpfs", SHM.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, shm_options) == 0:
        applied.append("private_shm")
    return applied, _expose(libc, exposure)


def mount_plan(readable, confined=True):
    """(exposure, root): `exposure_plan(readable)`, and `_root.plan(readable)` when the jail is
    `confined` to the readable paths (None otherwise: without a policy it sees the machine).
    Computed once by the fork server; applied per jail by `_namespaces`."""
    return exposure_plan(readable), _root.plan(readable) if confined else None


def exposure_plan(readable):
    """[(hidden, exposed)]: for readable paths below a directory that other users cannot
    traverse (a Python under /root), that directory and the one path below it to re-expose.
    Computed once by the fork server; applied per jail by `_expose`."""
    below: dict[str, list[str]] = {}
    for path in readable:
        real = os.path.realpath(path)
        if not os.path.exists(real):
            continue
        parts = real.strip("/").split("/")
        for depth in range(1, len(parts)):
            ancestor = "/" + "/".join(parts[:depth])
            if not os.stat(ancestor).st_mode & 0o001:
                below.setdefault(ancestor, []).append(real)
                break
    plan = []
    for hidden, paths in below.items():
        common = os.path.commonpath(paths)
        plan.append((hidden, common if os.path.isdir(common) else os.path.dirname(common)))
    return plan


def _expose(libc, plan):
    """In the jail's mount namespace: cover each hidden directory with an empty, traversable
    tmpfs and bind the readable part back at its own path, so an unprivileged uid can import
    the standard library without being able to traverse anything else there."""
    for hidden, exposed in plan:
        source = os.open(exposed, os.O_PATH | os.O_CLOEXEC)
        try:
            if libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,mode=0755") != 0:
                return False
            os.makedirs(exposed, mode=0o755, exist_ok=True)
            if libc.mount(f"/proc/self/fd/{source}".encode(), exposed.encode(), None, _MS_BIND | _MS_REC, None) != 0:
                return False
        finally:
            os.close(source)
    return True


def _drop_privileges(libc, uid, workdir, status_fd):
    """Become `uid`/`uid` with no groups and no capabilities; True when that holds afterwards, as
    `status_fd` (this process's /proc/self/status, opened before the jail's root left /proc out)
    shows."""
    if os.geteuid() != 0:
        return False
    os.chown(workdir, uid, uid)
    for capability in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    os.setgroups([uid])  # its own group, as an ordinary user's login gives
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)  # after setresuid, which clears it
    status = os.pread(status_fd, 1 << 16, 0).decode("ascii", "replace").splitlines()
    capabilities = [line.split()[1] for line in status if line.startswith(("CapPrm", "CapEff", "CapBnd", "CapAmb"))]
    return os.getresuid() == (uid, uid, uid) and os.getgroups() == [uid] and set(capabilities) == {"0000000000000000"}


_M_ARENA_MAX = -8  # glibc's mallopt parameter


class _Requests:
    """Lines from the request pipe, one record at a time. `os.read` and the decoder are captured
    here, before the candidate's program runs, so a program that rebinds `os.read` (or `_wire.loads`)
    cannot slow or change the jail's side of the protocol."""

    def __init__(self, fd):
        self.fd, self.buffer = fd, b""
        self._read, self._loads = os.read, _wire.loads

    def next(self):
        while b"\n" not in self.buffer:
            chunk = self._read(self.fd, _READ_CHUNK)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return self._loads(line, objects=True)  # from the trusted parent


def run(request_fd, reply_fd, ruleset_fd, readable_prefixes, plan, uid, in_pidns, start_modules=None):
    """The jail's whole life; always ends in os._exit (atexit handlers and IO teardown never run)."""
    _write, _exit, _type, _str, _dumps = os.write, os._exit, type, str, _wire.dumps
    qualname = type.__dict__["__qualname__"].__get__
    _base_exception, _system_exit = BaseException, SystemExit
    requests = _Requests(request_fd)
    job = requests.next()[1]
    current_call = [None]

    def send(record):
        data = _dumps(record)
        while data:
            data = data[_write(reply_fd, data):]

    libc = ctypes.CDLL(None, use_errno=True)
    # glibc gives each new thread's allocations an arena that reserves 64 MiB of address space, so
    # under RLIMIT_AS a stdlib-sized pool (32 threads) would fail to start; two arenas suffice.
    libc.mallopt(_M_ARENA_MAX, 2)
    workdir = os.path.realpath(job["workdir"])
    isolation = ["pidns"] if in_pidns else []
    isolation += _cgroup.applied()  # entered by its init before the fork
    exposed = False
    status_fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
    if os.geteuid() == 0:
        applied, exposed = _namespaces(libc, workdir, job["limits"]["disk_mb"], job["limits"]["shm_mb"], job["unshare_network"], plan)
        isolation += applied
    os.chdir(workdir)  # while still privileged: the sandbox root above it only lets others traverse
    _set_limits(job["limits"], {"memory_cgroup", "pids_cgroup", "cpu_cgroup"} <= set(isolation))
    if exposed and _drop_privileges(libc, uid, workdir, status_fd):  # without the exposure it could not import
        isolation.append("unprivileged_uid")
    os.close(status_fd)  # the last descriptor of the machine's tree but 0-2 (the server's, char devices and a file)
    shm = SHM if "private_shm" in isolation else None
    if ruleset_fd >= 0 and "minimal_root" in isolation:
        # The server's read layer names the machine's paths, and its write grant (the sandbox
        # root) lies outside this root: one layer of the jail's own instead, reads below its root.
        os.close(ruleset_fd)
        confined = _landlock.confine_jail(workdir, shm, readable_root="/")
        isolation += ["landlock"] + confined if confined else []
    elif ruleset_fd >= 0:
        if _landlock.restrict(ruleset_fd):
            isolation.append("landlock")
        os.close(ruleset_fd)
        isolation += _landlock.confine_jail(workdir, shm)
    os.environ.clear()  # forked from the fork server, the jail starts with the server's environment
    os.environ.update(job["environment"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    if os.read(0, 1) == b"":
        isolation.append("stdin_devnull")
    mode = os.fstat(reply_fd).st_mode
    if (os.O_ACCMODE & fcntl.fcntl(reply_fd, fcntl.F_GETFL)) == os.O_WRONLY and (mode & 0o170000) == 0o010000:
        isolation.append("write_only_channel")
    readable = readable_prefixes if "landlock" in isolation else None
    main_path = workdir + "/main.py"
    with open(main_path, "w", encoding="utf-8", errors="surrogatepass") as main_file:
        main_file.write(job["program"])
    if _seccomp.install(os.getpid()):
        isolation.append("seccomp")
    audit = sys.audit
    # Fast locals, never cells (no nested function uses them), so no frame a candidate reaches can
    # replace them: the event that has the hook's seal checked after loading and after every call.
    _seal, _seal_event = sys.audit, _hook.SEAL_EVENT
    scratch = (SHM,) if "private_shm" in isolation else ()
    # First, a C function no signal handler can interrupt: it notes each event, and the hook
    # removes the note once it has judged the event (`_hook.make_hook`'s `pending`).
    pending: dict[str, object] = {}
    hook = _hook.make_hook(reply_fd, workdir, readable, current_call, main_path, scratch, pending)
    sys.addaudithook(pending.setdefault)
    sys.addaudithook(hook)
    pending.clear()  # the note of the hook's own addition, raised before it was there to judge it
    del pending, hook  # only the two hooks hold them: no frame the candidate reaches does
    isolation += ["audit_hook", "rlimits"]
    send(["isolation", isolation])
    _record_exit_calls()
    original_excepthook = sys.excepthook
    encode, reset = _wire.encoder()

    def describe(error):
        try:
            return _wire.safe_text(_str(error))
        except _base_exception:  # a hostile __str__ must not break reporting
            return "<unprintable>"

    def raised(error):
        if isinstance(error, _system_exit):
            audit("sandbox.exit", "SystemExit(" + describe(error)[:40] + ")")
        return qualname(_type(error))[:100], describe(error)

    namespace = _look_ordinary(main_path, start_modules)
    try:
        exec(compile(job["program"], main_path, "exec"), namespace)
    except _base_exception as error:  # the candidate's failure is data, never the jail's crash
        if not _clean_exit(error):
            send(["abort", "program", *raised(error)])
            _exit(0)
        # A clean exit at load (unittest.main(), sys.exit() after a __main__ block) ends the
        # program's load as it would end `python main.py`: what it defined so far stays.
    _seal(_seal_event)
    entry = namespace.get(job["entry_point"])
    if not callable(entry):
        send(["abort", "entry_point", "NameError", f"no function {job['entry_point']!r} after loading the program"])
        _exit(0)
    send(["ready"])
    while True:
        request = requests.next()
        if request is None or request[0] != "call":
            _exit(0)
        _, call_id, args, kwargs = request
        current_call[0] = call_id
        reset()
        try:
            value = entry(*_wire.decode(args), **_wire.decode(kwargs))
            reply = ["return", call_id, encode(value)]
        except _base_exception as error:
            reply = ["raised", call_id, *raised(error)]
        if sys.excepthook is not original_excepthook:
            audit("sandbox.hook_patch", "sys.excepthook replaced")
            original_excepthook = sys.excepthook
        current_call[0] = None
        _seal(_seal_event)
        send(reply)


_exit_code = SystemExit.__dict__["code"].__get__  # the slot itself: a subclass's property never runs


def _clean_exit(error):
    """`error` is a SystemExit that `python main.py` would end with status 0: code None, 0 or
    False (unittest.main()'s `sys.exit(not successful)`), of exact types."""
    if not isinstance(error, SystemExit):
        return False
    code = _exit_code(error)
    return code is None or (type(code) in (int, bool) and code == 0)


_SANDBOX_MODULES = ("_jail", "_cgroup", "_hook", "_landlock", "_seccomp", "_wire", "ctypes", "_ctypes", "ctypes._endian", "socket",
                    "_socket", "select", "selectors", "fcntl", "resource", "array")


def _look_ordinary(main_path, start_modules=None):
    """The candidate's module namespace, with `sys` made to look like `python main.py`'s: the
    module is `__main__` with a `__file__`, the fork server's argv and path entry are gone,
    `sys.modules` holds exactly `start_modules` (what a plain `python3` holds when its program
    starts, measured by the fork server before its own imports; without it, the sandbox's own
    modules are dropped), its frozen objects are back in the collector. Every object the jail
    itself uses was bound before this, so dropping the modules from `sys.modules` removes nothing
    it needs; a candidate that imports one of them gets a fresh copy."""
    import gc
    import importlib.machinery
    import types

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if entry and os.path.abspath(entry) != here]
    sys.path.insert(0, os.path.dirname(main_path))
    for name in _SANDBOX_MODULES:
        sys.modules.pop(name, None)
    module = types.ModuleType("__main__")
    module.__file__ = main_path
    module.__dict__.update(
        __cached__=None, __loader__=importlib.machinery.SourceFileLoader("__main__", main_path), __builtins__=builtins,
        __annotations__={},
    )
    sys.modules["__main__"] = module
    sys.argv[:] = ["main.py"]
    sys.orig_argv[:] = ["python3", "main.py"]
    for entry in list(sys.path_importer_cache):
        if entry == here:
            del sys.path_importer_cache[entry]
    gc.unfreeze()
    if start_modules is not None:
        for name in [name for name in sys.modules if name not in start_modules]:
            del sys.modules[name]
    return module.__dict__


def _record_exit_calls():
    """os._exit and atexit.register leave an event (the parent also sees the jail's exit itself).

    The wrappers raise audit events the hook records, rather than holding the jail's `event`:
    they are reachable from the candidate (`os._exit.__closure__`), and nothing reachable from
    the candidate may hold the reporting path."""
    real_exit, real_register, audit = os._exit, atexit.register, sys.audit

    def exit_recorder(status=0):
        audit("sandbox.exit", status)
        real_exit(status)

    def register_recorder(function, *args, **kwargs):
        audit("sandbox.atexit_register")
        return real_register(function, *args, **kwargs)

    os._exit = exit_recorder
    # A module attribute replaced at run time: the recorder passes anything through, so it is not
    # typed as generic over the signature that typeshed gives atexit.register.
    atexit.register = register_recorder  # type: ignore[assignment]
