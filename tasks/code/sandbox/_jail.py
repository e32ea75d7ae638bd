"""The jail (untrusted side): the process that holds the candidate, and nothing else.

Forked by the fork server's per-run "shell" (`_zygote.py`), below the init of a fresh PID
namespace when it runs as root, with a pid such as a login shell's child has.
The standard library and the `_kernel` C module only, and nothing here decides pass or fail: the
hidden test runs in the trusted parent (`runner.py`), which calls the candidate's entry point through this process over a channel
of two pipes carrying `_wire` records. The jail holds the read end of the request pipe as its
stdin (fd 0) and the write end of the reply pipe as its stdout (fd 1), fd 2 is a pipe its shell
drains into the stderr file (`_zygote._drain`), and nothing is open above 2 while candidate code
runs: the descriptors of `producer | python3 main.py 2>err.log | consumer`. It can neither read
what it sent nor write what the parent sends, and it never sees the test's code, its expected
values or the parent's ends (the calls the test will make it sees in its test file, `_caller`).

Framing on fd 1, which the candidate's own output shares: every record the jail writes is one
write(2) that starts with the byte 0x1e (RS, which `_wire.dumps` never emits: JSON escapes every
control character) and ends with "\n"; the parent keeps, of each line, what follows its last RS
(`channel.py`), and everything else is the program's output, counted and dropped. A record of at
most PIPE_BUF (4096) bytes is written atomically, so no bytes of another thread land inside it:
every isolation, ready, abort, raised and event record is that short (the hook cuts details to
300 characters); a return value longer than that is the candidate's own answer, which only its
own threads can spoil. The candidate can write bytes that parse as records, as it could always
write on the reply pipe: the parent accepts from that pipe nothing it would not accept as a
returned value (see docs/sandbox.md, "The channel").

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
  rlimits         with all three cgroups, a login's (the fork server's own at its start), but no
                  core dumps; without them CPU seconds, address space, open files and threads too,
                  the only bounds there (`_set_limits`); the file size unlimited, as a login's,
                  where stderr is the shell's pipe and the jail's root is its own (every place it
                  can write is then a size-capped tmpfs), else `file_size_mb`
  landlock        reads only the standard library and shared libraries (in its own root: one layer
                  of its own, reads below that root), writes only the work dir and /dev/shm
                  (`landlock_writes`), no TCP (`landlock_net`), no signals or abstract sockets
                  outside its own domain (`landlock_signal_scope`)
  stdio_pipes     fds 0, 1, 2 are pipes: the request pipe's read end (read-only), the reply pipe's
                  write end (write-only: no reading, seeking or truncating), the stderr pipe
                  (write-only; not named without a shell, where fd 2 is the stderr file), each
                  owned by the jail's own uid, as a user's shell pipeline's are
  only_stdio      nothing open above fd 2 (the ruleset, /proc/self/status and the server's are closed)
  seccomp         `_seccomp.py`: no new processes, no exec, no ptrace, no sockets but a Unix stream
                  socketpair, no signals outside the jail (its own signal handlers are its business)
  audit_hook      `_hook.py`: records and refuses what the shield must see
Then the candidate's surroundings are made those of an ordinary `python main.py` started from a
shell (`_look_ordinary`): the program is the work dir's `main.py`, run as `__main__` with
`sys.argv == ["main.py"]`, the sandbox's own modules and path gone from `sys`, the fork server's
frozen objects unfrozen, no signal handler of the sandbox's installed. And nothing of the
sandbox's is on the stack below the candidate's frames (`bare_stack`: `life`, docs/sandbox.md,
"The stack").
Records sent (see `_wire.py` for values):
  ["isolation", [names]]  ["ready"] | ["abort", phase, type, message]   phase: program | entry_point
  ["event", kind, detail, call_id]   ["return", call_id, value]   ["raised", call_id, type, message]
Requests read from fd 0: ["job", {...}] once (before any candidate code: the job is its own
program, entry point, environment and limits), then ["call", call_id, args, kwargs] ... ["end"].
A candidate that reads fd 0 itself takes a call away from the jail, whose reply the parent then
never gets (a timeout); `input()` at load waits for a line no one sends until the wall clock ends
the run.
"""

import _signal  # the C module: `signal` would import enum
import builtins
import collections
import fcntl
import functools
import gc
import itertools
import operator
import os
import resource
import select
import sys
import types
from typing import Any

import _cgroup
import _gate  # in the fork server: the jail's root holds no file of the sandbox's
import _hook
import _kernel
import _landlock
import _root
import _seccomp
import _subclasses  # in the fork server, as `_gate`
import _testfile
import _wire

# Every function and class below looks builtin names up in this private copy of the builtins, made
# when the fork server imports this module (before any candidate code): a candidate that rebinds
# `builtins.len` runs nothing in the jail's own code (CPython 3.11 takes a function's builtins from
# its module's `__builtins__` when it is created). Shared modules' attributes are bound in `life`.
globals()["__builtins__"] = dict(vars(builtins))

_CLONE_NEWNS, _CLONE_NEWNET, _CLONE_NEWIPC, _CLONE_NEWUTS = 0x00020000, 0x40000000, 0x08000000, 0x04000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 8, 1 << 12, 1 << 14, 1 << 18
# POSIX shared memory and semaphores (multiprocessing's locks, ThreadPool's included) live here: a
# tmpfs of the jail's own, in its mount namespace, of at most the limits' `shm_mb` (its pages also
# count in the memory cgroup).
SHM = "/dev/shm"
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_READ_CHUNK = 1 << 16
_FD_CEILING = 1 << 20  # closerange uses close_range(2): the span costs nothing
_RS = b"\x1e"  # starts every record on fd 1; never inside one (`_wire.dumps` escapes control bytes)


def _cpu_limit_reached(signum, frame, _exit=os._exit, _status=_hook.CPU_LIMIT_STATUS):
    _exit(_status)


# The 16 resources a login has limits of, as the fork server found them when it started (it is
# exec'd by the trusted parent, which runs under the machine's ordinary limits): read once, here,
# when the server imports this module, before anything of the sandbox changes a limit.
_RESOURCES = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
LOGIN_LIMITS = {number: resource.getrlimit(number) for number in _RESOURCES}
_MIB = 1 << 20


def _set_limits(limits, bounded, files_capped_by_mounts=False):
    """The limits the jail runs under and shows. `bounded`: the memory, pids and cpu cgroups
    apply (`_cgroup.applied`), which bound what it holds, its tasks and its CPU from outside its
    view: then its limits are a login's (`_login_limits`), so none of them tells it that it is
    being graded. Otherwise rlimits are the only bound there is (`_fallback_limits`). A value
    the kernel refuses (past a hard limit) is clamped to the server's hard limit. RLIMIT_FSIZE is
    unlimited, as a login's, with `files_capped_by_mounts` (every place the jail can write is a
    size-capped tmpfs and its stderr is its shell's pipe, capped there), else `file_size_mb` (it
    bounds the stderr file); SIGXFSZ becomes EFBIG (as Python sets it). Set while still root,
    before the uid changes."""
    shown = _login_limits(limits.get("hard_factor", 1) > 1) if bounded else _fallback_limits(limits)
    for number, (soft, hard) in shown.items():
        try:
            resource.setrlimit(number, (soft, hard))
        except (ValueError, OSError):
            resource.setrlimit(number, (min(soft, LOGIN_LIMITS[number][1]), LOGIN_LIMITS[number][1]))
    size, unlimited = limits["file_size_mb"] * _MIB, resource.RLIM_INFINITY
    files = (unlimited, unlimited) if files_capped_by_mounts else (size, size * limits.get("hard_factor", 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, files)
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



def _stdio_checks(request_fd, reply_fd, uid):
    """`stdio_pipes` when fds 0-2 are pipes of the right access modes owned by `uid`, `only_stdio`
    when no descriptor above 2 is open (the lowest free one is 3)."""
    checks = []
    wanted = ((request_fd, os.O_RDONLY), (reply_fd, os.O_WRONLY), (2, os.O_WRONLY))
    try:
        if all(_is_pipe(fd, mode, uid) for fd, mode in wanted):
            checks.append("stdio_pipes")
        probe = os.dup(0)
        os.close(probe)
    except OSError:
        return checks
    if probe == 3:
        checks.append("only_stdio")
    return checks


def _is_pipe(fd, access_mode, uid):
    status = os.fstat(fd)
    return (status.st_mode & 0o170000) == 0o010000 and status.st_uid == uid and (os.O_ACCMODE & fcntl.fcntl(fd, fcntl.F_GETFL)) == access_mode


def _namespaces(workdir, disk_mb, shm_mb, network, plan, login=None):
    """Network, mount, IPC and UTS namespaces, then the jail's own root (`_root.enter`: the
    readable paths, the work dir's tmpfs of `disk_mb` (None: `_root.tmpfs_options`), a private /dev/shm, and nothing else of the
    machine); where that cannot be built, the machine's tree with those two tmpfs mounted on it
    and the standard library exposed to other uids (`_expose`). The names of what applied, and
    whether the jail can still import the standard library once unprivileged."""
    applied = []
    if network and _kernel.unshare(_CLONE_NEWNET) == 0:
        applied.append("netns")
    if _kernel.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0:
        return applied, False
    if _kernel.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return applied, False
    exposure, root_plan = plan
    if root_plan is not None:
        try:
            return applied + _root.enter(root_plan, workdir, workdir, disk_mb, shm_mb, SHM, login), True
        except OSError:
            pass  # nothing pivoted: the machine's tree, confined by Landlock and the hook alone
    options = _root.tmpfs_options(disk_mb, 4096, "0700")
    if _kernel.mount(b"tmpfs", workdir.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, options) == 0:
        applied.append("tmpfs_workdir")
    shm_options = _root.tmpfs_options(shm_mb, 256, "1777")
    if os.path.isdir(SHM) and _kernel.mount(b"tmpfs", SHM.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, shm_options) == 0:
        applied.append("private_shm")
    return applied, _expose(exposure)


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


def _expose(plan):
    """In the jail's mount namespace: cover each hidden directory with an empty, traversable
    tmpfs and bind the readable part back at its own path, so an unprivileged uid can import
    the standard library without being able to traverse anything else there."""
    for hidden, exposed in plan:
        source = os.open(exposed, os.O_PATH | os.O_CLOEXEC)
        try:
            if _kernel.mount(b"tmpfs", hidden.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755") != 0:
                return False
            os.makedirs(exposed, mode=0o755, exist_ok=True)
            if _kernel.mount(f"/proc/self/fd/{source}".encode(), exposed.encode(), None, _MS_BIND | _MS_REC, None) != 0:
                return False
        finally:
            os.close(source)
    return True


def _drop_privileges(uid, workdir, status_fd):
    """Become `uid`/`uid` with no groups and no capabilities; True when that holds afterwards, as
    `status_fd` (this process's /proc/self/status, opened before the jail's root left /proc out)
    shows."""
    if os.geteuid() != 0:
        return False
    os.chown(workdir, uid, uid)
    for fd in (0, 1, 2):  # a pipe is owned by whoever made it: the parent's and the shell's are root's
        if (os.fstat(fd).st_mode & 0o170000) == 0o010000:
            os.fchown(fd, uid, uid)
    for capability in range(64):
        if _kernel.prctl(_PR_CAPBSET_DROP, capability) != 0:
            break  # past the last capability this kernel knows
    os.setgroups([uid])  # its own group, as an ordinary user's login gives
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _kernel.prctl(_PR_SET_DUMPABLE, 0)
    _kernel.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL)  # after setresuid, which clears it
    status = os.pread(status_fd, 1 << 16, 0).decode("ascii", "replace").splitlines()
    capabilities = [line.split()[1] for line in status if line.startswith(("CapPrm", "CapEff", "CapBnd", "CapAmb"))]
    return os.getresuid() == (uid, uid, uid) and os.getgroups() == [uid] and set(capabilities) == {"0000000000000000"}


_M_ARENA_MAX = -8  # glibc's mallopt parameter


def _requests(fd):
    """The next record from the request pipe, one at a time (None at its end). A closure, not a
    class: a class of the jail's is reachable from `object.__subclasses__()`, and a method or a
    descriptor the candidate set on it would run in the jail's own code. `os.read` and the decoder
    are captured here, before the candidate's program runs."""
    read, loads, chunk_size, buffer = os.read, _wire.loads, _READ_CHUNK, [b""]

    def next_request():
        while b"\n" not in buffer[0]:
            chunk = read(fd, chunk_size)
            if not chunk:
                return None
            buffer[0] += chunk
        line, buffer[0] = buffer[0].split(b"\n", 1)
        return loads(line, objects=True)  # from the trusted parent

    return next_request


def life(request_fd, reply_fd, ruleset_fd, readable_prefixes, plan, uid, in_pidns, start=None, filter_program=None,
         variant=False):
    """The jail's whole life, as callbacks to call one after another from C, so that no frame of
    the sandbox is on the stack while candidate code runs (`_zygote` makes them the after-fork
    callbacks of a fork made by a thread with no Python frame, `_kernel.bare_fork`; CPython calls
    each from C, and a callback that raises does not stop the next). In order: `set_up` (every
    measure, the hook, the program and its test file written; it reads the job and returns), the
    load (the program's module code called by C: its frame has nothing below it, as in
    `python3 main.py`), the load's outcome and the entry point read from C, then the test file's
    module code, run by C one after another (`_caller`): first its steps alone (`report`: abort,
    or "ready"; `wait`; `next_case`: read a request and make its call), then for each call the
    call itself followed by the same steps (`report` is then the reply). No function of the
    jail's is on the stack during a call, and its steps run from the test file's frame. Every
    path ends in os._exit (atexit handlers and IO teardown never run)."""
    # Everything the jail's code uses once candidate code has run is bound here, in the shell,
    # before the fork: a shared module's attribute (`functools.partial`, `sys.excepthook`) read later
    # would be whatever the candidate made it (even `sys.__class__` can be replaced), and the
    # builtins these functions use are this module's private copy.
    _write, _exit, _type, _str, _dumps = os.write, os._exit, type, str, _wire.dumps
    _partial, _deque, _decode, _safe_text = functools.partial, collections.deque, _wire.decode, _wire.safe_text
    _unstacked = _gate.unstacked
    # Read and written as a dict, and only from C chains (a key of the candidate's with its own
    # `__eq__` runs there with no frame of the jail's below it: red team sandbox11 `k1`).
    sys_names = sys.__dict__
    hooks_seen: list[object] = []  # `sys.excepthook` as the step before each reply read it, from C
    # What the reply step met of the candidate's (the outcome, every value the encoder met, the
    # hook it read), emptied from C once the reply is sent: another thread of the candidate's can
    # drop its own references meanwhile, and the jail's last one must not be let go of in its frame.
    kept: list[object] = []
    qualname = type.__dict__["__qualname__"].__get__
    _system_exit = SystemExit
    next_request = _requests(request_fd)
    current_call = [None]
    # The program's module code as a function of its namespace, once set up: called, it runs as
    # `exec(code, namespace)` would (CPython 3.11 runs code that is not a function's with its
    # globals as locals), with no `exec` call, which is a C function's recursion level and an event.
    # Neither it nor anything else of the jail's holds the namespace once the program is loaded,
    # nor the entry point during a call: `sys.getrefcount` shows each reference, with no audit
    # event (red team sandbox13 `t2`, `t3`: the namespace read 6 at load where `python3 main.py`
    # reads 4, the entry point 6 in a call where a test file that imports it reads 4).
    loading: list[object] = []
    load_functions: list[object] = []  # the same function, whose namespace C reads the entry point from
    loaded_marker: list[bool] = []  # set from C right after the program, only if it finished
    load_ends: list[bool] = []  # what `load` puts in it then: nothing where the program did not compile
    load_errors: list[object] = []  # what ended the load, if it raised (`_gate.catching`, in C)
    load_texts: list[object] = []  # its text (`str`, called from C, the candidate's `__str__` too)
    entry_names: list[str] = []
    runner_holds: list[object] = []  # the program's module and the test module
    entries: list[object] = []  # what the namespace holds under that name (looked up from C), until the first call
    outcome: list[object] = []  # the last call's: [True, value] or [False, error, its text]
    # What the jail's own code between calls would let go of that may be the candidate's (its
    # `sys.excepthook` replaced), let go of from C instead (each call's chain, `_next_case`): a
    # `__del__` or weak-reference callback of the candidate's then runs with no frame of the
    # jail's below it.
    dropped: list[object] = []
    state: dict[str, Any] = {}
    # The wait for the next request, in C (`poll`), a step the test file's module code makes: a
    # signal handler that runs while the jail waits is handed that file's frame.
    requests_ready = select.poll()
    requests_ready.register(request_fd, select.POLLIN)
    call = operator.methodcaller("__call__")
    wait_for_request = requests_ready.poll

    def send(record):
        data = _RS + _dumps(record)  # one write: atomic on the pipe up to PIPE_BUF
        while data:
            data = data[_write(reply_fd, data):]

    def guarded(body):
        """`body`, run as a callback: a failure of the jail's own code (never the candidate's,
        which the caller catches) ends the jail rather than reach CPython's unraisable hook.

        The jail's code once candidate code exists runs shielded too (`_gate.shielded`): with no
        signal handler of the candidate's and the collector off (a collection the jail's own
        allocations set off would run the candidate's `gc.callbacks` and finalizers with the
        jail's frames below them, their `f_back`, which raises no audit event: a callback that
        walked them found `_jail.py`, `_wire.py` and `_hook.py`)."""

        def callback():
            try:
                return body()
            except BaseException:  # noqa: B036
                _exit(70)

        return callback

    def _set_up():
        bare = sys._getframe(1).f_back is None  # its callback itself was called from C with no frame below
        job = next_request()[1]
        # glibc gives each new thread's allocations an arena that reserves 64 MiB of address space, so
        # under RLIMIT_AS a stdlib-sized pool (32 threads) would fail to start; two arenas suffice.
        _kernel.mallopt(_M_ARENA_MAX, 2)
        workdir = os.path.realpath(job["workdir"])
        isolation = ["pidns"] if in_pidns else []
        isolation += _cgroup.applied()  # entered by its init before the fork
        exposed = False
        status_fd = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        if os.geteuid() == 0:
            environment = job["environment"]
            login = (uid, environment.get("USER", "user"), environment.get("HOME", "/home/user"), environment.get("SHELL", "/bin/sh"))
            # Sized as an ordinary tmpfs where the memory cgroup bounds what the jail writes (a size
            # of the jail's own, 64 MiB, showed in `os.statvfs`); sized by the limits where not.
            sized = "memory_cgroup" not in isolation
            disk_mb, shm_mb = (job["limits"]["disk_mb"], job["limits"]["shm_mb"]) if sized else (None, None)
            applied, exposed = _namespaces(workdir, disk_mb, shm_mb, job["unshare_network"], plan, login)
            isolation += applied
        os.chdir(workdir)  # while still privileged: the sandbox root above it only lets others traverse
        # Stderr is the shell's pipe (capped there) only below its PID namespace's init; the machine's
        # tree is out of reach only in the jail's own root, where it writes only to its tmpfs mounts.
        bounded = {"memory_cgroup", "pids_cgroup", "cpu_cgroup"} <= set(isolation)
        _set_limits(job["limits"], bounded, in_pidns and "minimal_root" in isolation)
        if exposed and _drop_privileges(uid, workdir, status_fd):  # without the exposure it could not import
            isolation.append("unprivileged_uid")
        os.close(status_fd)  # the last descriptor of the machine's tree (0-2 are pipes; without a shell, 2 is the stderr file)
        shm = SHM if "private_shm" in isolation else None
        if ruleset_fd >= 0 and "minimal_root" in isolation:
            # The server's read layer names the machine's paths, and its write grant (the sandbox
            # root) lies outside this root: one layer of the jail's own instead, reads below its root.
            os.close(ruleset_fd)
            home = job["environment"].get("HOME") if "login_home" in isolation else None
            confined = _landlock.confine_jail(workdir, shm, readable_root="/", home=home)
            isolation += ["landlock"] + confined if confined else []
        elif ruleset_fd >= 0:
            if _landlock.restrict(ruleset_fd):
                isolation.append("landlock")
            os.close(ruleset_fd)
            isolation += _landlock.confine_jail(workdir, shm)
        os.environ.clear()  # forked from the fork server, the jail starts with the server's environment
        os.environ.update(job["environment"])
        readable = readable_prefixes if "landlock" in isolation else None
        if readable is not None and "login_home" in isolation:  # the login's accounts, its root's own
            readable = (*readable, *_landlock.prefixes(_root.ACCOUNTS))
        main_path = workdir + "/main.py"
        with open(main_path, "w", encoding="utf-8", errors="surrogatepass") as main_file:
            main_file.write(job["program"])
        planned = [tuple(map(_decode, call)) for call in job.get("calls", ())]
        module, state["make_call"], first = _caller(workdir, variant, outcome, (report, wait, next_case), planned)
        # Held as the import system holds a module while its code runs, twice (`_load_unlocked` and
        # the loader's `exec_module`; red team sandbox15 `t2`: `sys.getrefcount` of the caller's
        # module read two fewer than during `import test_main`).
        runner_holds.extend((module, module))
        # And its lock, as the import system holds it while the module's code runs (taken by this
        # thread, which makes every call: red team sandbox17 `f4`, the module said `_initializing`
        # while `_frozen_importlib._module_locks` held no lock for it).
        import_lock = sys.modules["_frozen_importlib"]._ModuleLockManager(module.__name__)
        import_lock.__enter__()
        runner_holds.append(import_lock)
        # The test module in `sys.modules`, as a runner that imported it has it: set from C once the
        # program is loaded (whatever the candidate made of `sys.modules` and its keys runs there,
        # with no frame of the jail's below), then the first steps.
        place: functools.partial[collections.deque] = _partial(_deque, itertools.starmap(operator.setitem, zip(map(dict.get, (sys_names,), ("modules",)), (module.__name__,), (module,))), 0)
        upcoming.append(_partial(_deque, map(call, (place, _unstacked([first]), dropped.clear)), 0))
        os.closerange(3, _FD_CEILING)  # whatever setup left open: nothing above 2 while the candidate runs
        if _seccomp.install(filter_program, os.getpid()):
            isolation.append("seccomp")
        isolation += _stdio_checks(request_fd, reply_fd, uid if "unprivileged_uid" in isolation else os.geteuid())
        _kernel.seal()  # nothing of the module works from here on: no candidate code has run yet
        audit = sys.audit
        # The event that has the hook's seal checked after loading and after every call, kept in
        # `state`, which no frame the candidate reaches holds (none of the jail's is below its own).
        _seal, _seal_event = sys.audit, _hook.SEAL_EVENT
        scratch = ((SHM,) if "private_shm" in isolation else ()) + ((job["environment"]["HOME"],) if "login_home" in isolation else ())
        # The gate, in C, which no signal handler can interrupt, notes each event it hands the hook,
        # and the hook removes the note once it has judged the event (`_hook.make_hook`'s `pending`).
        pending: dict[str, object] = {}
        hook = _hook.make_hook(reply_fd, workdir, readable, current_call, main_path, scratch, pending)
        _hook.install(_gate, hook, pending, workdir, scratch)
        del pending, hook  # only the gate holds them: no frame the candidate reaches does
        isolation += ["audit_hook", "rlimits"]
        if bare:
            isolation.append("bare_stack")
        send(["isolation", isolation])
        state.update(job=job, audit=audit, seal=_seal, seal_event=_seal_event, excepthook=sys.excepthook)
        state["encode"], state["reset"] = _wire.encoder(kept)
        main = _look_ordinary(main_path, start)
        # Held for the jail's life, as CPython's runner holds `__main__` while it runs a file (red
        # team sandbox14 `t6`: `sys.getrefcount` of the module read one fewer than in `python3 main.py`).
        runner_holds.append(main)
        namespace = main.__dict__
        entry_names.append(job["entry_point"])
        try:
            program = compile(job["program"], main_path, "exec")
        except BaseException as error:  # noqa: B036 (a SyntaxError is the candidate's failure to load)
            load_errors.append(error)
            return
        load_functions.append(types.FunctionType(program, namespace))
        loading.append(_unstacked(load_functions[0]))
        load_ends.append(True)  # the marker `load` sets once the program has run to its end
        # What the set-up let go of (the modules cut from `sys.modules`) is collected now, the young
        # generations only (the fork server's own objects are old, and a full collection of them
        # cost each jail milliseconds): `gc.set_debug(DEBUG_SAVEALL)` at load found the gate's
        # `faulthandler` import in `gc.garbage`, where a plain python3 collects nothing (red team
        # sandbox11 `t2`; the gate now keeps its imports).
        gc.collect(1)

    def text_of(error_text):
        return _safe_text(error_text) if _type(error_text) is _str else "<unprintable>"

    def raised(error, error_text):
        if issubclass(_type(error), _system_exit):  # by its type: a `__class__` of its own never runs
            state["audit"]("sandbox.exit", "SystemExit(" + text_of(error_text)[:40] + ")")
        name = qualname(_type(error))  # a class's `__qualname__` may be a str subclass of its own
        return (name[:100] if _type(name) is _str else "<unprintable>"), text_of(error_text)

    def _loaded():
        if not loaded_marker:
            error = load_errors[0] if load_errors else None
            if not _clean_exit(error):
                text = load_texts[0] if load_texts else None
                send(["abort", "program", *(raised(error, text) if error is not None else ("Exception", "the program's load did not finish"))])
                _exit(0)
            # A clean exit at load (unittest.main(), sys.exit() after a __main__ block) ends the
            # program's load as it would end `python main.py`: what it defined so far stays.
            # What ended it holds the program's frame, and so its namespace: let go of from C.
            dropped.extend(load_errors)
            dropped.extend(load_texts)
            load_errors.clear()
            load_texts.clear()
        state["seal"](state["seal_event"])
        job = state["job"]
        if not entries or not callable(entries[0]):  # `callable` reads a slot: no code of the candidate's
            send(["abort", "entry_point", "NameError", f"no function {job['entry_point']!r} after loading the program"])
            _exit(0)
        hooks_seen.clear()
        state["ready"] = True
        send(["ready"])

    def _next_case():
        """Read the next request and make its call (the test file's module code for its shape),
        for C to run next, with the candidate's objects the jail let go of dropped from C after.
        A step the test file's module code makes, after the reply and the wait."""
        request = next_request()
        if request is None or request[0] != "call":
            _exit(0)
        _, call_id, args, kwargs = request
        current_call[0] = call_id
        state["reset"]()
        # No `exec` (an audited event) per call; run with the depth of its frames only (`unstacked`).
        # The entry point is handed from the load to the test module at the first call, and read
        # from the test module's namespace after (from C): only the program's and the test
        # module's namespaces hold it then, as when a test file imports it.
        steps, functions = state["make_call"](entries.pop if entries else None, tuple(_decode(args)), _decode(kwargs))
        upcoming.append(_partial(_deque, map(call, (*map(_unstacked, steps), _unstacked(functions), dropped.clear)), 0))

    def _report():
        """The load's outcome (abort, or "ready") at the first step, and the reply to the call just
        made at every other. A step the test file's module code makes."""
        return _reply() if "ready" in state else _loaded()

    def _reply():
        """Send the reply to the call just made, then check the seal."""
        call_id = current_call[0]
        kept.extend(outcome)
        kept.extend(hooks_seen)
        if len(outcome) == 2 and outcome[0] is True:
            answer = ["return", call_id, state["encode"](outcome[1])]
        elif len(outcome) == 3 and outcome[0] is False:
            answer = ["raised", call_id, *raised(outcome[1], outcome[2])]
        else:
            answer = ["raised", call_id, "SystemError", "the call did not finish"]
        hook = hooks_seen[-1] if hooks_seen else None
        hooks_seen.clear()  # `sys` still holds it: not its last reference
        if hook is not state["excepthook"]:
            state["audit"]("sandbox.hook_patch", "sys.excepthook replaced")
            dropped.append(state["excepthook"])
            state["excepthook"] = hook
        current_call[0] = None
        state["seal"](state["seal_event"])
        send(answer)

    # The jail's own code once candidate code exists runs with no signal handler of the
    # candidate's inside it (`_gate.shielded`: CPython runs a handler on the main thread whichever
    # thread took the signal, and would hand it the jail's frame): those due run before, in no frame.
    set_up = guarded(_set_up)
    # The steps the test file's module code makes between calls (`_caller`), as functions that
    # hold nothing of the jail's (`_gate.opaque`; named in the test module by `_CALLERS`).
    report_name, wait_name, next_name = _CALLERS[1 if variant else 0][5][:3]
    # Before each reply, `sys.excepthook` is read from C (`read_hook`, a step of its own with the
    # test file's frame below it): a key of the candidate's in `sys.__dict__` runs there.
    read_hook = functools.partial(next, map(hooks_seen.append, map(dict.get, itertools.repeat(sys_names), itertools.repeat("excepthook"))))
    # The outcome is emptied last, from C: what may be the candidate's last reference goes there.
    report = _gate.opaque((read_hook, _gate.shielded(guarded(_report)), kept.clear, outcome.clear), report_name)
    next_case = _gate.opaque((_gate.shielded(guarded(_next_case)),), next_name)
    wait = _gate.opaque((wait_for_request,), wait_name)
    upcoming: list[object] = []  # the next module code to run (the first steps, then each call's)


    # The load, with what it raises kept from C in a list of the jail's that nothing hands the
    # candidate, and that exception's text, read from C too (the candidate's `__str__` run with
    # no frame of the jail's below it): a text that raises leaves the exception read.
    # The marker is set by C right after the program, only if it finished (the chain goes on only
    # once `exec` returned): no frame of the sandbox's runs inside, below or after the program's own
    # (a line of Python, `<loaded>`, set it before, where a thread of the candidate's dumping every
    # thread's stack could catch it).
    finished = map(loaded_marker.append, load_ends)
    load = _gate.catching(
        functools.partial(collections.deque, itertools.chain(map(call, loading), finished), 0), load_errors
    )
    read_texts: functools.partial[collections.deque] = _partial(_deque, map(load_texts.append, map(_str, load_errors)), 0)
    # The entry point, looked up from C too: a key of the candidate's that equals its name (a str
    # subclass with its own `__eq__`) runs with no frame of the jail's below it.
    # The load's function is let go of then, and with it the jail's last hold on the namespace.
    found = map(entries.append, map(dict.get, map(operator.attrgetter("__globals__"), load_functions), entry_names))
    read_entry: functools.partial[collections.deque] = _partial(_deque, itertools.chain(found, map(call, (load_functions.clear, loading.clear))), 0)

    # The loop: each module code in turn, the first steps, then each call's; with headroom beyond
    # the candidate's recursion limit for its own C chains (`_gate.headroom`).
    loop: functools.partial[collections.deque] = functools.partial(collections.deque, map(call, iter(functools.partial(upcoming.pop, 0), None)), 0)
    # None of these fails into CPython's report of a failed after-fork callback, which hands the
    # callback to `sys.unraisablehook`, the candidate's by then: from the text reader it took the
    # jail's list of the load's errors apart (`__reduce__`) and made a crash a clean exit (red team
    # sandbox11 `u2`). What they raise is kept from C in a list nothing hands out; the jail's
    # outcome is then the load's, as read (`_loaded`), or its end (`_exit(70)`).
    failed: list[object] = []
    return [
        set_up,
        load,
        *(_gate.catching(callback, failed) for callback in (read_texts, read_entry, _gate.headroom(loop))),
        functools.partial(_exit, 70),
    ]


def run(*arguments, **options):
    """The jail's life on the current thread, for a jail forked without a bare thread (no PID
    namespace): the same callbacks, but with the fork server's and these frames below the
    candidate's (no `bare_stack`)."""
    for callback in life(*arguments, **options):
        try:
            callback()
        except BaseException as error:  # noqa: B036 (as CPython's after-fork callbacks: the next one runs)
            sys.unraisablehook(_UnraisableArgs(error))
    os._exit(70)


class _UnraisableArgs:
    """What `sys.unraisablehook` is handed (its `exc_value`), for `run`'s callbacks."""

    def __init__(self, error):
        self.exc_type, self.exc_value, self.exc_traceback, self.err_msg, self.object = type(error), error, None, None, None


# What makes each call, and the only frame below the candidate's during one: the module code of
# a test file written beside the program, run per call as a function of that code (called from
# C; no `exec`, which would raise an audit event per call) in the namespace of a module of that
# name in `sys.modules` with the real builtins: a `<module>` frame of a file on disk with nothing
# below it (where a runner that imports a test file has the import system's frames and its own
# `__main__` frame below: red team sandbox17 `f2`, open). The file is written once, before the
# program runs, with a block per call the test will make; each call's code is compiled from the
# block of the call made, a test file's literal call of its arguments (`candidate([1, 2, 3],
# key='x')`, `_testfile`), so the arguments are built and handed over as a literal call builds and hands them
# (red team sandbox6 `t2`: through `*args` the tuple held them too, and `sys.getrefcount` of an
# argument read 3, not 2), and the only name the call looks up is the entry point's. The hidden
# run and the variant's differ in the file, its module's name and the depth, so a function
# conditioned on the shape of the stack above it answers differently in the two.
#
# The module code also makes the jail's steps after the call, so that they run from that frame,
# as a test runner's own code would between two calls: the reply, the wait for the next call and
# reading it (a signal handler run then is handed that frame, where it was handed none while the
# jail's C chains ran them). The steps are `_gate.opaque` functions: nothing of the jail's is
# reachable from them. They, the two functions that record the outcome (`_gate.recorders`) and the
# class the `except` catches are constants of the compiled code (`_testfile.bound`), looked up by
# no name: the source names them, the code does not (red team sandbox16 `g1`, `g2`: a `globals` or a step's name the candidate put in
# `builtins` or in the caller's namespace was called where a test file's literal call calls
# nothing). Before the first call the same steps (the first reply is the load's "ready") run from
# the file's first content, `_CALLER_TAIL` alone.
_CALLERS = (
    ("test_main.py", "test_main", "candidate", "", "{call}", ("report", "wait", "next_case", "record", "fail")),
    ("test_solution.py", "test_solution", "solution", "def test_solution(): return {call}\n", "test_solution()",
     ("send_result", "await_input", "load_case", "save_result", "record_failure")),
)
_CALL_LINES = 10_000  # the file holds at most this many lines of calls (and the compiler reads those above a call)
_CALLER_TAIL = "{report}(); {wait}(); {next}()\n"
_CALLER_BLOCK = "{prelude}try: {record}({result})\nexcept BaseException: {fail}()\n" + _CALLER_TAIL


def _caller(workdir, variant, outcome, steps, planned):
    """(module, make, first): the test module; `make(take_entry, args, kwargs)`, the call to make
    (the steps that set it up and hand its function over, and the list they hand it in): the test
    file's module code for the call (compiled from its block, at the block's lines), as a function
    whose globals are the test module's namespace, holding the entry point; and `first`, that
    function, holding the steps alone, run before the first call. `steps`: the reply, the wait and
    the next call; with the two functions that record a call's outcome in `outcome`
    (`_gate.recorders`), named as `_CALLERS` says. `planned`: the (args, kwargs) of the calls the
    test will make, as far as the parent knows them (the canonical solution's run), which the
    file is written with, here, once. Made before any candidate code (everything `make` uses is
    bound here); `make` runs between calls."""
    relative, module_name, entry_name, prelude, result, step_names = _CALLERS[1 if variant else 0]
    path = os.path.join(workdir, relative)
    # As the import system makes a module of a file (its loader, its spec, `__cached__`, the names in
    # that order, then `__builtins__` as `exec` adds it): a bare module with a `__file__` but no
    # loader and no spec is no imported module's (red team sandbox14 `t3`).
    bootstrap, external = sys.modules["_frozen_importlib"], sys.modules["_frozen_importlib_external"]
    spec = external.spec_from_file_location(module_name, path)
    spec._initializing = True  # as while the import runs the module's code, which makes the calls (sandbox15 `t1`)
    module = bootstrap.module_from_spec(spec)
    namespace = module.__dict__
    namespace["__builtins__"] = builtins.__dict__
    names_of = dict(zip(("report", "wait", "next", "record", "fail"), step_names))
    objects = dict(zip(step_names, (*steps, *_gate.recorders(outcome, *step_names[3:]))), BaseException=BaseException)
    _compile, _bound, _call_source, _min = compile, _testfile.bound, _testfile.call_source, min
    calls = [0]  # made so far
    block_lines = _CALLER_BLOCK.count("\n") + prelude.count("\n")

    def block_for(call):
        return _CALLER_BLOCK.format(prelude=prelude.format(call=call), result=result.format(call=call), **names_of)

    def code_for(args, kwargs):
        """The call's code: its block compiled at the lines the n-th block takes in the file
        (the file is never rewritten: red team sandbox17 `f1`, its bytes changed between calls
        while it was rewritten per call), so each call comes from a line of its own, as in a test
        file, its code still starting at line 1, as a module's does (red team sandbox14 `t4`:
        every call came from the same line). A call whose literals would make more constants than
        `bound` has room for (hundreds of distinct nested ones) passes its arguments as
        constants of the code instead, as a test file passes values it named."""
        above = "\n" * (1 + _min(calls[0], _CALL_LINES // block_lines) * block_lines)
        calls[0] += 1
        try:
            return _bound(_compile(above + block_for(_call_source(entry_name, args, kwargs)), path, "exec"), objects)
        except ValueError:
            marks = tuple("\x00a" + str(index) for index in range(len(args)))
            named = {name: "\x00k" + name for name in kwargs}
            placeholders = dict(zip(marks, args))
            placeholders.update((named[name], value) for name, value in kwargs.items())
            return _bound(_compile(above + block_for(_call_source(entry_name, marks, named)), path, "exec"), objects, placeholders)

    first_source = _CALLER_TAIL.format(**names_of)
    # The test file, written once, before the program runs, and never again: the first steps, then
    # a block per planned call, as a test file holds its calls. Written from bytes encoded here (no
    # text layer, whose opening looks its codec up in the registry the candidate can fill: red team
    # sandbox15 `k1`, `k2`). A call past the plan comes from lines the file does not hold.
    text = first_source + "".join(block_for(_call_source(entry_name, *call)) for call in planned[:_CALL_LINES // block_lines])
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    with open(fd, "wb") as test_file:
        test_file.write(text.encode("utf-8", "surrogatepass"))
    # The one function every call's code runs as: made here, before any candidate code, where its
    # making looks `__name__` and `__builtins__` up in the namespace; each call's code is then set
    # on it (`__code__`), which looks nothing up (red team sandbox15 `k3`, `k4`: a function made per
    # call shape looked them up there, where a key of the candidate's with its own `__eq__` ran).
    first = types.FunctionType(_bound(_compile(first_source, path, "exec"), objects), namespace)
    code_of = types.FunctionType.__dict__["__code__"].__set__
    _call, _partial, _deque = operator.methodcaller("__call__"), functools.partial, collections.deque

    def make(take_entry, args, kwargs):
        """The call's module code set on the function, and what hands the function over: at the
        first call, the entry point, which `take_entry` gives, is put in the namespace from C right
        before it runs (`refill`), since what the candidate left in it (a value with a `__del__`, a
        key with an `__eq__`) would run in the jail's frame were it replaced here (red team
        sandbox11 `f1`, `f2`: a `__del__` run in `make` took the jail's state). Nothing else of the
        namespace changes between calls, as a test module's globals do not (red team sandbox14
        `t1`); the entry point is then what it holds under its name, which the candidate may
        rebind as it may in a plain run. The function is handed over in a list `_gate.unstacked`
        takes it out of to call it."""
        code_of(first, code_for(args, kwargs))  # the code it runs now holds its own reference
        functions: list[object] = []
        hand_over = _partial(functions.append, first)
        if take_entry is None:
            return (hand_over,), functions
        fresh: dict[str, object] = {}
        fill: tuple[Any, ...] = (_partial(_deque, map(fresh.__setitem__, (entry_name,), map(_call, (take_entry,))), 0), _partial(namespace.update, fresh), fresh.clear)
        return (_partial(_deque, map(_call, fill), 0), hand_over), functions

    return module, make, first


_exit_code = SystemExit.__dict__["code"].__get__  # the slot itself: a subclass's property never runs


def _clean_exit(error):
    """`error` is a SystemExit that `python main.py` would end with status 0: code None, 0 or
    False (unittest.main()'s `sys.exit(not successful)`), of exact types."""
    if not issubclass(type(error), SystemExit):  # by its type: a `__class__` of its own never runs
        return False
    code = _exit_code(error)
    return code is None or ((type(code) is int or type(code) is bool) and code == 0)  # `in` would run a metaclass's `__eq__`


_SANDBOX_MODULES = ("_jail", "_cgroup", "_gate", "_hook", "_kernel", "_subclasses", "_landlock", "_root", "_seccomp", "_testfile", "_wire", "socket",
                    "_socket", "select", "selectors", "fcntl", "resource")


def _look_ordinary(main_path, start=None):
    """The candidate's module, with `sys` made to look like `python main.py`'s: the
    module is `__main__` with a `__file__`, the fork server's argv and path entry are gone, its
    frozen objects are back in the collector, and, given `start` (what a plain `python3` holds
    when its program starts, measured by the fork server before its own imports: `_zygote.START`,
    module names, class ids, `path_importer_cache` entries but the program's own, `re`'s cached
    patterns), `sys.modules` holds exactly those modules, `type.__subclasses__()` finds exactly
    those classes (`_subclasses.hide`), `sys.path_importer_cache` holds those entries and the
    program's, and `re`'s cache those patterns;
    without it, the sandbox's own modules are dropped. Every object the jail itself uses was bound
    before this, so dropping the modules from `sys.modules` removes nothing it needs; a candidate
    that imports one of them gets a fresh copy, with classes of its own."""
    import importlib.machinery

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [entry for entry in sys.path if entry and os.path.abspath(entry) != here]
    sys.path.insert(0, os.path.dirname(main_path))
    for name in _SANDBOX_MODULES:
        sys.modules.pop(name, None)
    # Its names in the order `python3 main.py` has them (red team sandbox14 `t5`: another order,
    # read by `list(globals())` at load, told the jail from any plain run).
    module = types.ModuleType("__main__")
    module.__dict__.update(
        __loader__=importlib.machinery.SourceFileLoader("__main__", main_path), __annotations__={}, __builtins__=builtins,
        __file__=main_path, __cached__=None,
    )
    sys.modules["__main__"] = module
    sys.argv[:] = ["main.py"]
    sys.orig_argv[:] = ["python3", "main.py"]
    cache = sys.path_importer_cache
    for entry in [entry for entry in cache if entry == here or (start is not None and entry not in start[2])]:
        del cache[entry]
    if start is not None:
        cache[main_path] = None  # as `python3 main.py` leaves it: no finder for a file
    gc.unfreeze()
    if start is not None:
        modules, classes, _, patterns = start
        for name in [name for name in sys.modules if name not in modules]:
            del sys.modules[name]
        _subclasses.hide(classes)
        cached = getattr(sys.modules.get("re"), "_cache", None)
        if type(cached) is dict:
            for key in [key for key in cached if key not in patterns]:
                del cached[key]
    return module
