"""The fork server: a warm interpreter that forks one jail per run (`_jail.py`).

Started as a plain `python3 _zygote.py <control_fd>` by `forkserver.py` (one per trusted parent,
with a login's start-up environment, `forkserver.SERVER_ENVIRONMENT`), or as `python3 _zygote.py
--once <request_fd> <reply_fd> <stderr_fd> <variant> <memory> <pids> <stderr bytes>` by the exec launcher,
which forks a single jail, waits for it and exits with its status (128 + signal when killed).
It imports everything a jail needs, reads its policy from stdin (NUL-separated: the sandbox root,
then the readable paths) and builds the Landlock read ruleset once, kept as a descriptor that
every jail applies to itself. The server itself stays unconfined: it must be able to create PID
namespaces and let each jail mount its work dir.

Per run it takes three descriptors (the request pipe's read end, the reply pipe's write end, the
stderr file), enters a fresh PID namespace for its next child (unshare CLONE_NEWPID, then setns
back to its own, so every jail gets a namespace of its own), and forks. That child is the
namespace's init: it sets the namespace's next pid to one a login shell could have (drawn per
run), forks the jail's "shell", holds none of the run's descriptors, reaps it and exits with its
status (128 + signal when it was killed). The shell leads a session of its own and forks the jail
(its pid + 1, or + 2 in the differential run's variant) from a thread of `_kernel`'s with no
Python frame, whose after-fork callbacks are the jail's whole life (`_jail.life`: nothing of this
server's is on the jail's stack), so the jail sees a parent that is not
PID 1 and a session that parent leads, as `python3 main.py` typed at a prompt does. The
candidate is thus an ordinary process, not PID 1: the kernel's rules for an init (signals without
a handler dropped) do not apply to it, so the CPU limit's SIGXCPU kills it as anywhere else, and
killing the init kills everything in the namespace. Where the memory, pids and cpu cgroups apply
(`_cgroup.Layout.complete`), each jail gets a uid such as a login has (`ordinary_uid`: drawn per
run in 1000-29999, the variant's in 30000-59999, never one the machine's /etc/passwd or
/etc/group names, never one of this server's live runs): the cgroups bound its tasks, so per-uid
accounting no longer bounds it and two servers' jails that draw one uid do not interfere
(docs/sandbox.md, "Identity"). Without them each jail gets a uid of its own on the machine
(`jail_uid`: from the server's pid and its run number, in another range for the variant), since
RLIMIT_NPROC, which counts a uid's tasks machine-wide, is then its threads' only cap.

The init is made ahead of its run where it can be (`_Spare`): when the server has nothing else to
do, it forks the init of the next run of each shape asked for lately (variant or not, its cgroup
limits; at most `_MAX_SPARES` shapes), which makes its PID namespace, leads its session, enters
its cgroups (each move waits for the kernel's RCU grace period: 0.7 ms median, 4.3 ms mean
measured) and then waits, holding only a socket of its own and the ruleset, for the run's three
descriptors; a run of another shape, or one that finds no spare, forks its init when asked, as
before. Nothing of the jail is made ahead: the shell and the jail are forked once the run's
descriptors have come, so the jail's pid, uid and start are its run's alone.

The server never sees a run's content (the job travels on the request pipe to the jail), holds
only run ids and pids, and is a fresh interpreter (exec'd, not forked from the trusted parent), so
its memory holds no parent secret. Each jail gets the descriptors of an ordinary non-interactive
job (`producer | python3 main.py 2>err.log | consumer`) and, until its setup ends, the ruleset:
0 the request pipe's read end (its stdin), 1 the reply pipe's write end (its stdout: `_jail.py`
frames its records so that the candidate's own output cannot hide or change them), 2 the write
end of a stderr pipe, 3 the ruleset (closed before any candidate code). The shell holds the
stderr pipe's read end and copies it into the run's stderr file (`_drain`): at most the run's
`<stderr bytes>` (the file-size limit), then one truncation line, and the rest is read and
discarded, so neither the file nor the jail's wait on a full pipe grows with what it writes.
Without a PID namespace there is no shell: fd 2 is the stderr file itself (reopened write-only,
append), bounded by RLIMIT_FSIZE as before.

Protocol, one ASCII datagram per message (SOCK_SEQPACKET):
  parent -> server: "run <id> <variant> <memory bytes> <pids> <stderr bytes>" with 3 descriptors
                    | "kill <id>" (variant: 0 or 1; the two limits for the run's cgroups,
                    `_cgroup.py`; the most of its stderr the shell keeps, 0 for all)
  server -> parent: "started <id> <pid>" | "exited <id> <returncode>" | "failed <id> <reason>"
Single-threaded by design: fork is only safe without other threads. A jail's zombie pins its pid
until it is reaped, so a kill can never hit a reused pid. When the control socket closes (the
parent exited or shut us down), every jail is killed; a jail whose server dies is killed by its
parent-death signal.
"""

import sys

# What a plain `python3` holds when its program starts (what `site` and the .pth files it runs
# import), measured here, before this server imports anything, and what the jail shows its
# candidate (`_jail._look_ordinary`): the modules (`sys.modules` is cut back to exactly these),
# the classes (every other one is hidden from `type.__subclasses__()`: a tuple, so that none of
# them dies and leaves its id to another), and `sys.path_importer_cache`'s entries (this file's
# own, as the program's, becomes the program's).
START_MODULES = frozenset(sys.modules)


def _every_class():
    found, waiting = {id(object): object}, [object]
    while waiting:
        for subclass in type.__subclasses__(waiting.pop()):
            if id(subclass) not in found:
                found[id(subclass)] = subclass
                waiting.append(subclass)
    return tuple(found.values())


START_CLASSES = _every_class()
# The program's own entry (None: no finder for a file), here this file's, as it was run.
# And the patterns in `re`'s cache: the server's own (`_wire`'s) showed there too (sandbox8 `r1`).
START = (
    START_MODULES, frozenset(map(id, START_CLASSES)), frozenset(sys.path_importer_cache) - {__file__, sys.argv[0]},
    frozenset(sys.modules["re"]._cache) if "re" in sys.modules else frozenset(),
)
del _every_class

import _socket  # noqa: E402 (the C module: socket.py imports array, which registers array.array as a MutableSequence)
import fcntl  # noqa: E402 (after the measurement above)
import functools  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))



def _load_unfindable(names):
    """The sandbox's C modules, each loaded from a copy under a random name in a directory of this
    server's own, both removed at once. CPython keeps a single-phase extension's module by (path,
    name) and hands a copy to any `_imp.create_dynamic` of that path without opening the file (and
    with no audit event): a candidate that named the installed `_kernel`, `_gate` or `_subclasses`
    got the jail's own (sealed), where a plain run finds no file there (red team sandbox18 `k1`).
    A path of 128 random bits cannot be named (the server's pid beside them keeps two servers'
    directories apart where the draws repeat, as a test makes them)."""
    here = os.path.dirname(os.path.abspath(__file__))
    bootstrap, external = sys.modules["_frozen_importlib"], sys.modules["_frozen_importlib_external"]
    scratch = os.path.join(os.environ.get("TMPDIR") or "/tmp", "." + os.urandom(16).hex() + "-" + str(os.getpid()))
    os.mkdir(scratch, 0o700)
    try:
        for name in names:
            (original,) = [entry for entry in os.listdir(here) if entry.startswith(name + ".") and entry.endswith(".so")]
            copy = os.path.join(scratch, name + ".so")  # the directory's name is the random part
            source, target = os.open(os.path.join(here, original), os.O_RDONLY), os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o500)
            try:
                while os.sendfile(target, source, None, 1 << 24):
                    pass
            finally:
                os.close(source)
                os.close(target)
            try:
                sys.modules[name] = _imp.create_dynamic(bootstrap.ModuleSpec(name, external.ExtensionFileLoader(name, copy), origin=copy))
            finally:
                os.unlink(copy)
    finally:
        os.rmdir(scratch)


import _imp  # noqa: E402 (a plain python3 holds it at start)

_load_unfindable(("_gate", "_kernel", "_subclasses"))

# Only what the jail's own code needs is imported here (the point of the server). The jail cuts
# `sys.modules` back to START_MODULES, so a module the candidate imports that a plain python3 does
# not hold at start (hashlib, string, json) is a fresh import from disk whatever this server holds:
# warming it here would only make every fork and every exit of a jail dearer (hashlib alone maps
# libcrypto: 16 more mappings and 0.6 MiB more anonymous memory to copy per fork).
import _cgroup  # noqa: E402
import _jail  # noqa: E402
import _kernel  # noqa: E402
import _landlock  # noqa: E402
import _seccomp  # noqa: E402

_MAX_MESSAGE = 256
_THREAD_PID_OFFSET = 1000  # where the forking thread's own id goes, out of the way of the jail's pid
_SWEEP_RETRY_MS = 20  # a cgroup directory the kernel still holds busy is tried again after this
_MAX_SPARES = 4  # run shapes (variant, limits) kept a spare init for: the first run's and the variant's
_DESCRIPTORS = 3
_DRAIN_CHUNK = 1 << 16
_FD_CEILING = 1 << 20  # closerange uses close_range(2): the span costs nothing
_CLONE_NEWPID = 0x20000000
_PR_SET_PDEATHSIG = 1
_UID_BASE, _VARIANT_UID_BASE = 1 << 30, 1 << 29
_PID_SPAN, _RUN_SPAN = 1 << 22, 1 << 7  # Linux's largest pid_max; runs of one server alive at once


def jail_uid(server_pid, run, variant=False):
    """The uid of a server's `run`th jail, unique on the machine: it is derived from the server's
    own pid (no two live servers share one) and its run number, so per-uid kernel accounting
    (RLIMIT_NPROC counts a uid's threads machine-wide) is never shared with another server's jail.
    The first jail's uids lie in [2**30, 2**30 + 2**29), the variant's in [2**29, 2**30)."""
    return (_VARIANT_UID_BASE if variant else _UID_BASE) + (server_pid % _PID_SPAN) * _RUN_SPAN + run % _RUN_SPAN


# Where a machine's logins have theirs (Debian's UID_MIN to below its 60000 UID_MAX): the first
# run's half and the variant's, so a function right only for the first run's uids fails the variant.
ORDINARY_UIDS, VARIANT_UIDS = range(1000, 30000), range(30000, 60000)
_ID_FILES = ("/etc/passwd", "/etc/group")
_UID_DRAWS = 64


def named_ids(files=_ID_FILES):
    """Every uid and gid the machine's account files name (read once, at the server's start): a
    jail never takes one, so no real user's processes or files share its uid."""
    named: set[int] = set()
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                for line in file:
                    fields = line.split(":")
                    named.update(int(field) for field in fields[2:4] if field.isdigit())
        except OSError:
            continue
    return frozenset(named)


def ordinary_uid(taken, variant=False):
    """A uid such as a login has, drawn at random from the run's half (`ORDINARY_UIDS`,
    `VARIANT_UIDS`), not in `taken` (the named ids and this server's live runs' uids). Draws
    that hit a taken one are drawn again, `_UID_DRAWS` times at most, then the span is searched
    from the last draw, so it always ends; OSError when every one is taken (the run fails to start)."""
    span = VARIANT_UIDS if variant else ORDINARY_UIDS
    for _ in range(_UID_DRAWS):
        start = int.from_bytes(os.urandom(4), "little")
        if span[start % len(span)] not in taken:
            return span[start % len(span)]
    for step in range(len(span)):
        if span[(start + step) % len(span)] not in taken:
            return span[(start + step) % len(span)]
    raise OSError("no free uid")


# Compiled once, by libseccomp in a process of its own: no jail may hold ctypes (`_seccomp.program`).
_FILTER = _seccomp.program()


class _Forker:
    """What every run shares: the read ruleset, this process's own PID namespace, a run counter."""

    def __init__(self, policy):
        self.ruleset, self.readable = -1, ()
        if policy:
            root, *readable = policy.split("\0")
            self.ruleset, self.readable = _landlock.read_ruleset(readable, root), _landlock.prefixes(readable)
        self.plan = _jail.mount_plan(readable if policy else _default_readable(), bool(policy))
        try:
            self.own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.own_pid_namespace = -1
        self.runs = 0
        self.cgroups = _cgroup.Layout()
        self.named = named_ids()
        self.uids = {}  # run number -> uid, for the runs (and spares) alive now

    def _uid(self, variant, limits):
        """The run's uid: a login's (`ordinary_uid`) where its cgroups will bound its tasks, else
        one of its own on the machine (`jail_uid`)."""
        if self.cgroups.complete and all(limits):
            return ordinary_uid(self.named | set(self.uids.values()), variant)
        return jail_uid(os.getpid(), self.runs, variant)

    def release(self, run):
        """`run` has ended: its uid is free again, its cgroups are to be removed."""
        self.uids.pop(run, None)
        self.cgroups.release(run)

    def fork(self, fds, variant=False, memory_bytes=0, pids_max=0, stderr_bytes=0):
        """Fork a jail's init holding `fds` (requests, replies, stderr); its pid in this namespace.
        With `memory_bytes` and `pids_max`, the init and its jail run in cgroups of their own.
        `fds` may instead be a socket (`spare`): the init then waits for them there. The jail's
        shell keeps at most `stderr_bytes` of its stderr (0: all)."""
        self.runs += 1
        uid = self.uids[self.runs] = self._uid(variant, (memory_bytes, pids_max))
        in_pidns = self.own_pid_namespace >= 0 and _kernel.unshare(_CLONE_NEWPID) == 0
        try:
            pid = os.fork()
        except OSError:
            del self.uids[self.runs]  # no run holds it
            raise
        finally:
            if in_pidns:
                _kernel.setns(self.own_pid_namespace, _CLONE_NEWPID)  # the next child gets a new one
        if pid == 0:
            self._become_init(fds, uid, in_pidns, variant, (memory_bytes, pids_max), stderr_bytes)
        return pid

    def spare(self, variant, memory_bytes, pids_max, stderr_bytes=0):
        """Fork an init ahead of its run (`_Spare`): in its PID namespace and cgroups already, it
        waits for the run's three descriptors on a socket of its own."""
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        try:
            pid = self.fork(theirs, variant, memory_bytes, pids_max, stderr_bytes)
        finally:
            theirs.close()
        return _Spare(pid, self.runs, ours)

    def status(self, wait_status):
        """The jail's Popen-style status from its init's wait status (the init exits with 128 +
        signal for a jail killed by a signal); negative for a signal."""
        code = os.waitstatus_to_exitcode(wait_status)
        if self.own_pid_namespace >= 0 and 128 < code <= 128 + 64:
            return 128 - code
        return code

    def _become_init(self, fds, uid, in_pidns, variant, limits, stderr_bytes):
        """In the forked child, PID 1 of the new namespace: fork the jail, keep nothing of it but its
        pid, reap it, exit with its status. Without a PID namespace the child is the jail itself."""
        code = 70
        if not isinstance(fds, list):  # a spare: wait for the run, holding nothing of the server's
            _kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            _close_all_but(fds.fileno(), self.ruleset)
        if not in_pidns:
            self._become_jail(_descriptors(fds), uid, in_pidns)
        try:
            _kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            os.setsid()
            made = self.cgroups.enter(self.runs, *limits) if all(limits) else []
            fds = _descriptors(fds)
            _next_pids_from(_ordinary_pid())
            shell = os.fork()
            if shell == 0:
                self._become_shell(fds, uid, in_pidns, variant, stderr_bytes)
            os.closerange(0, _FD_CEILING)  # the control socket, the run's descriptors: none stay here
            _, status = os.waitpid(shell, 0)
            code = _signal_code(os.waitstatus_to_exitcode(status))
            if code < 0 and self.cgroups.killed(made):
                code = _cgroup.MEMORY_LIMIT_STATUS
            # It exits inside its cgroups: the server removes them once it has reported the exit.
        finally:
            os._exit(code if code >= 0 else 128 - code)

    def _become_shell(self, fds, uid, in_pidns, variant, stderr_bytes):
        """The jail's parent, as a login shell is a program's: it leads a session of its own, forks
        the jail from a thread with no Python frame (`_kernel.bare_fork`, which waits for it; in
        the variant with the namespace's next pid moved one further, so the jail's pid is the
        shell's plus two there, not one) with a fresh pipe as its stderr, copies that
        pipe into the run's stderr file until the jail's end closes (`_drain`), reaps the jail and
        exits with its status (128 + signal when it was killed)."""
        code = 70
        try:
            os.setsid()
            jail_pid = os.getpid() + (2 if variant else 1)
            if variant and not _next_pids_from(jail_pid - 1):
                spacer = os.fork()  # no PID namespace of its own to set: a short-lived child takes the pid
                if spacer == 0:
                    os._exit(0)
                os.waitpid(spacer, 0)
            reader, writer = os.pipe()
            for callback in self._jail_life(fds, uid, in_pidns, variant, writer):
                os.register_at_fork(after_in_child=callback)
            # Forked by a thread of `_kernel`'s with no Python frame, which waits for it (the
            # jail's stack then holds nothing of this server's: docs/sandbox.md, "The stack"); its
            # own id goes out of the jail's way first.
            _kernel.bare_fork(jail_pid + _THREAD_PID_OFFSET, jail_pid)
            _close_all_but(reader, fds[2])  # the channel's ends, the ruleset: only the jail holds them
            _drain(reader, fds[2], stderr_bytes)
            code = os.waitstatus_to_exitcode(_kernel.bare_wait())
        finally:
            os._exit(code if code >= 0 else 128 - code)

    def _jail_life(self, fds, uid, in_pidns, variant, stderr_pipe):
        """The jail's life as after-fork callbacks (`_kernel.bare_fork`): its descriptors, then
        `_jail.life`'s."""
        arguments = (0, 1, 3 if self.ruleset >= 0 else -1, self.readable, self.plan, uid, in_pidns, START, _FILTER)
        return [functools.partial(self._jail_descriptors, fds, in_pidns, stderr_pipe), *_jail.life(*arguments, variant=variant)]

    def _become_jail(self, fds, uid, in_pidns):
        """The jail without a PID namespace (no shell: this process is the jail, its stderr the
        stderr file reopened write-only), on this thread."""
        try:
            self._jail_descriptors(fds, in_pidns)
            _jail.run(0, 1, 3 if self.ruleset >= 0 else -1, self.readable, self.plan, uid, in_pidns, START, _FILTER)
        finally:
            os._exit(70)  # run always ends in os._exit; reaching this line means it raised

    def _jail_descriptors(self, fds, in_pidns, stderr_pipe=-1):
        """In the jail: 0 requests, 1 replies, 2 `stderr_pipe` (without a shell, the stderr file
        reopened write-only), 3 the ruleset, nothing else open."""
        try:
            _kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # set again after the uid changes
            if in_pidns:
                os.setpgid(0, 0)  # a group of its own in the init's session, as a shell's job
            else:
                os.setsid()
            if stderr_pipe < 0:
                stderr_pipe = os.open(f"/proc/self/fd/{fds[2]}", os.O_WRONLY | os.O_APPEND)  # no reading it back
            sources = [fds[0], fds[1], stderr_pipe] + ([self.ruleset] if self.ruleset >= 0 else [])
            # Move everything above the targets first, so that the dup2s cannot overwrite one another.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in sources]
            for target, fd in enumerate(high):
                os.dup2(fd, target)
            os.closerange(len(sources), _FD_CEILING)  # control socket, sibling pidfds, the copies above
        except BaseException:  # noqa: B036 (the jail cannot start: nothing of it may run)
            os._exit(70)


_NS_LAST_PID = "/proc/sys/kernel/ns_last_pid"
_PID_FLOOR, _PID_RANGE = 1000, 30000  # where a desktop's or a server's shells have theirs


def _ordinary_pid():
    """A pid such as a login shell has: drawn afresh for every run, so no two runs (the hidden one
    and its variant among them) show the same."""
    return _PID_FLOOR + int.from_bytes(os.urandom(4), "little") % _PID_RANGE


def _next_pids_from(pid):
    """In the init of a fresh PID namespace: its next child gets `pid` + 1 (the namespace's own
    `ns_last_pid`, which root may set); the jail then is not PID 2 below a PID 1 parent. Without
    the right (no PID namespace, no root) the pids stay the kernel's: False then."""
    try:
        with open(_NS_LAST_PID, "w") as last:
            last.write(str(pid))
    except OSError:
        return False
    return True


_TRUNCATED = "\n[stderr truncated here: the program wrote more than {} bytes to it; the rest was discarded]\n"


def _drain(reader, stderr_file, cap):
    """In the shell: copy the jail's stderr pipe (`reader`) into the run's stderr file until every
    writer has closed it, at most `cap` bytes (0: all), then one truncation line; past the cap
    everything is read and discarded, so the jail never waits on a full pipe and the file never
    grows past the cap, however much it writes. A write to the file that fails drops that chunk."""
    kept, truncated = 0, False
    while True:
        chunk = os.read(reader, _DRAIN_CHUNK)
        if not chunk:
            return
        if truncated:
            continue
        if cap and kept + len(chunk) > cap:
            chunk, truncated = chunk[: cap - kept], True
            chunk += _TRUNCATED.format(cap).encode()
        kept += len(chunk)
        view = memoryview(chunk)
        try:
            while view:
                view = view[os.write(stderr_file, view):]
        except OSError:
            pass


def _descriptors(fds):
    """The run's three descriptors: `fds` itself, or what the server sends a spare init on its
    socket (it exits when the socket closes first: the server has gone)."""
    if isinstance(fds, list):
        return fds
    _, ancillary, _, _ = fds.recvmsg(16, _socket.CMSG_SPACE(_DESCRIPTORS * 4))
    received: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            received.extend(int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, len(data) - len(data) % 4, 4))
    fds.close()
    if len(received) != _DESCRIPTORS:
        os._exit(70)
    return received


def _close_all_but(*keep):
    """Close every descriptor but `keep` (-1 entries ignored)."""
    low = 0
    for fd in sorted(fd for fd in set(keep) if fd >= 0):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, _FD_CEILING)


class _Spare:
    """An init forked ahead of its run: its pid, run number and the socket its descriptors go to."""

    def __init__(self, pid, run, socket_):
        self.pid, self.run, self.socket = pid, run, socket_
        self.pidfd = os.pidfd_open(pid)

    def hand(self, fds):
        """Give the init its run's descriptors; False when it is gone."""
        try:
            # The descriptors as C ints, without `array`: importing it registered `array.array` as a
            # MutableSequence, which the jail's `abc` showed (red team sandbox8 `a1`; hence `_socket`).
            rights = b"".join(fd.to_bytes(4, sys.byteorder, signed=True) for fd in fds)
            self.socket.sendmsg([b"go"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
            return True
        except OSError:
            return False
        finally:
            self.socket.close()


def _signal_code(code):
    """A Popen-style code from a child's status that passes on its own child's (128 + signal)."""
    return 128 - code if 128 < code <= 128 + 64 else code


def _default_readable():
    """Without a policy the jail reads what its uid may; it still needs the standard library."""
    import sysconfig

    return [sysconfig.get_paths()["stdlib"]]


def _kill(pid):
    """The jail, which takes its whole PID namespace with it, and its session when it has none."""
    for kill, target in ((os.kill, pid), (os.killpg, pid)):
        try:
            kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class _Server:
    """The control loop: fork on "run", kill on "kill", reap and report each jail's exit."""

    def __init__(self, control_fd, forker):
        self.control = _socket.socket(fileno=control_fd)
        self.forker = forker
        self.children = {}  # pidfd -> (run id, pid, run number)
        self.spares = {}  # (variant, memory bytes, pids, stderr bytes) -> _Spare: an init ready for the next such run
        self.wanted = {}  # the run shapes asked for lately, oldest first: each gets a spare when idle
        self.poller = select.poll()
        self.poller.register(self.control, select.POLLIN)

    def serve(self):
        try:
            retry = 0  # ms to wait before sweeping again: 0 at once, more while the kernel holds one busy
            while True:
                idle_work = self.forker.cgroups.pending or len(self.spares) < len(self.wanted)
                ready = self.poller.poll(retry if idle_work else None)
                if not ready:
                    # Nothing asked of it: make the spares missing, then remove what runs left.
                    if not self._replenish():
                        retry = _SWEEP_RETRY_MS if self.forker.cgroups.sweep() else 0
                for fd, _ in ready:
                    if fd in self.children:
                        self._reap(fd)
                    elif fd != self.control.fileno():
                        self._reap_spare(fd)
                    elif not self._handle():
                        return
        except OSError:
            return  # the parent has gone: nothing left to report to
        finally:
            for _, pid, _ in self.children.values():
                _kill(pid)
            for spare in self.spares.values():
                _kill(spare.pid)
                os.waitpid(spare.pid, 0)
            self.forker.cgroups.remove()

    def _replenish(self):
        """Fork one missing spare init (`_Forker.spare`); False when none is missing. Its PID
        namespace and cgroups are made now, off the path of the run that will use it."""
        for key in self.wanted:
            if key not in self.spares:
                sys.stdout.flush()
                sys.stderr.flush()
                try:
                    spare = self.forker.spare(*key)
                except OSError:
                    del self.wanted[key]  # cannot be made ahead: such runs fork their init when asked
                    return True
                self.spares[key] = spare
                self.poller.register(spare.pidfd, select.POLLIN)  # reaped should it die unused
                return True
        return False

    def _reap_spare(self, pidfd):
        """A spare init that died before its run (killed from outside): reap it and forget it."""
        for key, spare in list(self.spares.items()):
            if spare.pidfd == pidfd:
                del self.spares[key]
                self._forget_spare(spare)

    def _forget_spare(self, spare):
        self.poller.unregister(spare.pidfd)
        _kill(spare.pid)
        os.waitpid(spare.pid, 0)
        os.close(spare.pidfd)
        spare.socket.close()
        self.forker.release(spare.run)

    def _handle(self):
        """One control message; False when the parent closed the socket."""
        message, ancillary, _, _ = self.control.recvmsg(_MAX_MESSAGE, _socket.CMSG_SPACE(_DESCRIPTORS * 4))
        fds: list[int] = []
        for level, kind, data in ancillary:
            if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
                fds.extend(int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, len(data) - len(data) % 4, 4))
        if not message:
            return False
        verb, job_id, *rest = message.decode("ascii").split()
        if verb == "run" and len(fds) == _DESCRIPTORS:
            self._fork(job_id, fds, rest)
        elif verb == "run":
            self.control.send(f"failed {job_id} expected-{_DESCRIPTORS}-descriptors".encode())
        elif verb == "kill":
            for running, pid, _ in self.children.values():
                if running == job_id:
                    _kill(pid)
        for fd in fds:
            os.close(fd)
        return True

    def _fork(self, job_id, fds, options):
        """`options`: the variant flag, the memory limit in bytes, the pids limit and the stderr cap (as text).
        The run's init is the spare made for runs of its shape, else one forked now."""
        key = _options(options)
        self.wanted.pop(key, None)
        self.wanted[key] = True
        while len(self.wanted) > _MAX_SPARES:
            oldest = next(iter(self.wanted))
            del self.wanted[oldest]
            if oldest in self.spares:
                self._forget_spare(self.spares.pop(oldest))
        spare = self.spares.pop(key, None)
        if spare is not None and spare.hand(fds):
            pid, pidfd, run = spare.pid, spare.pidfd, spare.run  # its pidfd is registered already
        else:
            if spare is not None:
                self._forget_spare(spare)  # it died unused
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                pid = self.forker.fork(list(fds), *key)
            except OSError as error:
                self.control.send(f"failed {job_id} {type(error).__name__}".encode())
                return
            pidfd, run = os.pidfd_open(pid), self.forker.runs
            self.poller.register(pidfd, select.POLLIN)
        self.children[pidfd] = (job_id, pid, run)
        self.control.send(f"started {job_id} {pid}".encode())

    def _reap(self, pidfd):
        job_id, pid, run = self.children.pop(pidfd)
        self.poller.unregister(pidfd)
        _kill(pid)  # whatever is left in its namespace or session dies too; the zombie pins the pid
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        self.control.send(f"exited {job_id} {self.forker.status(status)}".encode())
        self.forker.release(run)  # removed by `sweep` when there is nothing else to do


def _options(words):
    """(variant, memory bytes, pids limit, stderr bytes) from "<variant> <memory bytes> <pids limit>
    <stderr bytes>"."""
    numbers = [int(word) if word.isdigit() else 0 for word in (words + ["0", "0", "0", "0"])[:4]]
    return numbers[0] == 1, numbers[1], numbers[2], numbers[3]


def _once(forker, fds, options):
    """The exec launcher's mode: one jail, then exit with its status. It dies with the thread
    that started it (which waits for it), and its jail dies with it, so a trusted parent killed
    mid-run leaves nothing behind."""
    _kernel.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:
        os._exit(70)  # the parent is already gone
    pid = forker.fork(fds, *_options(options))
    for fd in fds:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    _kill(pid)
    code = forker.status(status)
    forker.cgroups.remove()
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    forker = _Forker(sys.stdin.buffer.read().decode())
    # Everything imported so far is shared with every jail copy-on-write; frozen, the jails' own
    # collections never walk (and so never copy) those pages.
    gc.freeze()
    if sys.argv[1] == "--once":
        _once(forker, [int(fd) for fd in sys.argv[2:5]], sys.argv[5:9])
    _Server(int(sys.argv[1]), forker).serve()
