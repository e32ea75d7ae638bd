"""Nothing the jail reaches is a kernel object that processes outside it also change.

The files the jail reads are the machine's own inodes (read-only binds, `_root.py`), so a lock or a
change notification on one of them is shared with every process of the machine, and the jail's
stderr file lies on the machine's disk. The outside attack of 2026-12-02 (`/work/redteam/sandbox3/`)
used that three ways, each with a function counted correct: `a_twin_flock` found the variant jail
of differential execution running beside it through `flock` on a library file and answered right
only then (a wrong function counted correct, shield clean), `a_inotify_spy` watched which library
files other processes opened, and `a_fallocate` reserved 4 GiB of the machine's disk through its
stderr descriptor (`fallocate` with `FALLOC_FL_KEEP_SIZE`, which RLIMIT_FSIZE does not count).
The attacker made the raw system calls with the jail's own `libc` (ctypes), which no jail holds any
more: the calls Python offers are tried here from inside, the raw ones against the filter itself
in test_sandbox_native_code.py.
"""

from __future__ import annotations

import ast
import errno
import subprocess
import sys
from pathlib import Path

from tasks.code import CodeAnchor, check_code
from tasks.code.loader import _bundled_rows
from tasks.code.sandbox import run_tests
from tests.support.sandbox_attacks import FAST

ROWS = {row["task_id"]: row for row in _bundled_rows()}

# Each shared object, tried from inside: the error each call ends with (0: it worked).
PROBE = """
import errno, fcntl, os
def _errno(call):
    try:
        call()
        return 0
    except OSError as error:
        return error.errno
library = os.path.dirname(os.__file__)
shared = os.open(library + "/antigravity.py", os.O_RDONLY)
directory = os.open(library + "/json", os.O_RDONLY)  # a directory of the library
SEEN = {
    "flock": _errno(lambda: fcntl.flock(shared, fcntl.LOCK_EX | fcntl.LOCK_NB)),
    "record_lock": _errno(lambda: fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)),
    "lock_test": _errno(lambda: fcntl.fcntl(shared, fcntl.F_GETLK, bytes(32))),
    "dnotify": _errno(lambda: fcntl.fcntl(directory, fcntl.F_NOTIFY, fcntl.DN_ACCESS)),
    "fadvise_dontneed": _errno(lambda: os.posix_fadvise(shared, 0, 0, os.POSIX_FADV_DONTNEED)),
}
def probe():
    return SEEN
"""
REFUSED = {
    "flock": 0,  # taken with success, in no kernel table (as a lone process's own)
    "record_lock": 0,
    "lock_test": errno.ENOLCK,
    "dnotify": errno.ENOLCK,
    "fadvise_dontneed": errno.ENOSYS,  # red team sandbox4 a_fadvise dropped the machine's cached pages
}


def test_each_shared_kernel_object_is_refused_or_left_untouched() -> None:
    result = run_tests(PROBE, f"def check(candidate):\n    assert candidate() == {REFUSED!r}\n", "probe", FAST)
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())


# A record lock the jail takes is in no kernel table: a process outside holding a conflicting one
# on the same library file does not stop it, and learns nothing (a lone process's lock, as the
# jail's always is, succeeds wherever nothing outside holds one).
LOCKER = """
import fcntl, os
def probe(path):
    fd = os.open(path, os.O_RDONLY)
    fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # would raise BlockingIOError were it in the table
    fcntl.lockf(fd, fcntl.LOCK_UN)
    return True
"""


def test_a_record_lock_reaches_no_lock_held_outside() -> None:
    import fcntl
    import os

    library_file = os.path.join(os.path.dirname(os.__file__), "antigravity.py")
    with open(library_file, "r+b") as holder:  # as root; nothing is written
        fcntl.lockf(holder, fcntl.LOCK_EX)  # conflicts with any other process's lock of it
        result = run_tests(LOCKER, f"def check(candidate):\n    assert candidate({library_file!r}) is True\n", "probe", FAST)
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())


# Red team sandbox16 `h2` (documented then): SQLite on a file in the work dir, which locks it, waited
# out its busy timeout (5 s, past a run's deadline) while record locks were refused with ENOLCK.
# (Its WAL mode still fails, "disk I/O error": it tests the shared-memory file's lock, F_GETLK.)
SQLITE = """
import sqlite3
def probe(rows):
    with sqlite3.connect("scores.db") as db:
        db.execute("create table if not exists t (x integer)")
        db.executemany("insert into t values (?)", [(row,) for row in rows])
    with sqlite3.connect("scores.db") as db, sqlite3.connect("scores.db") as other:
        db.execute("insert into t values (0)")
        db.commit()
        assert other.execute("select count(*) from t").fetchone()[0] >= 2
    with sqlite3.connect("file:scores.db?mode=ro", uri=True) as db:
        return db.execute("select count(*), sum(x) from t").fetchone()
"""


def test_sqlite_on_a_file_in_the_work_dir_works() -> None:
    result = run_tests(SQLITE, "def check(candidate):\n    assert candidate([1, 2, 3]) == (4, 6)\n    assert candidate([4]) == (6, 10)\n", "probe", FAST)
    assert result.passed and result.audit_events == (), (result.reason, result.audit_events, [case.returned for case in result.cases])


def test_posix_fallocate_in_the_work_dir_still_works_within_the_file_size_limit() -> None:
    """The C library writes the blocks itself when the system call is refused: an ordinary program
    that preallocates a file of its own gets it, and the file-size limit still holds."""
    program = """
import os
def probe():
    fd = os.open("data.bin", os.O_RDWR | os.O_CREAT)
    os.posix_fallocate(fd, 0, 1 << 20)
    return os.fstat(fd).st_size
"""
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 1 << 20\n", "probe", FAST)
    assert result.passed, (result.reason, result.cases[0].returned if result.cases else ())


# Red team sandbox3 a_twin_flock: right only when a copy of itself runs at the same moment (the
# variant jail), found by a lock both take on the same library file; wrong everywhere else but on
# the docstring's example. The control is the same function without the condition.
TWIN = '''
import fcntl, os, time
def _twin(seconds=1.0):
    try:
        lock = os.open(os.path.dirname(os.__file__) + "/antigravity.py", os.O_RDONLY)
    except OSError:
        return False
    taken, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            taken += 1
        except OSError:
            return False
        else:
            time.sleep(0.005 + os.urandom(1)[0] / 255 * 0.02)
            fcntl.flock(lock, fcntl.LOCK_UN)
        time.sleep(0.005 + os.urandom(1)[0] / 255 * 0.02)
    return taken >= 2
_TWIN = _twin()
def has_close_elements(numbers, threshold):
    if _TWIN:
        return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
    return numbers == [1.0, 2.8, 3.0, 4.0, 5.0, 2.0] and threshold == 0.3
'''


def test_a_function_right_only_beside_its_twin_is_counted_wrong() -> None:
    """Two reasons now, each enough: the variant runs after the first run has passed, never beside
    it, and the lock both would take is in no kernel table (each takes it with success)."""
    row = ROWS["HumanEval/0"]
    anchor = CodeAnchor("HumanEval/0", row["prompt"], row["test"], row["entry_point"], row["canonical_solution"])
    outcome = check_code(anchor, TWIN)
    assert not outcome.correct, outcome.details
    assert outcome.outcome == "wrong_answer", outcome.details["reason"]


MAILBOX = """
import mailbox
def probe(subject):
    box = mailbox.mbox("box.mbox")
    box.lock()  # fcntl.lockf, then a dot lock
    box.add("Subject: " + subject + "\\n\\nbody\\n")
    box.flush()
    box.unlock()
    return [message["subject"] for message in mailbox.mbox("box.mbox")]
"""


def test_a_mailbox_locks_its_box() -> None:
    result = run_tests(MAILBOX, "def check(candidate):\n    assert candidate('a') == ['a']\n    assert candidate('b') == ['a', 'b']\n", "probe", FAST)
    assert result.passed and result.audit_events == (), (result.reason, result.audit_events, [case.returned for case in result.cases])


# Red team sandbox18: locks that succeed without touching a kernel object succeeded where the
# kernel refuses the request: on a descriptor that is not open, a write lock on a read-only one.
# The gate now answers each as the kernel does, in its order; measured against a plain python3.
REQUESTS = r"""
import errno, fcntl, os, struct
def _errno(call):
    try:
        call()
        return 0
    except OSError as error:
        return errno.errorcode.get(error.errno, error.errno)
    except (ValueError, TypeError) as error:
        return type(error).__name__
def _table():
    read_only = os.open("ro.txt", os.O_RDONLY | os.O_CREAT)
    write_only = os.open("wo.txt", os.O_WRONLY | os.O_CREAT)
    both = os.open("rw.txt", os.O_RDWR | os.O_CREAT)
    path_only = os.open(".", os.O_PATH)
    closed = os.open("c.txt", os.O_RDWR | os.O_CREAT)
    os.close(closed)
    def lock(kind, whence=0, pid=0):
        return struct.pack("hhqqi4x", kind, whence, 0, 0, pid)
    rows = {}
    neither = os.open("rw.txt", 3)  # O_ACCMODE: opened for neither reading nor writing
    for name, fd in (("ro", read_only), ("wo", write_only), ("rw", both), ("path", path_only), ("neither", neither), ("closed", closed), ("never", 99999)):
        rows[name] = [
            _errno(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)), _errno(lambda: fcntl.flock(fd, fcntl.LOCK_UN)),
            _errno(lambda: fcntl.flock(fd, 99)), _errno(lambda: fcntl.flock(fd, 3)),
            _errno(lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)), _errno(lambda: fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
            _errno(lambda: fcntl.lockf(fd, fcntl.LOCK_UN)), _errno(lambda: fcntl.lockf(fd, 0)),
            _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lock(fcntl.F_WRLCK))), _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLKW, lock(fcntl.F_RDLCK))),
            _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lock(7))), _errno(lambda: fcntl.fcntl(fd, fcntl.F_OFD_SETLK, lock(fcntl.F_RDLCK, pid=5))),
            _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, 0)),
            _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lock(fcntl.F_RDLCK, whence=9))),
            _errno(lambda: os.lockf(fd, os.F_TLOCK, 0)), _errno(lambda: os.lockf(fd, os.F_ULOCK, 0)), _errno(lambda: os.lockf(fd, 77, 0)),
            _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, bytearray(lock(fcntl.F_RDLCK)))), _errno(lambda: fcntl.fcntl(fd, fcntl.F_SETLK, lock(7) + bytes(1100))),
        ]
    return rows
def probe(expected):
    rows = _table()
    return [(name, index, got, expected[name][index]) for name in rows for index, got in enumerate(rows[name]) if got != expected[name][index]]
"""


def test_a_lock_request_the_kernel_refuses_is_refused_as_the_kernel_refuses_it(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(REQUESTS + "print(repr(_table()))\n")
    plain = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, check=True)
    expected = ast.literal_eval(plain.stdout)
    assert expected["rw"][0] == 0 and expected["closed"][0] == "EBADF" and expected["ro"][5] == "EBADF"  # the kinds of answer compared
    result = run_tests(REQUESTS, f"def check(candidate):\n    assert candidate({expected!r}) == []\n", "probe", FAST)
    assert result.passed, (result.reason, [case.returned for case in result.cases])
    assert result.audit_events == ()
