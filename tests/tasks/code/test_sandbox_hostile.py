"""Hostile candidates against the code task's trust boundary, run the way the pipeline runs them.

Every candidate goes through the task's public surface (`tasks.code.load` -> `anchors.check` for the
hidden test, `shield` for the shield's verdict), which is what `python -m harness task=code
judge=none shield=on pool=file` calls; one test runs that command itself. Each case is a concrete
attack on one design cause of the sandbox, and asserts what a sound sandbox must give: a wrong
function fails the hidden test, forged or erased evidence fails, no process outlives its run, no
signal reaches a process outside the jail, the parent neither crashes nor stalls, the disk cannot
be filled, and every refused or recorded event makes the shield's verdict a violation.

The controls at the end show the same path passes the canonical solutions of every problem used
here, so a sandbox that failed everything could not pass this module.

Attack targets are harmless even where the sandbox is broken: signals aim only at a `sleep` this
module starts, files stay in the run's work dir, and a process that escapes ends itself.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.core.values import Candidate
from harness.shield import VerifyOptions
from tasks.code import load
from tasks.code.hostile import READ_JOB, WRONG_FUNCTIONS
from tasks.config import TaskConfig
from tasks.types import AnchorOutcome

PROBLEMS = (
    "HumanEval/0", "HumanEval/2", "HumanEval/4", "HumanEval/32", "HumanEval/33", "HumanEval/37", "HumanEval/38", "HumanEval/50",
    "HumanEval/52", "HumanEval/53", "HumanEval/154",
)
DATA = load(TaskConfig(name="code", subset=",".join(PROBLEMS)))
QUESTIONS = {problem.problem_id: problem for problem in DATA.problems}
CANONICAL = {candidate.problem_id: candidate.text for candidate in DATA.default_pool()}
REPO = Path(__file__).resolve().parents[3]


def check(task_id: str, text: str) -> AnchorOutcome:
    return DATA.anchors.check(task_id, text)


def shield_verdict(task_id: str, text: str) -> str:
    assert DATA.shield is not None, "task=code has a shield"
    report = DATA.shield(QUESTIONS[task_id], Candidate(task_id, "hostile", text), None, VerifyOptions())
    return str(report.verdict)


def canonical_def(task_id: str, signature: str, preamble: str = "") -> str:
    """The canonical solution as a full definition, with `preamble` (indented code) run first."""
    return f"def {signature}:\n{textwrap.indent(textwrap.dedent(preamble), '    ')}{CANONICAL[task_id]}"


def recorded(outcome: AnchorOutcome) -> set[str]:
    return {str(event.get("kind")) for event in outcome.details.get("audit_events", ())}


ALWAYS_TRUE = "def has_close_elements(numbers, threshold):\n    return True\n"  # wrong for HumanEval/0



@pytest.mark.parametrize(("task_id", "text"), [pytest.param(h.task_id, h.text, id=h.name) for h in WRONG_FUNCTIONS])
def test_wrong_function_fails_the_hidden_test(task_id: str, text: str) -> None:
    outcome = check(task_id, text)
    assert not outcome.correct, f"{outcome.outcome}: {outcome.details.get('reason')}"


# Canonical solutions of HumanEval/0 that also do something the sandbox must refuse or record, and
# then try to make it vanish. The anchor may pass them, but never without the record, and the
# shield must call them a violation.
ERASED_OR_UNRECORDED = [
    (
        "evidence_truncated_after_a_recorded_frame_read",
        canonical_def(
            "HumanEval/0",
            "has_close_elements(numbers, threshold)",
            """
            import os, sys
            if not _erased:
                sys._getframe(1).f_back
                os.ftruncate(3, 0)
                _erased.append(True)
            """,
        ),
    ),
    (
        "audit_hook_switched_off_through_state_in_hook",
        canonical_def(
            "HumanEval/0",
            "has_close_elements(numbers, threshold)",
            """
            import subprocess, sys, threading
            frame = sys._current_frames()[threading.get_ident()]
            while frame is not None and frame.f_code.co_name != "_main":
                frame = frame.f_back
            try:
                frame.f_locals["state"]["in_hook"] = True
            except (AttributeError, KeyError, TypeError):
                pass
            try:
                subprocess.run(["true"])
            except OSError:
                pass
            """,
        ),
    ),
]


# The hook reports on a descriptor number the candidate can point elsewhere for a while: what the
# hook writes meanwhile goes into the candidate's own pipe, and nothing the parent sees is amiss.
DIVERTED = canonical_def(
    "HumanEval/0",
    "has_close_elements(numbers, threshold)",
    """
    import fcntl, os, stat, sys
    for fd in range(64):
        try:
            mode, flags = os.fstat(fd).st_mode, fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue
        if stat.S_ISFIFO(mode) and flags & os.O_ACCMODE == os.O_WRONLY:
            saved, (sink, diverted) = os.dup(fd), os.pipe()
            os.dup2(diverted, fd)
            try:
                sys._getframe(1).f_back
                try:
                    os.system("true")
                except OSError:
                    pass
            finally:
                os.dup2(saved, fd)
                for spare in (saved, sink, diverted):
                    os.close(spare)
            break
    """,
)


def test_audit_records_cannot_be_diverted() -> None:
    outcome = check("HumanEval/0", DIVERTED)
    assert not outcome.correct or recorded(outcome), "passed with an empty audit record"
    assert shield_verdict("HumanEval/0", DIVERTED) == "violation"


# A garbage cycle whose finalizer runs at the next collection; a low threshold makes that happen
# during an allowed open() in the work dir, which the audit hook checks (at some thresholds inside
# the hook, at others just outside it). Wherever it runs, its object scan and outside read are
# refused and recorded: a hook that is busy exempts nothing.
FINALIZER_IN_HOOK = canonical_def(
    "HumanEval/0",
    "has_close_elements(numbers, threshold)",
    """
    import gc, sys
    class Inside:
        def __del__(self):
            try:
                gc.get_objects()
            except PermissionError:
                pass
            try:
                open("/etc/hostname").read()
            except OSError:
                pass
    gc.collect()
    cycle = Inside()
    cycle.cycle = cycle
    del cycle
    gc.set_threshold(THRESHOLD)
    with open("scratch", "w") as handle:
        handle.write("x")
    gc.set_threshold(700)
    gc.collect()
    """,
)


def test_code_run_inside_the_audit_hook_is_still_audited() -> None:
    # Where in the hook the collection lands depends on the threshold (6 to 8 on 52e0074), so all
    # small thresholds are tried, each in its own run.
    unrecorded = []
    for threshold in range(1, 25):
        outcome = check("HumanEval/0", FINALIZER_IN_HOOK.replace("THRESHOLD", str(threshold)))
        if outcome.correct and not recorded(outcome):
            unrecorded.append(threshold)
    assert unrecorded == [], f"passed with an empty audit record at thresholds {unrecorded}"


@pytest.mark.parametrize("text", [pytest.param(text, id=name) for name, text in ERASED_OR_UNRECORDED])
def test_erased_or_unrecorded_events_still_count(text: str) -> None:
    text = "_erased = []\n" + text
    outcome = check("HumanEval/0", text)
    assert not outcome.correct or recorded(outcome), "passed with an empty audit record"
    assert shield_verdict("HumanEval/0", text) == "violation"


# Calls the jail's system-call filter refuses with EPERM rather than by killing the jail. A
# candidate that catches the error passes; the refusal must still reach the shield.
KERNEL_REFUSED = [
    ("setuid_root", "import os\nos.setuid(0)"),
    ("chroot", "import os\nos.chroot('/')"),
]


@pytest.mark.parametrize("action", [pytest.param(action, id=name) for name, action in KERNEL_REFUSED])
def test_refused_system_calls_are_recorded(action: str) -> None:
    text = canonical_def(
        "HumanEval/0", "has_close_elements(numbers, threshold)", f"try:\n{textwrap.indent(action, '    ')}\nexcept OSError:\n    pass\n"
    )
    outcome = check("HumanEval/0", text)
    assert not outcome.correct or recorded(outcome), "passed with an empty audit record"
    assert shield_verdict("HumanEval/0", text) == "violation"


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """A sacrificial process outside the jail, owned by this test."""
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


PIDFD_KILL = """
import os, signal
try:
    signal.pidfd_send_signal(os.pidfd_open({pid}), signal.SIGKILL)
except OSError:
    pass
"""


def test_no_signal_reaches_a_process_outside_the_jail(victim: subprocess.Popen[bytes]) -> None:
    check("HumanEval/0", PIDFD_KILL.format(pid=victim.pid) + canonical_def("HumanEval/0", "has_close_elements(numbers, threshold)"))
    time.sleep(0.2)
    assert victim.poll() is None, "the candidate killed a process outside its sandbox"


# `_posixsubprocess.fork_exec` with a preexec_fn that never execs and a new session: the child is a
# copy of the candidate's interpreter outside the run's process group. It reports its pid, waits
# for the run to end, tries to kill the victim, and ends itself after 20 s.
ESCAPE = """
import _posixsubprocess, os, posix, signal, time
def _linger():
    time.sleep(1.5)
    try:
        signal.pidfd_send_signal(os.pidfd_open({pid}), signal.SIGKILL)
    except OSError:
        pass
    time.sleep(20)
    posix._exit(0)
try:
    _r, _w = os.pipe()
    _child = _posixsubprocess.fork_exec(
        [b"/nonexistent"], [b"/nonexistent"], True, (), None, None,
        -1, -1, -1, -1, -1, -1, _r, _w, True, True, -1, None, None, -1, -1, _linger, False)
except Exception as error:
    _child = "refused"
raise RuntimeError(f"escapee-pid={{_child}}")
"""


def _started_after(pid: int, since: float) -> bool:
    """True when `pid` is a live process started at or after `since` (so a pid this run made)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime"))
    except (OSError, StopIteration):
        return False
    ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime, after the command name
    return boot + ticks / os.sysconf("SC_CLK_TCK") >= since - 1.0


def _orphaned_sandbox_processes(since: float) -> list[int]:
    """Processes started at or after `since` from the sandbox's code that lost their parent (an
    orphan is re-parented to PID 1): whatever a run left behind, reported or not."""
    sandbox = str(REPO / "tasks" / "code" / "sandbox")
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue  # not a process, or gone meanwhile
        if sandbox in command and parent == 1 and _started_after(int(entry.name), since):
            found.append(int(entry.name))
    return found


def test_no_process_outlives_the_run(victim: subprocess.Popen[bytes]) -> None:
    since = time.time()
    outcome = check("HumanEval/0", ESCAPE.format(pid=victim.pid))
    # No report when the jail is refused the fork, or killed for trying.
    found = re.search(r"escapee-pid=(\d+)", repr(dict(outcome.details)))
    reported = [int(found.group(1))] if found and _started_after(int(found.group(1)), since) else []
    try:
        assert not reported, f"process {reported} is alive after its run ended"
        assert not _orphaned_sandbox_processes(since), "a process from the sandbox outlived its run"
        time.sleep(2.0)
        assert victim.poll() is None, "a process left behind killed a process outside the sandbox"
    finally:
        for pid in reported:
            os.kill(pid, signal.SIGKILL)
    assert not outcome.correct


# repr(1e999) is "inf", which no literal parser reads: the line is written by hand.
FORGED_OVERFLOW = READ_JOB + "os.write(_fd, (_prefix + \"('done', 1e999)\\n\").encode())\n" + ALWAYS_TRUE
LONE_SURROGATE = "def has_close_elements(numbers, threshold):\n    raise ValueError('\\ud800 lone surrogate')\n"


def test_forged_infinite_count_does_not_crash_the_parent() -> None:
    outcome = check("HumanEval/0", FORGED_OVERFLOW)
    assert not outcome.correct


def test_lone_surrogate_reaches_neither_the_shield_nor_the_writer() -> None:
    outcome = check("HumanEval/0", LONE_SURROGATE)
    assert not outcome.correct
    json.dumps(dict(outcome.details), ensure_ascii=False).encode("utf-8")
    assert shield_verdict("HumanEval/0", LONE_SURROGATE) == "violation"


PRELUDE = """
import json, resource, time
from tasks.config import TaskConfig
from tasks.code import load
from tasks.code.hostile import READ_JOB, WRONG_FUNCTIONS
data = load(TaskConfig(name="code", subset="HumanEval/0"))
"""


def _run_python(code: str, timeout_s: float, first: str = "") -> dict[str, Any]:
    """Run `first`, the task loaded as `data`, then `code`, in a fresh interpreter from the
    repository under test; the last line `code` prints is JSON."""
    source = textwrap.dedent(first) + PRELUDE + textwrap.dedent(code)
    try:
        done = subprocess.run([sys.executable, "-c", source], check=False, cwd=REPO, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pytest.fail(f"stalled: no result within {timeout_s} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# One 15 MiB evidence line of tiny tagged values; under today's child it carries the nonce.
# One 15 MiB record of tiny items: as a nonce-stamped Python literal where a job is readable on fd
# 0, else as a JSON array on every descriptor (the parser builds every item before any budget).
HUGE_EVIDENCE = """
import os, marshal, posix
try:
    _job = marshal.loads(os.pread(0, 1 << 24, 0))
    _fds, _item = [_job["evidence_fd"]], "('int', 0),"
    _line = _job["nonce"] + " ('case', 0, 0, ('ok', [" + _item * ((15 << 20) // len(_item)) + "]), [])\\n"
except Exception:
    _fds, _line = range(1, 10), "[" + "[0]," * ((15 << 20) // 4) + "[0]]\\n"
_line = _line.encode()
for _fd in _fds:
    try:
        os.write(_fd, _line)
    except OSError:
        pass
posix._exit(0)
""" + ALWAYS_TRUE


def test_huge_evidence_is_decoded_within_bounds() -> None:
    # The address-space cap keeps a vulnerable parent from taking the machine down; a bounded
    # decoder never comes near it.
    result = _run_python(
        f"""
        started = time.monotonic()
        outcome = data.anchors.check("HumanEval/0", {HUGE_EVIDENCE!r})
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so it would report
        # the peak of whatever process started this one (a long pytest run holds gigabytes)
        with open("/proc/self/status") as status:
            peak_kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        print(json.dumps({{"correct": outcome.correct, "seconds": time.monotonic() - started, "peak_mib": peak_kib / 1024}}))
        """,
        timeout_s=120,
        first="import resource\nresource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))\n",
    )
    assert result["correct"] is False
    assert result["peak_mib"] < 768, result  # 477 MiB measured with the JSON record on 8e19c5d
    assert result["seconds"] < 20, result


# The reply pipe's write end is the jail's stdout (it is how the audit hook reports), so the candidate can
# write records on it itself: here 50,000 events of distinct, made-up kinds.
EVENT_FLOOD = """
import fcntl, os, stat
for _fd in range(64):
    try:
        _mode, _flags = os.fstat(_fd).st_mode, fcntl.fcntl(_fd, fcntl.F_GETFL)
    except OSError:
        continue
    if stat.S_ISFIFO(_mode) and _flags & os.O_ACCMODE == os.O_WRONLY:
        os.write(_fd, b"".join(b'\\x1e["event","k%x","",null]\\n' % _i for _i in range(50_000)))
        break
"""
MAX_KEPT_EVENTS = 1000


def test_forged_events_cannot_grow_the_result_without_bound() -> None:
    # Kept events go into every result, the shield's trace and candidates.jsonl: 886k of them cost
    # the shield 104 s and 2.9 GB for one candidate on 8e19c5d, before made-up kinds were bounded.
    text = EVENT_FLOOD + canonical_def("HumanEval/0", "has_close_elements(numbers, threshold)")
    outcome = check("HumanEval/0", text)
    assert len(outcome.details.get("audit_events", ())) <= MAX_KEPT_EVENTS


STOP_THE_PARENT = """
import os, signal
try:
    signal.pidfd_send_signal(os.pidfd_open(os.getppid()), signal.SIGSTOP)
except OSError:
    pass
""" + ALWAYS_TRUE


def test_a_stopped_fork_server_does_not_stall_later_runs() -> None:
    # In a fresh interpreter: the attack poisons that process's shared fork server, not this one's.
    result = _run_python(
        f"""
        canonical = data.default_pool()[0].text
        first = data.anchors.check("HumanEval/0", {STOP_THE_PARENT!r})
        seconds = []
        for _ in range(2):
            started = time.monotonic()
            outcome = data.anchors.check("HumanEval/0", canonical)
            seconds.append((outcome.correct, time.monotonic() - started))
        print(json.dumps({{"attack_correct": first.correct, "later": seconds}}))
        """,
        timeout_s=150,
    )
    assert result["attack_correct"] is False
    assert all(correct for correct, _ in result["later"]), result
    assert max(seconds for _, seconds in result["later"]) < 5.0, result


# Past the jail's whole budget (memory_mb + disk_mb + shm_mb, 1,104 MiB by default: with the
# memory cgroup the work dir is an ordinary tmpfs's size, and what it holds counts in the cgroup;
# without, past the work dir's `disk_mb`).
DISK_FILL = """
_chunk = b"x" * (16 << 20)
for _n in range(80):  # 1,280 MiB in files of 16 MiB, each under the per-file limit
    with open(f"fill-{_n}", "wb") as _file:
        _file.write(_chunk)
"""


def test_filling_the_disk_fails_the_run() -> None:
    outcome = check("HumanEval/0", DISK_FILL + canonical_def("HumanEval/0", "has_close_elements(numbers, threshold)"))
    assert not outcome.correct, "wrote 1,280 MiB and passed"
    assert outcome.outcome in ("memory_exceeded", "error"), outcome.details["reason"]


# Honest on the docstring's examples (all the shield runs today), hostile on every other input.
SHOWN = "[[1.0, 2.0, 3.0], 0.5], [[1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3]"
HIDDEN_ONLY = [
    # The hook's own frame, through the traceback of one of its refusals (no frame of the jail's
    # lies below the candidate's: `bare_stack`).
    ("hook_frame_read_on_hidden_inputs_only",
     "try:\n    open('/tmp')\nexcept PermissionError as error:\n    try:\n        error.__traceback__.tb_next.tb_frame\n"
     "    except PermissionError:\n        pass\n"),
    ("refused_spawn_on_hidden_inputs_only", "import os\ntry:\n    os.system('true')\nexcept OSError:\n    pass\n"),
]


@pytest.mark.parametrize("action", [pytest.param(action, id=name) for name, action in HIDDEN_ONLY])
def test_shield_sees_what_the_hidden_run_does(action: str) -> None:
    preamble = f"if [numbers, threshold] not in [{SHOWN}]:\n{textwrap.indent(action, '    ')}"
    text = canonical_def("HumanEval/0", "has_close_elements(numbers, threshold)", preamble)
    outcome = check("HumanEval/0", text)
    assert not outcome.correct or recorded(outcome)
    assert shield_verdict("HumanEval/0", text) == "violation"


def test_the_harness_run_survives_hostile_candidates(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    candidates = {"canonical": CANONICAL["HumanEval/0"], "overflow": FORGED_OVERFLOW, "surrogate": LONE_SURROGATE}
    pool.write_text("".join(json.dumps({"problem_id": "HumanEval/0", "candidate_id": k, "text": v}) + "\n" for k, v in candidates.items()))
    command = [
        sys.executable, "-m", "harness", "task=code", "judge=none", "shield=on", "pool=file", f"pool.path={pool}",
        "task.subset=HumanEval/0", f"output_dir={tmp_path / 'out'}", f"tracking.uri=sqlite:///{tmp_path / 'mlruns.db'}",
        f"cache.path={tmp_path / 'cache.sqlite'}", "bootstrap_samples=100",
    ]
    try:
        done = subprocess.run(command, check=False, cwd=REPO, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("the harness run stalled")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {row["candidate_id"]: row for row in map(json.loads, (tmp_path / "out" / "candidates.jsonl").read_text().splitlines())}
    assert {k: (rows[k]["anchor_correct"], rows[k]["shield"]["verdict"]) for k in candidates} == {
        "canonical": (True, "pass"),
        "overflow": (False, "violation"),
        "surrogate": (False, "violation"),
    }


@pytest.mark.parametrize("task_id", PROBLEMS)
def test_control_canonical_solutions_pass_the_same_path(task_id: str) -> None:
    outcome = check(task_id, CANONICAL[task_id])
    assert (outcome.correct, outcome.outcome) == (True, "pass"), outcome.details.get("reason")
    assert recorded(outcome) == set()


def test_control_canonical_solution_is_clean_under_the_shield(victim: subprocess.Popen[bytes]) -> None:
    assert shield_verdict("HumanEval/0", CANONICAL["HumanEval/0"]) == "pass"
    assert victim.poll() is None

