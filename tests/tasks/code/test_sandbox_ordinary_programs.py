"""Ordinary programs pass: the jail refuses effects, never a mechanism an ordinary program uses.

Each row is an honest use of the standard library that models write (a doctest or unittest
`__main__` block, a SIGALRM time guard, asyncio, a thread pool's semaphores, ...). With the
comparison right it must pass (anchor and shield); with it wrong it must still fail. The limits
that a Python signal handler could try to dodge are enforced from outside the jail (the hard
CPU rlimit's SIGKILL, the parent's wall-clock kill), and what stays refused (new processes) is
refused with a record.
"""

from __future__ import annotations

import os

import pytest

from harness.core.values import Candidate
from harness.shield import VerifyOptions
from tasks.code import load
from tasks.code.sandbox import SandboxLimits, run_tests
from tasks.config import TaskConfig
from tests.support.ci import unavailable

TASK = "HumanEval/0"
DATA = load(TaskConfig(name="code", subset=TASK))
PAIRS = "[(a, b) for i, a in enumerate(numbers) for b in numbers[i + 1:]]"
CLOSE = "any(abs(a - b) {cmp} threshold for a, b in " + PAIRS + ")"
PLAIN = "def has_close_elements(numbers, threshold):\n    return " + CLOSE + "\n"

# id -> program, with `{cmp}` the comparison: `<` is right, `>=` is wrong.
ORDINARY = {
    "doctest_testmod_in_main": '''
def has_close_elements(numbers, threshold):
    """
    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
    False
    """
    return ''' + CLOSE + '''

if __name__ == "__main__":
    import doctest
    doctest.testmod()
''',
    "import_readline": "import readline\n" + PLAIN,
    "sigalrm_time_guard": '''
import signal

def _expired(signum, frame):
    raise TimeoutError("took too long")

def has_close_elements(numbers, threshold):
    signal.signal(signal.SIGALRM, _expired)
    signal.alarm(5)
    try:
        return ''' + CLOSE + '''
    finally:
        signal.alarm(0)
''',
    "import_asyncio": "import asyncio\n" + PLAIN,
    "asyncio_gather": '''
import asyncio

async def _close(a, b, threshold):
    await asyncio.sleep(0)
    return abs(a - b) {cmp} threshold

def has_close_elements(numbers, threshold):
    async def main():
        return await asyncio.gather(*(_close(a, b, threshold) for a, b in ''' + PAIRS + '''))
    return any(asyncio.run(main()))
''',
    "multiprocessing_thread_pool": '''
from multiprocessing.pool import ThreadPool

def has_close_elements(numbers, threshold):
    with ThreadPool(2) as pool:
        return any(pool.map(lambda pair: abs(pair[0] - pair[1]) {cmp} threshold, ''' + PAIRS + '''))
''',
    "unittest_main_at_load": '''
import unittest

''' + PLAIN + '''
class Test(unittest.TestCase):
    def test_far_apart(self):
        self.assertFalse(has_close_elements([1.0, 5.0], 0.5))

if __name__ == "__main__":
    unittest.main()
''',
    "sys_exit_zero_at_load": PLAIN + "\nimport sys\nsys.exit(0)\n",
    "sys_exit_none_at_load": PLAIN + "\nraise SystemExit\n",
    "sigint_handler": "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n" + PLAIN,
    "multiprocessing_lock": "import multiprocessing\n_lock = multiprocessing.Lock()\n" + PLAIN.replace(
        "    return", "    with _lock:\n        return"
    ),
}


PROBLEM = next(p for p in DATA.problems if p.problem_id == TASK)


def _check(text: str) -> tuple[bool, bool, str]:
    """(the anchor counts it correct, the shield found no violation, why)."""
    assert DATA.shield is not None
    outcome = DATA.anchors.check(TASK, text)
    report = DATA.shield(PROBLEM, Candidate(TASK, "c", text), None, VerifyOptions())
    kinds = sorted({violation.kind for violation in report.violations})
    return outcome.correct, not kinds, f"{outcome.details['reason']} {kinds}"


@pytest.mark.parametrize("program", list(ORDINARY.values()), ids=list(ORDINARY))
def test_an_ordinary_program_passes_when_right_and_fails_when_wrong(program: str) -> None:
    correct, clean, reason = _check(program.replace("{cmp}", "<"))
    assert (correct, clean) == (True, True), reason
    correct, _, reason = _check(program.replace("{cmp}", ">="))
    assert not correct, reason


# Still refused, with a record: what would start a process (no new processes in the jail).
STILL_REFUSED = {
    "process_pool_executor": (
        "import concurrent.futures\n"
        "def has_close_elements(numbers, threshold):\n"
        "    with concurrent.futures.ProcessPoolExecutor(2) as pool:\n"
        "        return any(pool.map(abs, [a - b for a, b in " + PAIRS + "])) and " + CLOSE.replace("{cmp}", "<") + "\n"
    ),
    "multiprocessing_process": (
        "import multiprocessing\n"
        "def has_close_elements(numbers, threshold):\n"
        "    worker = multiprocessing.Process(target=print)\n"
        "    worker.start()\n"
        "    worker.join()\n"
        "    return " + CLOSE.replace("{cmp}", "<") + "\n"
    ),
    "non_zero_exit_at_load": PLAIN.replace("{cmp}", "<") + "\nimport sys\nsys.exit(1)\n",
    "unittest_main_failing": ORDINARY["unittest_main_at_load"].replace("assertFalse", "assertTrue").replace("{cmp}", "<"),
}


@pytest.mark.parametrize("program", list(STILL_REFUSED.values()), ids=list(STILL_REFUSED))
def test_what_stays_refused_fails_and_is_flagged(program: str) -> None:
    correct, clean, reason = _check(program)
    assert (correct, clean) == (False, False), reason


HANDLER_SURVIVES = {
    # SIGXCPU at the soft limit is ignored; the hard limit (one second later) is a SIGKILL.
    "sigxcpu_ignored": "signal.signal(signal.SIGXCPU, signal.SIG_IGN)\n    while True:\n        pass",
    "sigxcpu_handler": "signal.signal(signal.SIGXCPU, lambda *args: None)\n    while True:\n        pass",
    # SIGALRM re-armed forever while sleeping: only the parent's wall-clock kill ends it.
    "sigalrm_rearmed": (
        "signal.signal(signal.SIGALRM, lambda *args: signal.alarm(1))\n    signal.alarm(1)\n"
        "    while True:\n        time.sleep(0.05)"
    ),
    "sigterm_ignored": "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    while True:\n        time.sleep(0.05)",
}


@pytest.mark.parametrize("body", list(HANDLER_SURVIVES.values()), ids=list(HANDLER_SURVIVES))
def test_a_signal_handler_cannot_outlast_the_limits(body: str) -> None:
    program = f"import signal, time\ndef probe():\n    {body}\n"
    limits = SandboxLimits(wall_s=4.0, cpu_s=1, memory_mb=512)
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 1\n", "probe", limits)
    if "rlimits" not in result.isolation:
        unavailable("the jail's rlimits did not apply here")
    assert result.outcome == "timeout", result.reason
    assert result.duration_s < limits.wall_s + 3, result.duration_s


def test_a_signal_handler_inside_the_hook_is_still_judged() -> None:
    """A handler that fires while the audit hook runs (a timer every 0.5 ms, the main thread opening
    files all the while) reaches for the collector's object graph: every attempt must be refused and
recorded, none may pass unjudged because the hook was busy on the same thread."""
    program = """
import gc, signal
_loaded = []
def _try(signum, frame):
    try:
        gc.get_referents(_loaded)
        _loaded.append(1)
    except PermissionError:
        pass
def probe():
    signal.signal(signal.SIGALRM, _try)
    signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
    for _ in range(2000):
        open("main.py").close()
    signal.setitimer(signal.ITIMER_REAL, 0)
    return len(_loaded)
"""
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 0\n", "probe")
    assert result.outcome == "pass", f"{result.reason}: {result.cases[0].returned if result.cases else ''}"
    assert "introspection" in {event["kind"] for event in result.audit_events}


SILENCE_THE_HOOK = """
import gc, signal
_frames = []
def _grab(signum, frame):
    chain = []
    while frame is not None and not _frames:
        if frame.f_code.co_filename.endswith("_hook.py"):
            chain.append(frame)
        frame = frame.f_back
    _frames.extend(chain)
def probe():
    signal.signal(signal.SIGALRM, _grab)
    signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
    for _ in range(20000):
        if _frames:
            break
        open("main.py").close()
    signal.setitimer(signal.ITIMER_REAL, 0)
    functions = [value for frame in _frames for value in frame.f_locals.values() if type(value).__name__ == "function"]
    seen = set()
    while functions:
        function = functions.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        for cell in function.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if type(value).__name__ == "function":
                functions.append(value)
                if value.__name__ in ("refuse", "event"):
                    cell.cell_contents = lambda *args: None
    try:
        gc.get_referents(_frames)
        return "silenced" if _frames else "no hook frame caught"
    except PermissionError:
        return "refused"
"""


def test_a_signal_handler_cannot_silence_the_hook_through_its_frame() -> None:
    """The handler receives the hook's own frame; replacing the cells of its closures (no audit
    event) must not leave a refused call unrecorded: the next event ends the jail as tampering."""
    result = run_tests(SILENCE_THE_HOOK, "def check(candidate):\n    assert candidate() == 'refused'\n", "probe")
    kinds = [event["kind"] for event in result.audit_events]
    returned = result.cases[0].returned if result.cases else ()
    assert returned != ("'silenced'",), kinds
    assert result.outcome == "pass" or (result.outcome == "error" and "evidence_tampering" in kinds), (result.reason, kinds)


# Ordinary standard-library calls, all made in one run: none may fail, none may leave a record.
STDLIB = {
    "locale_from_environment": "import locale; locale.setlocale(locale.LC_ALL, '')",
    "platform": "import platform; platform.system(); platform.release()",
    "write_dev_null": "open('/dev/null', 'w').write('x')",
    "multiprocessing_queue": "import multiprocessing as m; q = m.Queue(); q.put(1); q.get(timeout=5)",
    "asyncio_wait_for": "import asyncio\nasync def f():\n    return await asyncio.wait_for(asyncio.sleep(0, 1), 1)\nasyncio.run(f())",
    "asyncio_to_thread": "import asyncio\nasync def f():\n    return await asyncio.to_thread(abs, -1)\nasyncio.run(f())",
    "setitimer": "import signal; signal.setitimer(signal.ITIMER_REAL, 0); signal.getitimer(signal.ITIMER_REAL)",
    "raise_signal": "import signal; signal.signal(signal.SIGUSR1, lambda *a: None); signal.raise_signal(signal.SIGUSR1)",
    "pdb_instance": "import pdb; pdb.Pdb()",
    "code_module": "import code; code.InteractiveInterpreter().runsource('1 + 1')",
    "threading_timer": "import threading; t = threading.Timer(0.01, abs, (-1,)); t.start(); t.join()",
    "default_thread_pool": "import concurrent.futures as c\nwith c.ThreadPoolExecutor() as e:\n    list(e.map(abs, range(50)))",
    "unittest_runner_in_a_call": (
        "import unittest\nclass T(unittest.TestCase):\n    def test(self): pass\n"
        "unittest.TextTestRunner(stream=open('/dev/null', 'w')).run(unittest.defaultTestLoader.loadTestsFromTestCase(T))"
    ),
    "doctest_examples": "import doctest\ndef f():\n    '''\n    >>> 1 + 1\n    2\n    '''\ndoctest.run_docstring_examples(f, {}, verbose=False)",
    "exit_caught": "import sys\ntry:\n    sys.exit(0)\nexcept SystemExit:\n    pass",
    "zoneinfo": "import zoneinfo; zoneinfo.ZoneInfo('UTC')",
    # Red team sandbox4: C libraries that try a socket and carry on without it (libuuid asks uuidd,
    # glibc's NSS asks nscd; the kernel used to kill the jail there), the UTS name through the
    # socket module, and signals to itself (h_uuid1, h_pwd, h_tarfile, h_gethostname, h_selfkill).
    "uuid1": "import uuid; uuid.uuid1()",
    "pwd_unknown_uid": "import os, pwd\ntry:\n    pwd.getpwuid(os.getuid())\nexcept KeyError:\n    pass",
    "tarfile_add": (
        "import io, tarfile\nopen('t.txt', 'w').write('x')\n"
        "with tarfile.open(fileobj=io.BytesIO(), mode='w') as archive:\n    archive.add('t.txt')"
    ),
    "gethostname": "import socket; socket.gethostname()",
    "kill_itself": "import os, signal; signal.signal(signal.SIGUSR2, lambda *a: None); os.kill(os.getpid(), signal.SIGUSR2)",
    "pthread_kill_itself": (
        "import signal, threading; signal.signal(signal.SIGUSR2, lambda *a: None)\n"
        "signal.pthread_kill(threading.get_ident(), signal.SIGUSR2)"
    ),
}


def test_ordinary_stdlib_calls_work_and_leave_no_record() -> None:
    program = f"OPS = {STDLIB!r}\n" + '''
def probe():
    failed = []
    for name, source in OPS.items():
        try:
            exec(source, {"__name__": "__main__"})
        except BaseException as error:
            failed.append(f"{name}: {type(error).__name__}: {error}"[:120])
    return failed
'''
    result = run_tests(program, "def check(candidate):\n    assert candidate() == []\n", "probe")
    assert result.outcome == "pass", f"{result.reason}: {result.cases[0].returned if result.cases else ''}"
    assert result.audit_events == (), result.audit_events


@pytest.mark.parametrize(
    ("path", "recorded"),
    [("/home/dev/.pdbrc", False), ("/etc/no-such-file", False), ("/etc/shadow", True), ("/proc/version", True)],
    ids=["absent_in_home", "absent_in_etc", "present_in_etc", "present_in_proc"],
)
def test_reading_outside_is_recorded_unless_the_path_does_not_exist(path: str, recorded: bool) -> None:
    program = f"def probe():\n    try:\n        open({path!r}).close()\n    except OSError as error:\n        return type(error).__name__\n"
    result = run_tests(program, "def check(candidate):\n    assert candidate() is not None\n", "probe")
    assert result.outcome == "pass", result.reason
    if "landlock" not in result.isolation:
        unavailable("Landlock did not apply here")
    # In a root of its own (`_root.py`) none of them is there: each open fails as for a missing file
    # and leaves no record (the kernel, not the hook, keeps the machine's files out of reach).
    recorded = recorded and "minimal_root" not in result.isolation
    assert ("file_read" in {event["kind"] for event in result.audit_events}) == recorded, result.audit_events


def test_the_private_shm_is_the_jails_own_and_the_rest_of_dev_is_not_writable() -> None:
    marker = f"/dev/shm/sandbox-shm-marker-{os.getpid()}"
    program = f"""
import os
def probe():
    with open({marker!r}, "w") as handle:
        handle.write("x")
    try:
        os.open("/dev/zero", os.O_WRONLY)
        return "wrote /dev/zero"
    except PermissionError:
        return "private"
"""
    result = run_tests(program, "def check(candidate):\n    assert candidate() == 'private'\n", "probe")
    if "private_shm" not in result.isolation or "landlock_writes" not in result.isolation:
        unavailable("the private /dev/shm or Landlock did not apply here")
    assert result.outcome == "pass", f"{result.reason}: {result.cases[0].returned if result.cases else ''}"
    assert not os.path.exists(marker)


STREAMS = """
def probe():
    seen = []
    for path in ("/dev/stdout", "/dev/stderr", "/dev/fd/1"):
        try:
            with open(path, "w") as stream:
                stream.write("x")
            seen.append("written")
        except OSError:
            seen.append("absent")
    return seen
"""


def test_the_standard_streams_by_name_fail_as_without_proc_and_leave_no_record() -> None:
    """Red team sandbox6 `h4`, `h5`: `open('/dev/stderr', 'w')` was recorded as a write outside the
    jail (the shield flagged an honest program). With no /proc they are not there, as on any
    machine without it: the open fails, and nothing is written or recorded."""
    result = run_tests(STREAMS, "def check(candidate):\n    assert candidate() == ['absent'] * 3\n", "probe")
    assert (result.outcome, result.audit_events) == ("pass", ()), result.reason
