"""The jail's own root (untrusted side, the standard library and `_kernel`): a mount view where
nothing of the machine is reachable.

A list of refusals (Landlock rules, audit-hook checks) over the machine's whole mount tree leaves
every call it does not name as a way around it: `..` from any directory descriptor, `O_PATH`
descriptors and `utimensat`, which Landlock does not check, metadata calls the hook never sees
with their `dir_fd`. So the jail does not see that tree at all: it pivots into a small tmpfs that
holds, at their own paths (so `sys.path`, `__file__`s and loaded modules stay valid),
  - a read-only bind of each path `confinement.readable_paths` lists (the standard library without
    its package dirs, the shared libraries, the loader cache, time-zone and locale data, and the
    device nodes /dev/null, /dev/zero, /dev/random, /dev/urandom), with the symbolic links met on
    the way to them (/lib -> usr/lib) recreated as links; where a directory's entries are all
    listed but a package dir or two, the directory is bound whole and those are covered with an
    empty read-only tmpfs (`_coalesce`: the standard library is one bind, not two hundred);
  - /dev/shm, the jail's private tmpfs (`_jail.SHM`), and the work dir's tmpfs;
and nothing else: no /proc, /sys, /etc but the loader cache and the local time, no other /dev
node, no other user's file. Every bind and the root itself are read-only (`MS_RDONLY`, and
`MS_NOSUID|MS_NODEV` but for the device nodes, which need their device), so utime, chmod, chown,
creating or linking there fail with EROFS whatever path or descriptor leads there; a hard link or
rename out of a bind fails with EXDEV (another mount). The old root is detached after the pivot,
so no path, `..` or descriptor opened later reaches it.

`plan(readable)` is computed once by the fork server; `enter(plan, staging, workdir...)` is
called per jail, as root, in its fresh mount namespace, before it drops its privileges.
"""

import os

import _hook
import _kernel

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 8, 32, 1 << 12
_MNT_DETACH = 2
_MAX_LINKS = 40  # as the kernel's own bound on links followed in one walk


def _walk(path):
    """([(link, target)], real path): the symbolic links met on the way to `path` (each at its
    own real location), and where the walk ends."""
    links: list[tuple[str, str]] = []
    pending, current = path.strip("/").split("/"), "/"
    while pending and len(links) <= _MAX_LINKS:
        name = pending.pop(0)
        if name in ("", "."):
            continue
        candidate = os.path.dirname(current) if name == ".." else os.path.join(current, name)
        if name != ".." and os.path.islink(candidate):
            target = os.readlink(candidate)
            links.append((candidate, target))
            pending = os.path.join(current, target).strip("/").split("/") + pending
            current = "/"
        else:
            current = candidate
    return links, current


def plan(readable):
    """(links, binds, covers, blanks): the links to recreate, [(path, target)]; the real paths to
    bind, [(path, is_dir)], none below another; the directories inside those binds to cover with an
    empty read-only tmpfs (`_coalesce`); and the extension files inside them to blank (`_blank`,
    `_native_files`). For the readable paths that exist."""
    links, binds = {}, {}
    for path in readable:
        met, real = _walk(os.path.abspath(path))
        if not os.path.exists(real):
            continue
        links.update(met)
        binds[real] = os.path.isdir(real)
    covers = _coalesce(binds, links)
    kept = sorted(binds)
    kept = [path for path in kept if not any(path.startswith(other.rstrip("/") + "/") for other in kept if other != path)]
    beneath = tuple(path.rstrip("/") + "/" for path in kept)
    return (
        tuple((link, target) for link, target in sorted(links.items()) if not link.startswith(beneath)),
        tuple((path, binds[path]) for path in kept),
        tuple(sorted(path for path in covers if path.startswith(beneath))),
        _native_files(path for path, is_dir in binds.items() if is_dir and path in kept),
    )


def _native_files(directories):
    """The extension modules below `directories` that reach native code from pure Python
    (`_hook.NATIVE`: ctypes, CPython's test modules, subinterpreters), by file name."""
    found = []
    for directory in directories:
        for parent, _, names in os.walk(directory):
            found += [os.path.join(parent, name) for name in names if name.endswith(".so") and name.partition(".")[0] in _hook.NATIVE]
    return tuple(sorted(found))


_MAX_COVERS = 2  # per directory: the package dirs beside the standard library's modules


def _coalesce(binds, links):
    """Replace, in `binds`, the children of a directory by the directory itself where all of its
    entries are readable but at most `_MAX_COVERS` real directories (site-packages beside the
    standard library's modules), and return those directories, which the jail covers with an
    empty tmpfs: two mounts where there were hundreds (each costs a jail about 40 us). Repeated up
    the tree while it applies (the standard library, then the private prefix's lib around it)."""
    covers = set()
    while True:
        parents: dict[str, list[str]] = {}
        for path in binds:
            parents.setdefault(os.path.dirname(path), []).append(path)
        merged = False
        for parent, children in parents.items():
            if parent in ("/", "/dev") or len(children) < 2:  # /dev: its nodes keep their own binds
                continue
            try:
                entries = [os.path.join(parent, name) for name in os.listdir(parent)]
            except OSError:
                continue
            absent = [entry for entry in entries if entry not in binds and entry not in links]
            if len(absent) > _MAX_COVERS or not all(os.path.isdir(entry) and not os.path.islink(entry) for entry in absent):
                continue
            for child in children:
                del binds[child]
            binds[parent] = True
            covers.update(absent)
            merged = True
        if not merged:
            return covers


def _mount(source, target, kind, flags, options=None):
    if _kernel.mount(source, target.encode(), kind, flags, options) != 0:
        raise OSError(f"mount {target}")


def _bind_read_only(source, target, is_dir):
    """Bind `source` at `target` (made as an empty directory or file), then remount it read-only:
    a bind takes the flags of its source until it is remounted."""
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
    _mount(source.encode(), target, None, _MS_BIND)
    device = source.startswith("/dev/")
    flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | (_MS_NOEXEC if device else _MS_NODEV)
    _mount(None, target, None, flags)


# A Debian system's first accounts, and the login's own: what `pwd`, `grp`, `getpass` and `~` find.
_PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
    "bin:x:2:2:bin:/bin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n{user}:x:{uid}:{uid}:{user},,,:{home}:{shell}\n"
)
_GROUP = "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nnogroup:x:65534:\n{user}:x:{uid}:\n"
ACCOUNTS = ("/etc/passwd", "/etc/group")


def _accounts(staging, login):
    """/etc/passwd and /etc/group naming the login (`login`: uid, user, home, shell)."""
    uid, user, home, shell = login
    os.makedirs(staging + "/etc", mode=0o755, exist_ok=True)
    for path, text in zip(ACCOUNTS, (_PASSWD, _GROUP)):
        with open(staging + path, "w", encoding="utf-8") as file:
            file.write(text.format(uid=uid, user=user, home=home, shell=shell))


def _blank(staging, paths):
    """An empty regular file in place of each of `paths` (extensions no jail may load): the
    import system still finds a file there, so loading it raises the `import` event the hook
    refuses and records, and were the hook bypassed, the file is no ELF object. The empty file
    lives on a tmpfs mounted for the while, detached once bound (the binds keep it)."""
    holder = staging + "/.blank"
    os.makedirs(holder, mode=0o700)
    _mount(b"tmpfs", holder, b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"mode=0700")
    empty = holder + "/empty"
    os.close(os.open(empty, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
    for path in paths:
        _mount(empty.encode(), staging + path, None, _MS_BIND)
        _mount(None, staging + path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NOEXEC | _MS_NODEV)
    if _kernel.umount2(holder.encode(), _MNT_DETACH) != 0:
        raise OSError("umount " + holder)
    os.rmdir(holder)


# The jail's read-only tmpfs mounts (its root, the covers of what it may not read, the holder of
# the blanked files) are of an ordinary tmpfs's size, half the machine's memory, as a size option
# would show in `os.statvfs` (its root showed 1 MiB and 4,096 inodes, site-packages' cover 4 KiB
# and one inode); they hold next to nothing, and nothing can write them.


def tmpfs_options(size_mb, inodes, mode):
    """Mount options of a writable tmpfs of the jail's: of `size_mb` and `inodes`, or, with
    `size_mb` None (the jail's memory cgroup bounds what it writes), an ordinary tmpfs's (half the
    machine's memory, as /tmp and /dev/shm are), so that `os.statvfs` shows no size of the jail's."""
    return (f"mode={mode}" if size_mb is None else f"size={size_mb}m,nr_inodes={inodes},mode={mode}").encode()


def enter(root_plan, staging, workdir, disk_mb, shm_mb, shm, login=None):
    """Build the root on `staging` (an empty directory of the jail's mount namespace), mount the
    work dir's tmpfs (`disk_mb`), the private /dev/shm (`shm_mb`) and, with `login` (uid, user,
    home, shell), the login's home (as large as the work dir) and its accounts in /etc, each
    writable place noexec, pivot into it and detach the old root (a size None: `tmpfs_options`). The names of what applied ("tmpfs_workdir", "private_shm", "login_home",
    "minimal_root"); raises OSError when the root could not be built (nothing pivoted then)."""
    links, binds, covers, blanks = root_plan
    _mount(b"tmpfs", staging, b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755")
    for link, target in links:
        os.makedirs(os.path.dirname(staging + link), mode=0o755, exist_ok=True)
        os.symlink(target, staging + link)
    for path, is_dir in binds:
        _bind_read_only(path, staging + path, is_dir)
    if blanks:
        _blank(staging, blanks)
    for path in covers:  # what lies below a bound directory but is not readable: hidden, empty
        _mount(b"tmpfs", staging + path, b"tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, b"mode=0755")
    os.makedirs(staging + workdir, mode=0o711, exist_ok=True)
    _mount(b"tmpfs", staging + workdir, b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, tmpfs_options(disk_mb, 4096, "0700"))
    os.makedirs(staging + shm, mode=0o755, exist_ok=True)
    _mount(b"tmpfs", staging + shm, b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, tmpfs_options(shm_mb, 256, "1777"))
    applied = ["tmpfs_workdir", "private_shm"]
    if login is not None:
        uid, _, home, _ = login
        _accounts(staging, login)
        os.makedirs(staging + home, mode=0o755, exist_ok=True)
        _mount(b"tmpfs", staging + home, b"tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, tmpfs_options(disk_mb, 1024, "0755"))
        os.chown(staging + home, uid, uid)
        applied.append("login_home")
    _mount(None, staging, None, _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, b"mode=0755")
    os.chdir(staging)
    # pivot_root(".", "."): the old root ends up mounted on top of the new one, and detaching "."
    # then removes exactly it (pivot_root(2), "NOTES").
    if _kernel.pivot_root(b".", b".") != 0:
        raise OSError("pivot_root")
    if _kernel.umount2(b".", _MNT_DETACH) != 0:  # pivoted: no falling back to the machine's tree now
        raise RuntimeError("the old root could not be detached")
    os.chdir("/")
    return applied + ["minimal_root"]
