"""The jail's mount view (`_root.py`): nothing of the machine is reachable from inside.

The outside attack of 2026-12-02 (`/work/redteam/sandbox2/`, cases a_utime, a_utime_host, a_dirfd)
walked `..` from an `O_PATH` descriptor of the private /dev/shm to the machine's /dev and root, and
changed the mtime of /dev/full and of a world-writable machine file, and opened /dev/autofs, all
with a correct function, so the answer counted and nothing was recorded. Each attack here runs in
a correct function's module (or a probe's), and the test asserts the effect outside the jail,
measured by this process: a file's mtime and content, what exists in the view."""

from __future__ import annotations

import ast
import os
import shutil
import sysconfig
import tempfile
import textwrap
from collections.abc import Iterator

import pytest

from tasks.code.sandbox import SandboxLimits, run_tests
from tasks.code.sandbox.confinement import readable_paths
from tests.support.ci import unavailable
from tests.support.sandbox_attacks import FAST

SITE_PACKAGES = sysconfig.get_paths()["purelib"]  # the hidden tests' package lives here
DEV_NODES = ["null", "random", "shm", "urandom", "zero"]
# `..` from /dev/shm, far enough to pass any root, from a working directory as deep (the audit hook
# resolves a relative path against the working directory, and never sees `dir_fd`)
WALK = """deep = "/".join(["d"] * 8)
os.makedirs(deep, exist_ok=True)
os.chdir(deep)
shm = os.open("/dev/shm", os.O_PATH | os.O_DIRECTORY)
top = os.open("/".join([".."] * 8), os.O_RDONLY | os.O_DIRECTORY, dir_fd=shm)
os.chdir("/".join([".."] * 8))
"""
CORRECT = "def add(a, b):\n    return a + b\n"
ADD_TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n"


def _require_minimal_root(isolation: tuple[str, ...]) -> None:
    if "minimal_root" not in isolation:
        unavailable("minimal_root did not apply here (needs root and mount namespaces)")


def _attack(prelude: str) -> tuple[str, str]:
    """A correct `add` after `prelude` (run at load, every error swallowed); outcome and reason."""
    program = "import os\ntry:\n" + textwrap.indent(prelude, "    ") + "except OSError:\n    pass\n" + CORRECT
    result = run_tests(program, ADD_TEST, "add", FAST)
    _require_minimal_root(result.isolation)
    return result.outcome, result.reason


@pytest.fixture
def victim() -> Iterator[str]:
    """A world-writable file (mode 666, mtime 2020-01-01) in a directory every uid may traverse."""
    directory = tempfile.mkdtemp(dir="/tmp")
    os.chmod(directory, 0o755)
    path = os.path.join(directory, "target.txt")
    with open(path, "w") as handle:
        handle.write("victim\n")
    os.chmod(path, 0o666)
    os.utime(path, (1577836800, 1577836800))
    yield path
    shutil.rmtree(directory)


def test_utime_through_a_dir_fd_walk_leaves_dev_full_unchanged() -> None:
    before = os.stat("/dev/full").st_mtime_ns
    outcome, reason = _attack(WALK + "os.utime('dev/full', None, dir_fd=top)\n")
    assert outcome == "pass", reason  # the function is correct: the answer still counts
    assert os.stat("/dev/full").st_mtime_ns == before


def test_a_machine_file_outside_the_jail_keeps_its_mtime_and_content(victim: str) -> None:
    relative = victim.lstrip("/")
    outcome, reason = _attack(
        WALK + f"os.utime({relative!r}, None, dir_fd=top)\nfd = os.open({relative!r}, os.O_WRONLY | os.O_APPEND, dir_fd=top)\nos.write(fd, b'hacked')\n"
    )
    assert outcome == "pass", reason
    assert os.stat(victim).st_mtime == 1577836800
    with open(victim) as handle:
        assert handle.read() == "victim\n"


# What a probe run in the jail sees, as (id, expression, expected value): one jail for all of them.
# Paths go through descriptors (`top`: the root reached by `..`, `lib`: the json package's
# directory). A change is made on a descriptor of what it changes, opened for reading (the hook
# passes both: the kernel answers); a new name the hook judges by the directory its descriptor is
# of (red team sandbox13 `r3`), so it refuses those first, with a record (`PermissionError`, the
# last four rows of changes), where before the kernel's answer was the only one.
VIEW = [
    ("dev_holds_only_the_ordinary_nodes", "sorted(os.listdir('/dev'))", DEV_NODES),
    ("dev_autofs_is_absent_by_a_dir_fd_walk", "tried(lambda: os.open('dev/autofs', os.O_RDONLY, dir_fd=top))", "FileNotFoundError"),
    ("dot_dot_from_shm_ends_at_the_jail_root", "sorted(os.listdir(top)) == sorted(os.listdir('/'))", True),
    ("no_proc", "os.path.exists('/proc')", False),
    ("site_packages_is_an_empty_cover", f"os.listdir({SITE_PACKAGES!r}) if os.path.isdir({SITE_PACKAGES!r}) else []", []),
    ("no_etc_shadow", "os.path.exists('/etc/shadow')", False),
    ("etc_holds_only_the_accounts_and_what_it_reads", "sorted(os.listdir('/etc'))", ["group", "ld.so.cache", "localtime", "passwd"]),
    ("utime_on_root", "tried(lambda: os.utime(top))", "OSError(EROFS)"),
    ("chown_through_the_root", "tried(lambda: os.chown(os.open('dev/null', os.O_RDONLY, dir_fd=top), 1, 1))", "OSError(EROFS)"),
    ("no_walk_from_the_inherited_descriptors", "[tried(lambda: os.open('..', os.O_PATH, dir_fd=fd)) for fd in (0, 1, 2)]", ["OSError(ENOTDIR)"] * 3),
    ("no_other_directory_descriptor_open", "[fd for fd in range(64) if fd not in (shm, top, lib) and tried(lambda: os.listdir(fd)) == 'done']", []),
    ("utime_on_dev_null", "tried(lambda: os.utime(os.open('dev/null', os.O_RDONLY, dir_fd=top)))", "OSError(EROFS)"),
    ("dev_null_still_writes", "os.write(os.open('/dev/null', os.O_WRONLY), b'x')", 1),
    ("dev_urandom_reads", "len(os.read(os.open('/dev/urandom', os.O_RDONLY), 4))", 4),
    ("chmod_a_library_file", "tried(lambda: os.chmod(os.open('__init__.py', os.O_RDONLY, dir_fd=lib), 0o777))", "OSError(EROFS)"),
    ("write_a_library_file", "tried(lambda: os.open('__init__.py', os.O_WRONLY, dir_fd=lib))", "PermissionError"),  # its mode, checked before the mount
    ("mknod_in_the_work_dir", "tried(lambda: os.mknod('node', 0o20666, os.makedev(1, 7)))", "PermissionError"),
    ("symlink_in_the_root", "tried(lambda: os.symlink('x', 'way_out', dir_fd=top))", "PermissionError"),
    ("create_in_the_root", "tried(lambda: os.open('x', os.O_CREAT | os.O_WRONLY, dir_fd=top))", "PermissionError"),
    ("hard_link_out_of_a_bind", "tried(lambda: os.link('__init__.py', 'json_link.py', src_dir_fd=lib))", "PermissionError"),
    ("rename_a_library_file_into_the_work_dir", "tried(lambda: os.rename('__init__.py', 'stolen.py', src_dir_fd=lib))", "PermissionError"),
    ("work_dir_writes", "open('scratch.txt', 'w').write('ok')", 2),
    ("shm_writes", "open('/dev/shm/scratch', 'w').write('ok')", 2),
]
# The probe compares each observation with its expected value itself and returns the positions of
# the rows that differ, as one string (the parent's record of an answer is short), so one jail serves every row.
VIEW_PROGRAM = (
    """
import errno, json, os
def tried(action):
    try:
        action()
        return "done"
    except FileNotFoundError:
        return "FileNotFoundError"
    except PermissionError:
        return "PermissionError"
    except OSError as error:
        return f"OSError({errno.errorcode.get(error.errno, error.errno)})"
"""
    + WALK
    + "lib = os.open(os.path.dirname(json.__file__), os.O_RDONLY | os.O_DIRECTORY)\n"
    + "def probe():\n    os.chdir(deep)\n    seen = {}\n"
    + "".join(
        f"    try:\n        seen[{name!r}] = {expression}\n    except Exception as error:\n        seen[{name!r}] = repr(error)\n"
        for name, expression, _ in VIEW
    )
    + f"    expected = {[value for _, _, value in VIEW]!r}\n"
    + ("    return ' '.join(str(row) for row, value in enumerate(seen.values()) if value != expected[row])\n")
)


@pytest.fixture(scope="module")
def mismatches() -> list[str]:
    """The names of the rows whose observation differed (none when all held)."""
    result = run_tests(VIEW_PROGRAM, "def check(candidate):\n    assert candidate() == ''\n", "probe", FAST)
    _require_minimal_root(result.isolation)
    assert result.cases, result.reason
    return [] if result.outcome == "pass" else [VIEW[int(row)][0] for row in ast.literal_eval(result.cases[0].returned[0]).split()]


@pytest.mark.parametrize(("name", "expected"), [(name, expected) for name, _, expected in VIEW], ids=[name for name, _, _ in VIEW])
def test_the_jail_sees_only_its_own_root(mismatches: list[str], name: str, expected: object) -> None:
    assert name not in mismatches, mismatches


def test_the_root_lists_only_what_the_jail_must_read() -> None:
    """`os.listdir('/')`: the top directories of the readable paths (and of the symbolic links on
    their way), /dev, the work dir's and the login's home's; nothing else of the machine."""
    tops = {path.strip("/").split("/")[0] for path in readable_paths() if os.path.lexists(path)}
    tops |= {os.path.realpath(path).strip("/").split("/")[0] for path in readable_paths() if os.path.exists(path)}
    tops |= {"dev", "home", tempfile.gettempdir().strip("/").split("/")[0]}
    program = "import os\ndef probe():\n    return sorted(os.listdir('/'))\n"
    test = f"def check(candidate):\n    assert candidate() == {sorted(tops)!r}\n"
    result = run_tests(program, test, "probe", FAST)
    _require_minimal_root(result.isolation)
    assert result.outcome == "pass", result.reason


def test_minimal_root_applies_under_both_launchers() -> None:
    for launcher in ("fork_server", "exec"):
        result = run_tests(CORRECT, ADD_TEST, "add", SandboxLimits(**{**FAST.__dict__, "launcher": launcher}))
        assert result.outcome == "pass", (launcher, result.reason)
        _require_minimal_root(result.isolation)
