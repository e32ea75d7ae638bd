"""The jail's system-call filter (untrusted side, standard library only), built with libseccomp.

Installed last, after every other measure, so nothing of the jail's own setup needs what it
denies. It holds even if the candidate gets past the audit hook, and every refusal is fatal: the
kernel kills the whole jail with SIGSYS, which the trusted parent records as a `kernel_refusal`
event that nothing in the jail can erase (a refusal by error code would leave no record). Denied:
a new process (fork, vfork, clone without CLONE_THREAD), exec, ptrace and cross-process memory
access, pidfds, any signal to a process other than the jail itself (kill/tgkill/rt_sigqueueinfo to
a pid other than its own in its PID namespace; tkill), changing namespaces, mounts, root or
credentials, sockets (a Unix socket file outside the network namespace would still connect; only
`socketpair(AF_UNIX, SOCK_STREAM)` is allowed: its two ends are connected to each other and to
nothing else, and a stream socket cannot be connected again), io_uring (its
operations bypass this filter), BPF, perf, userfaultfd, keyrings, kernel modules and the like.
clone3 answers ENOSYS, so the C library falls back to clone, whose flags a filter can read
(threads stay possible: clone with CLONE_THREAD is allowed; their number is capped by the jail's
RLIMIT_NPROC, see `_jail.py`).
Signal handlers are the candidate's own business: installing one (`signal.signal`, readline,
pdb, asyncio, faulthandler's alternate stack) changes nothing outside the jail, and no limit
depends on the jail's cooperation: the CPU limit's hard rlimit is a SIGKILL, the wall clock is
the parent's SIGKILL, and a signal from outside is refused by Landlock's scope and this filter.
`install()` returns False when libseccomp or the kernel's seccomp is unavailable.
"""

import ctypes
import errno

_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_CLONE_THREAD = 0x00010000
_CMP_NE, _CMP_MASKED_EQ = 1, 7

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
    "setresgid", "setgroups", "setfsuid", "setfsgid", "capset", "socket",
    # Extended attributes: Landlock grants no right for them and the hook lists no call, so a write
    # would reach any file the uid may write, outside the jail too (red team sandbox2 `a_xattr`).
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr", "setxattrat", "removexattrat",
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
        rules += [rule(_KILL_PROCESS, "socketpair", _ArgCmp(0, _CMP_NE, _AF_UNIX, 0))]
        rules += [
            rule(_KILL_PROCESS, "socketpair", _ArgCmp(1, _CMP_MASKED_EQ, _SOCK_TYPE_MASK, kind))
            for kind in range(_SOCK_TYPE_MASK + 1)
            if kind != _SOCK_STREAM
        ]
        return all(rules) and lib.seccomp_load(context) == 0
    finally:
        lib.seccomp_release(context)
