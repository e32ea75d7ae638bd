"""The jail's system-call filter (untrusted side, standard library only), built with libseccomp.

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
a Unix socket file outside the network namespace would otherwise still connect), and file locks,
inotify, fanotify, dnotify, leases, mincore, fadvise, readahead, cachestat, sync, fallocate and
mq_open, which reach kernel objects shared with processes outside.
clone3 answers ENOSYS, so the C library falls back to clone, whose flags a filter can read
(threads stay possible: clone with CLONE_THREAD is allowed; their number is capped by the jail's
pids cgroup, or its RLIMIT_NPROC where the cgroups do not apply, see `_jail.py`).
Signal handlers are the candidate's own business: installing one (`signal.signal`, readline,
pdb, asyncio, faulthandler's alternate stack) changes nothing outside the jail, and no limit
depends on the jail's cooperation: the cpu cgroup throttles it (or, without the cgroups, the CPU
limit's hard rlimit is a SIGKILL), the wall clock is the parent's SIGKILL, and a signal from outside is refused by Landlock's scope and this filter.
`install()` returns False when libseccomp or the kernel's seccomp is unavailable.
"""

import ctypes
import errno
import fcntl

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
    ("flock", errno.ENOLCK), ("inotify_init", errno.EMFILE), ("inotify_init1", errno.EMFILE),
    ("fanotify_init", errno.EPERM), ("fallocate", errno.EOPNOTSUPP), ("mincore", errno.ENOSYS),
    ("fadvise64", errno.ENOSYS), ("readahead", errno.ENOSYS), ("cachestat", errno.ENOSYS),
    ("sync", errno.EPERM), ("syncfs", errno.EPERM), ("socket", errno.EACCES), ("mq_open", errno.ENOSYS),
)
# fcntl's record locks (classic and open-file-description ones, testing one included), leases and
# dnotify: the same shared objects as flock and inotify, by the command in its second argument.
_FCNTL_REFUSED = (
    fcntl.F_GETLK, fcntl.F_SETLK, fcntl.F_SETLKW, fcntl.F_OFD_GETLK, fcntl.F_OFD_SETLK, fcntl.F_OFD_SETLKW,
    fcntl.F_SETLEASE, fcntl.F_GETLEASE, fcntl.F_NOTIFY,
)
_AF_UNIX, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 1, 0xF  # socketpair's domain and type (flags above the mask)
_SELF_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: the target pid


def _errno(code):
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


_library: list = []  # the loaded library, or None once it was found missing


def library():
    """libseccomp, loaded once (the fork server loads it before any fork); None when absent."""
    if not _library:
        try:
            _library.append(ctypes.CDLL("libseccomp.so.2", use_errno=True))
        except OSError:
            _library.append(None)
    return _library[0]


def install(own_pid):
    """Load the filter into this process (and threads it starts later), which is `own_pid` in
    its PID namespace (the only target its signals may have); False when unavailable."""
    lib = library()
    if lib is None:
        return False
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    context = lib.seccomp_init(_ALLOW)
    if not context:
        return False

    def rule(action, syscall, *comparisons):
        number = lib.seccomp_syscall_resolve_name(syscall.encode())
        if number < 0:
            return True  # a system call this architecture does not have
        array = (_ArgCmp * max(1, len(comparisons)))(*comparisons)
        return lib.seccomp_rule_add_array(context, action, number, len(comparisons), array) == 0

    try:
        rules = [rule(_KILL_PROCESS, name) for name in _FATAL]
        rules += [rule(_KILL_PROCESS, name, _ArgCmp(0, _CMP_NE, own_pid, 0)) for name in _SELF_ONLY]
        rules += [rule(_KILL_PROCESS, "clone", _ArgCmp(0, _CMP_MASKED_EQ, _CLONE_THREAD, 0))]
        rules += [rule(_errno(errno.ENOSYS), "clone3")]
        rules += [rule(_errno(code), name) for name, code in _REFUSED]
        rules += [rule(_errno(errno.ENOLCK), "fcntl", _ArgCmp(1, _CMP_EQ, command, 0)) for command in _FCNTL_REFUSED]
        rules += [rule(_KILL_PROCESS, "socketpair", _ArgCmp(0, _CMP_NE, _AF_UNIX, 0))]
        rules += [
            rule(_KILL_PROCESS, "socketpair", _ArgCmp(1, _CMP_MASKED_EQ, _SOCK_TYPE_MASK, kind))
            for kind in range(_SOCK_TYPE_MASK + 1)
            if kind != _SOCK_STREAM
        ]
        return all(rules) and lib.seccomp_load(context) == 0
    finally:
        lib.seccomp_release(context)
