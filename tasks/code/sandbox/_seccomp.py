"""The jail's system-call filter (untrusted side, the standard library and `_kernel`), built with
libseccomp.

Installed last, after every other measure, so nothing of the jail's own setup needs what it
denies. It holds even if the candidate gets past the audit hook, and every refusal is fatal: the
kernel kills the whole jail with SIGSYS, which the trusted parent records as a `kernel_refusal`
event that nothing in the jail can erase (a refusal by error code would leave no record). Denied:
a new process (fork, vfork, clone without CLONE_THREAD), exec, ptrace and cross-process memory
access, pidfds, any signal to a process other than the jail itself (kill/tgkill/rt_sigqueueinfo to
a pid other than its own in its PID namespace; tkill), changing namespaces, mounts, root or
credentials, socket pairs of any other kind than `socketpair(AF_UNIX, SOCK_STREAM)` (its two ends
are connected to each other and to nothing else, and a stream socket cannot be connected again),
io_uring (its operations bypass this filter), BPF, perf, userfaultfd, keyrings, kernel modules and
the like. Refused with an error code instead (`_REFUSED`, `_FCNTL_REFUSED`), because the C
libraries of honest programs make some of them and carry on: `socket` (EACCES: nothing to reach, and
a Unix socket file outside the network namespace would otherwise still connect), and lock tests,
inotify, fanotify, dnotify, leases, mincore, fadvise, readahead, cachestat, sync, fallocate and
mq_open, which reach kernel objects shared with processes outside. Locks (`_LOCKS_DONE`,
`_FCNTL_DONE`) succeed without touching any, as a lone process's own.
clone3 answers ENOSYS, so the C library falls back to clone, whose flags a filter can read
(threads stay possible: clone with CLONE_THREAD is allowed; their number is capped by the jail's
pids cgroup, or its RLIMIT_NPROC where the cgroups do not apply, see `_jail.py`).
Signal handlers are the candidate's own business: installing one (`signal.signal`, readline,
pdb, asyncio, faulthandler's alternate stack) changes nothing outside the jail, and no limit
depends on the jail's cooperation: the cpu cgroup throttles it (or, without the cgroups, the CPU
limit's hard rlimit is a SIGKILL), the wall clock is the parent's SIGKILL, and a signal from
outside is refused by Landlock's scope and this filter.
The filter is compiled once per fork server, by libseccomp in a process of its own
(`python3 _seccomp.py`, which writes the BPF program to its stdout: `program()`), because libseccomp
is reached through ctypes and no jail may hold ctypes (docs/sandbox.md, "No native code in the
jail"). Each jail patches its own pid into the program (`Program.for_pid`) and loads it with the
`_kernel` module's `seccomp_filter`. `program()` returns None when libseccomp or the kernel's
seccomp is unavailable, and `install()` then returns False.
"""

import errno
import fcntl
import os
import struct
import sys

import _kernel

_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_CLONE_THREAD = 0x00010000
_CMP_NE, _CMP_EQ, _CMP_MASKED_EQ = 1, 4, 7

# Every call here kills the jail: honest Python never makes them (what would reach them from the
# standard library, such as subprocess or os.fork, the audit hook refuses first), so a call means
# the hook was bypassed, and a refusal the candidate could catch would leave no record.
_FATAL = (
    "fork", "vfork", "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "tkill",
    "pidfd_send_signal", "pidfd_getfd", "pidfd_open",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "mount_setattr",
    "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
    "open_by_handle_at", "name_to_handle_at", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "personality",
    "seccomp", "landlock_create_ruleset", "memfd_secret", "setuid", "setgid", "setreuid", "setregid", "setresuid",
    "setresgid", "setgroups", "setfsuid", "setfsgid", "capset",
    # Extended attributes: Landlock grants no right for them and the hook lists no call, so a write
    # would reach any file the uid may write, outside the jail too (red team sandbox2 `a_xattr`).
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
)
# Refused with an error, not fatal: an ordinary program may try them and carry on when they fail.
# Each would reach a kernel object that the jail shares with processes outside it, since the files it
# reads are the machine's own inodes (read-only binds): locks and change notifications on them are
# a channel between two jails that run at once and a window on what other processes open, and page
# residency (mincore) a timing-free view of what others read. fallocate reserves blocks that
# RLIMIT_FSIZE does not count (FALLOC_FL_KEEP_SIZE) on any file the jail can write, its stderr
# file on the machine's disk included (red team sandbox3 `a_twin_flock`, `a_inotify_spy`,
# `a_fallocate`); posix_fallocate(3) then writes the blocks itself, within the file-size limit.
# fadvise, readahead and cachestat read or change the machine's page cache of those files (red
# team sandbox4 `a_fadvise` dropped a library file's cached pages), sync and syncfs flush the whole
# machine's. `socket` too: C libraries an honest program uses try one and carry on without it
# (libuuid asks uuidd, glibc's NSS asks nscd: `uuid.uuid1()`, `pwd.getpwuid`, `tarfile`, red team
# sandbox4 `h_uuid1`, `h_pwd`, `h_tarfile`); the network namespace is empty and the root holds no
# socket file, so a socket could reach nothing, and Python's own sockets the audit hook refuses first.
# mq_open (ENOSYS, as on a kernel without POSIX message queues; nothing in the standard library
# uses them): their bytes count against RLIMIT_MSGQUEUE per uid, machine-wide, and with the cgroups
# two jails may share a uid (`_zygote.ordinary_uid`), so a queue would be a channel between them.
_REFUSED = (
    ("inotify_init", errno.EMFILE), ("inotify_init1", errno.EMFILE),
    ("fanotify_init", errno.EPERM), ("fallocate", errno.EOPNOTSUPP), ("mincore", errno.ENOSYS),
    ("fadvise64", errno.ENOSYS), ("readahead", errno.ENOSYS), ("cachestat", errno.ENOSYS),
    ("sync", errno.EPERM), ("syncfs", errno.EPERM), ("socket", errno.EACCES), ("mq_open", errno.ENOSYS),
)
# fcntl's lock tests, leases and dnotify: the same shared objects as inotify, by the command in
# its second argument.
_FCNTL_REFUSED = (fcntl.F_GETLK, fcntl.F_OFD_GETLK, fcntl.F_SETLEASE, fcntl.F_GETLEASE, fcntl.F_NOTIFY)
# A lock (`flock`, `fcntl.lockf`, SQLite's record locks, open-file-description ones) is taken or
# released with success and touches no kernel object. A lock on one of the machine's files would be
# in the table processes outside see (red team sandbox3 `a_twin_flock`: the variant jail found by
# a lock both took on a library file), so none is taken; answered as a lone process's lock is, which
# the jail is (it can start no process): classic record locks are the process's own and never
# conflict among its threads, so that answer is exact for them; `flock` and open-file-description
# locks conflict between two opens of one file, even in one process, which these do not (an open
# limitation: a program that excludes its own threads that way is not excluded, and a probe that
# locks one file through two opens sees both succeed). A request the kernel refuses (a descriptor
# not open, a write lock on a read-only one) never reaches the filter from Python: the gate answers
# the lock calls' events with the kernel's error (`_gate.c`, `lock_check`). Refused (ENOLCK), they failed `mailbox`'s
# lock and made SQLite on a file in the work dir wait out its busy timeout, past a run's deadline.
# The lock tests stay refused: their answer is written to the caller's memory, which a filter
# cannot do (SQLite's WAL mode, which tests one, fails: "disk I/O error").
_LOCKS_DONE = ("flock",)
_FCNTL_DONE = (fcntl.F_SETLK, fcntl.F_SETLKW, fcntl.F_OFD_SETLK, fcntl.F_OFD_SETLKW)
_AF_UNIX, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 1, 0xF  # socketpair's domain and type (flags above the mask)
_SELF_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: the target pid


def _errno(code):
    return 0x00050000 | (code & 0xFFFF)


# The program is compiled with this in place of the jail's pid (above any pid Linux gives, 2**22,
# and no syscall number, errno action or flag the rules name) and each jail writes its own there.
_PID_PLACEHOLDER = 0x3FFFFFF1
_INSTRUCTION = struct.Struct("=HBBI")  # struct sock_filter: code, jt, jf, k
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K: the comparisons of an argument with a constant


class Program:
    """The compiled filter and where the pid placeholder sits in it."""

    def __init__(self, code):
        self.code = bytes(code)
        self.pid_offsets = tuple(
            offset + 4  # the k field
            for offset in range(0, len(code), _INSTRUCTION.size)
            if _INSTRUCTION.unpack_from(code, offset)[0] == _JEQ_K and _INSTRUCTION.unpack_from(code, offset)[3] == _PID_PLACEHOLDER
        )

    def for_pid(self, own_pid):
        """The program with `own_pid` as the only target the jail's signals may have."""
        code = bytearray(self.code)
        for offset in self.pid_offsets:
            struct.pack_into("=I", code, offset, own_pid)
        return bytes(code)


def program():
    """The filter, compiled by libseccomp in a child process (`python3 -E -s -S _seccomp.py`); None
    when that fails (no libseccomp, no seccomp in the kernel) or the program has no pid check."""
    read, write = os.pipe()
    try:
        pid = os.posix_spawn(
            sys.executable, [sys.executable, "-E", "-s", "-S", os.path.abspath(__file__)], {},
            file_actions=[(os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_CLOSE, read)],
        )
    except OSError:
        os.close(read)
        return None
    finally:
        os.close(write)
    with os.fdopen(read, "rb") as pipe:
        code = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0 or not code or len(code) % _INSTRUCTION.size:
        return None
    compiled = Program(code)
    return compiled if compiled.pid_offsets else None


def install(compiled, own_pid):
    """Load `compiled` (a `Program`, or None) into this process (and threads it starts later),
    which is `own_pid` in its PID namespace; False when unavailable or refused."""
    return compiled is not None and _kernel.seccomp_filter(compiled.for_pid(own_pid)) == 0


def _compile():
    """The BPF program, by libseccomp through ctypes: run only in the process `program()` starts."""
    import ctypes
    import tempfile

    class ArgCmp(ctypes.Structure):
        _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]

    lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    context = lib.seccomp_init(_ALLOW)
    if not context:
        raise OSError("seccomp_init")

    def rule(action, syscall, *comparisons):
        number = lib.seccomp_syscall_resolve_name(syscall.encode())
        if number < 0:
            return True  # a system call this architecture does not have
        array = (ArgCmp * max(1, len(comparisons)))(*comparisons)
        return lib.seccomp_rule_add_array(context, action, number, len(comparisons), array) == 0

    try:
        rules = [rule(_KILL_PROCESS, name) for name in _FATAL]
        rules += [rule(_KILL_PROCESS, name, ArgCmp(0, _CMP_NE, _PID_PLACEHOLDER, 0)) for name in _SELF_ONLY]
        rules += [rule(_KILL_PROCESS, "clone", ArgCmp(0, _CMP_MASKED_EQ, _CLONE_THREAD, 0))]
        rules += [rule(_errno(errno.ENOSYS), "clone3")]
        rules += [rule(_errno(code), name) for name, code in _REFUSED]
        rules += [rule(_errno(errno.ENOLCK), "fcntl", ArgCmp(1, _CMP_EQ, command, 0)) for command in _FCNTL_REFUSED]
        # returning 0, doing nothing
        rules += [rule(_errno(0), name) for name in _LOCKS_DONE]
        rules += [rule(_errno(0), "fcntl", ArgCmp(1, _CMP_EQ, command, 0)) for command in _FCNTL_DONE]
        rules += [rule(_KILL_PROCESS, "socketpair", ArgCmp(0, _CMP_NE, _AF_UNIX, 0))]
        rules += [
            rule(_KILL_PROCESS, "socketpair", ArgCmp(1, _CMP_MASKED_EQ, _SOCK_TYPE_MASK, kind))
            for kind in range(_SOCK_TYPE_MASK + 1)
            if kind != _SOCK_STREAM
        ]
        if not all(rules):
            raise OSError("seccomp_rule_add_array")
        with tempfile.TemporaryFile() as exported:
            if lib.seccomp_export_bpf(context, exported.fileno()) != 0:
                raise OSError("seccomp_export_bpf")
            exported.seek(0)
            return exported.read()
    finally:
        lib.seccomp_release(context)


if __name__ == "__main__":
    sys.stdout.buffer.write(_compile())
