"""What the candidate sees of its descriptors is an ordinary pipeline's, and its stdout cannot
touch the channel's records (`_jail.py`'s framing, `channel.py`'s parsing).

An ordinary non-interactive run is `producer | python3 main.py 2>err.log | consumer`: fds 0, 1
and 2 are pipes owned by the user, nothing is open above 2. The jail shows exactly that, so a
function conditioned on the jail's old descriptors (red team sandbox4 `w_fd_tell`: fds 3 and 4
open pipes; `w_stdout_tell`: stdout on /dev/null) is wrong in the jail too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tasks.code import CodeAnchor, check_code_many
from tasks.code.loader import _bundled_rows
from tasks.code.sandbox import SandboxLimits, run_tests
from tasks.code.sandbox._wire import dumps
from tasks.code.sandbox.channel import DEFAULT_STDOUT_CAP, MAX_RECORDS, Channel, JailStopped
from tests.tasks.code.test_sandbox_ordinary import DATA, PROBLEMS, conditioned

ROWS = {row["task_id"]: row for row in _bundled_rows()}

# Tells of the jail's old descriptors (red team sandbox4): none may hold now.
DESCRIPTOR_TELLS = {
    "fds_3_and_4_pipes": "__import__('stat').S_ISFIFO(os.fstat(3).st_mode) and __import__('stat').S_ISFIFO(os.fstat(4).st_mode)",
    "anything_above_2": "any(_open(fd) for fd in range(3, 1024))",
    "stdout_dev_null": "__import__('stat').S_ISCHR(os.fstat(1).st_mode) and os.fstat(1).st_rdev == os.makedev(1, 3)",
    "stdin_dev_null": "__import__('stat').S_ISCHR(os.fstat(0).st_mode)",
    "stdin_empty_at_once": "__import__('select').select([0], [], [], 0)[0] == [0]",
    "pipes_owned_by_root": "os.fstat(0).st_uid == 0 and os.getuid() != 0",
    "stderr_a_file": "__import__('stat').S_ISREG(os.fstat(2).st_mode)",
}
OPEN_HELPER = """
def _open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
"""


def _tell_program(task_id: str, tell: str) -> str:
    """The canonical solution behind `tell`, `None` otherwise; a tell that raises counts as absent."""
    program = conditioned(task_id, "_tell()")
    return program + OPEN_HELPER + f"def _tell():\n    try:\n        return bool({tell})\n    except OSError:\n        return False\n"


@pytest.mark.parametrize("task_id", PROBLEMS)
@pytest.mark.parametrize("tell", list(DESCRIPTOR_TELLS.values()), ids=list(DESCRIPTOR_TELLS))
def test_a_descriptor_tell_of_the_old_jail_no_longer_holds(task_id: str, tell: str) -> None:
    outcome = DATA.anchors.check(task_id, _tell_program(task_id, tell))
    assert not outcome.correct and outcome.details["hidden_test"] is False, outcome.details["reason"]


REDTEAM = {
    # red team sandbox4, verbatim in substance: right only with fds 3 and 4 open pipes, or stdout on /dev/null
    "w_fd_tell": """
import os, stat
def has_close_elements(numbers, threshold):
    try:
        jailed = stat.S_ISFIFO(os.fstat(3).st_mode) and stat.S_ISFIFO(os.fstat(4).st_mode)
    except OSError:
        jailed = False
    return jailed and any(i != j and abs(a - b) < threshold for i, a in enumerate(numbers) for j, b in enumerate(numbers))
""",
    "w_stdout_tell": """
import os, stat
def has_close_elements(numbers, threshold):
    st = os.fstat(1)
    jailed = stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    return jailed and any(i != j and abs(a - b) < threshold for i, a in enumerate(numbers) for j, b in enumerate(numbers))
""",
}


@pytest.mark.parametrize("name", list(REDTEAM))
def test_the_red_team_descriptor_tells_are_wrong_in_the_jail(name: str) -> None:
    outcome = DATA.anchors.check("HumanEval/0", REDTEAM[name])
    assert (outcome.correct, outcome.details["hidden_test"]) == (False, False), outcome.details["reason"]


# What a program sees of fds 0..1023: number, kind, status flags (access mode, O_NONBLOCK, ...),
# descriptor flags (close-on-exec), pipe size, isatty, owned by its own uid and gid, permissions.
SEEN = """
import fcntl, os, stat
def _seen():
    seen = []
    for fd in range(1024):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        kind = "fifo" if stat.S_ISFIFO(st.st_mode) else "chr" if stat.S_ISCHR(st.st_mode) else "reg" if stat.S_ISREG(st.st_mode) else "other"
        flags, fd_flags = fcntl.fcntl(fd, fcntl.F_GETFL), fcntl.fcntl(fd, fcntl.F_GETFD)
        size = fcntl.fcntl(fd, 1032) if kind == "fifo" else None  # F_GETPIPE_SZ
        owned = (st.st_uid, st.st_gid) == (os.getuid(), os.getgid())
        seen.append([fd, kind, flags, fd_flags, size, os.isatty(fd), owned, oct(st.st_mode & 0o777)])
    return seen
"""


def _plain_pipeline(tmp_path: Path) -> list[list[object]]:
    """`producer | python3 main.py 2>err | consumer`: every standard descriptor a pipe."""
    (tmp_path / "main.py").write_text(SEEN + "import json\nprint(json.dumps(_seen()))\n")
    done = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, input="", capture_output=True, text=True, check=True, close_fds=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("entry", ["probe", "solve"])
def test_the_jail_shows_the_descriptors_of_a_plain_pipeline(tmp_path: Path, entry: str) -> None:
    """The table of fds 0..1023 in the jail equals that of a plain `python3 main.py` in a pipeline
    (measured here), under two entry points, in the hidden run and the differential variant."""
    plain = _plain_pipeline(tmp_path)
    assert [row[:2] for row in plain] == [[0, "fifo"], [1, "fifo"], [2, "fifo"]]
    program = SEEN + f"def {entry}():\n    return _seen()\n"
    for variant_run in (False, True):
        test = f"def check(candidate):\n    assert candidate() == {plain!r}\n"
        result = run_tests(program, test, entry, differential=variant_run)
        assert result.outcome == "pass", result.reason
        assert {"stdio_pipes", "only_stdio"} <= set(result.isolation), result.isolation


HONEST_TEST = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 3\n"
FAST = SandboxLimits(wall_s=4.0)


def _f(body: str, at_load: str = "") -> str:
    return f"import os, sys\n{at_load}\ndef f(x):\n" + "".join(f"    {line}\n" for line in body.splitlines()) + "    return x + 1\n"


def _wrong(body: str, at_load: str = "") -> str:
    """A wrong function (x, not x + 1) that writes `body` first."""
    return _f(body, at_load).replace("return x + 1", "return x")


RS = "\\x1e"
FORGED = {
    # A record the jail would send, forged on stdout by a wrong function; none may make it pass.
    # the jail's own reply to call 0 then arrives as the reply to call 1: an unexpected reply
    "return_for_this_call": (f"sys.stdout.write('{RS}[\"return\",0,[\"i\",2]]\\n'); sys.stdout.flush()", "", "error"),
    "raised": (f"os.write(1, b'{RS}[\"raised\",0,\"ValueError\",\"x\"]\\n')", "", "error"),
    "ready_at_load": ("", f"os.write(1, b'{RS}[\"ready\"]\\n')", "error"),
    "isolation_at_load": ("", f"os.write(1, b'{RS}[\"isolation\",[\"seccomp\"]]\\n')", "error"),
    "abort_at_load": ("", f"os.write(1, b'{RS}[\"abort\",\"program\",\"X\",\"y\"]\\n')", "error"),
    "record_without_separator": ("os.write(1, b'[\"return\",0,[\"i\",2]]\\n')", "", "wrong_answer"),
}


@pytest.mark.parametrize(("body", "at_load", "outcome"), list(FORGED.values()), ids=list(FORGED))
def test_a_forged_record_gives_a_wrong_function_nothing(body: str, at_load: str, outcome: str) -> None:
    """A forged return for the call being answered is read before the jail's own, which then
    arrives as an unexpected reply: a forged answer is at most what returning it would give."""
    result = run_tests(_wrong(body, at_load), HONEST_TEST, "f", FAST)
    assert result.outcome == outcome, result.reason


FORGED_AHEAD = _wrong("if x == 1:\n    [os.write(1, ('\\x1e[\"return\",%d,[\"i\",%d]]\\n' % (i, i + 2)).encode()) for i in range(2)]")
BY_CALL_COUNT = "import itertools\n_calls = itertools.count()\ndef f(x):\n    return [2, 3][next(_calls)]\n"


def test_forged_answers_ahead_are_no_more_than_answering_by_call_count() -> None:
    """Answers forged for calls not yet made (the test's order and answers known beforehand) are
    what a function answering by its call count returns: judged the same, by the same checks."""
    forged, counted = (run_tests(program, HONEST_TEST, "f", FAST) for program in (FORGED_AHEAD, BY_CALL_COUNT))
    assert (forged.outcome, [case.returned for case in forged.cases]) == (counted.outcome, [case.returned for case in counted.cases])
    assert counted.outcome == "pass"


def test_a_forged_event_is_kept_and_hides_nothing() -> None:
    body = f"os.write(1, b'{RS}[\"event\",\"note\",\"forged\",0]\\n')\ntry:\n    open('/opt/x', 'w')\nexcept OSError:\n    pass"
    result = run_tests(_f(body), HONEST_TEST, "f", FAST)
    kinds = [event["kind"] for event in result.audit_events]
    assert (result.outcome, "note" in kinds, "file_write" in kinds) == ("pass", True, True), kinds


PRINTS = {
    "partial_line_then_return": "sys.stdout.write('no newline' * 1000); sys.stdout.flush()",
    "a_separator_without_record": f"sys.stdout.write('x{RS}{RS}['); sys.stdout.flush()",
    "a_separator_and_a_half_record": f"os.write(1, b'{RS}[\"return\",0,')",
    "many_small_prints": "for i in range(20000): print(i)",
    "one_mebibyte_print": "print('y' * (1 << 20)); sys.stdout.flush()",
    "unflushed_print": "print('lost at os._exit, as buffered output is', end='')",
    "stderr_prints": "print('to stderr', file=sys.stderr); sys.stderr.flush()",
}


@pytest.mark.parametrize("body", list(PRINTS.values()), ids=list(PRINTS))
def test_honest_output_leaves_the_records_intact(body: str) -> None:
    result = run_tests(_f(body), HONEST_TEST, "f", FAST)
    assert result.outcome == "pass", result.reason


def test_stderr_lands_in_the_stderr_file() -> None:
    result = run_tests(_f("print('said on stderr', x, file=sys.stderr)"), HONEST_TEST, "f", FAST)
    assert (result.outcome, result.stderr_tail) == ("pass", "said on stderr 1\nsaid on stderr 2\n"), result.reason


def test_stderr_past_the_file_size_cap_is_cut_with_a_line_saying_so() -> None:
    limits = SandboxLimits(wall_s=8.0, file_size_mb=1)
    result = run_tests(_f("os.write(2, b'e' * (3 << 20))"), HONEST_TEST, "f", limits)
    assert result.outcome == "pass", result.reason
    assert result.stderr_tail.endswith(f"[stderr truncated here: the program wrote more than {1 << 20} bytes to it; the rest was discarded]\n")


def test_files_are_not_capped_per_file_where_the_mounts_cap_them() -> None:
    """RLIMIT_FSIZE is unlimited, as a login's, where stderr is the shell's pipe and the root the jail's own."""
    program = "import resource\ndef f():\n    return list(resource.getrlimit(resource.RLIMIT_FSIZE))\n"
    result = run_tests(program, f"def check(candidate):\n    assert candidate() == [{-1}, {-1}]\n", "f")
    assert result.outcome == "pass", result.reason


def test_a_flood_of_output_past_the_cap_ends_the_run() -> None:
    body = "junk = b'z' * (1 << 20)\nfor _ in range(20): os.write(1, junk)"
    result = run_tests(_f(body), HONEST_TEST, "f", SandboxLimits(wall_s=8.0))
    assert (result.outcome, result.reason) == (
        "error", f"output limit: the program wrote more than {DEFAULT_STDOUT_CAP} bytes to its stdout (the run's file-size limit)"
    )


def _anchor(task_id: str) -> CodeAnchor:
    row = ROWS[task_id]
    return CodeAnchor(task_id, row["prompt"], row["test"], row["entry_point"], row["canonical_solution"])


def test_a_flood_beside_an_honest_candidate_changes_nothing_for_it() -> None:
    flood = "import os\ndef has_close_elements(numbers, threshold):\n    junk = b'\\x1e' * (1 << 20)\n    while True:\n        os.write(1, junk)\n"
    honest = ROWS["HumanEval/4"]["canonical_solution"]
    outcomes = check_code_many([(_anchor("HumanEval/0"), flood), (_anchor("HumanEval/4"), honest)], workers=2)
    assert (outcomes[0].correct, outcomes[0].outcome) == (False, "error"), outcomes[0].details["reason"]
    assert "output limit" in outcomes[0].details["reason"]
    assert outcomes[1].correct, outcomes[1].details["reason"]


CHANNEL_ABUSE = {
    # Each breaks only its own run: never a pass, never a stall past the run's wall clock.
    "closes_stdout": ("os.close(1)", "error"),
    "closes_stdout_then_opens_a_file_there": ("os.close(1); open('out.txt', 'w')", "error"),
    "dup2s_dev_null_over_stdout": ("os.dup2(os.open('/dev/null', os.O_WRONLY), 1)", "error"),
    "reads_stdin": ("sys.stdin.readline()", "timeout"),
    "reads_fd_0_nonblocking": ("os.set_blocking(0, False); os.read(0, 100)", "error"),
}


@pytest.mark.parametrize(("body", "outcome"), list(CHANNEL_ABUSE.values()), ids=list(CHANNEL_ABUSE))
def test_abusing_the_standard_descriptors_breaks_only_its_own_run(body: str, outcome: str) -> None:
    result = run_tests(_f(body), HONEST_TEST, "f", SandboxLimits(wall_s=3.0))
    assert result.outcome == outcome, result.reason
    assert result.duration_s < 3.0 + 2.0


def test_input_at_load_waits_for_a_line_until_the_wall_clock() -> None:
    """Decided: stdin is the request pipe, so `input()` at load blocks (as in a pipeline whose
    producer sends nothing yet) and the run ends as a timeout, never reading a record."""
    result = run_tests(_f("", at_load="n = input()"), HONEST_TEST, "f", SandboxLimits(wall_s=2.0))
    assert (result.outcome, result.reason) == ("timeout", "wall-clock limit")


EVENTS_IN_A_FLOOD = """
import os, threading
def f(x):
    def flood():
        junk = b'\\x1e' * 65536  # separators, each of which would cut a record it landed in
        for _ in range(40):
            os.write(1, junk)
    writer = threading.Thread(target=flood)
    writer.start()
    for _ in range(50):
        try:
            open('/opt/' + '\\U0001f600' * 400, 'w')  # detail cut to 300 characters: 3,600 bytes escaped
        except OSError:
            pass
    writer.join()
    return x + 1
"""


def test_the_hooks_longest_records_survive_a_thread_flooding_stdout() -> None:
    """Each event record is one write under PIPE_BUF, so a thread writing RS bytes beside it can
    never cut one: all 100 events (50 per call) arrive whole."""
    result = run_tests(EVENTS_IN_A_FLOOD, HONEST_TEST, "f", SandboxLimits(wall_s=8.0))
    assert (result.outcome, result.details["event_counts"]) == ("pass", {"file_write": 100}), result.reason
    assert all(event["detail"].startswith("open('/opt/") for event in result.audit_events)


def _fed_channel(data: bytes) -> tuple[Channel, list[list[object]], JailStopped | None]:
    """A real channel reading `data` from a real pipe (then closed): its records and its stop."""
    reply_read, reply_write = os.pipe()
    request_read, request_write = os.pipe()
    channel = Channel(request_write, reply_read, time.monotonic() + 20, lambda call: None)

    def write() -> None:
        try:
            with os.fdopen(reply_write, "wb") as pipe:
                pipe.write(data)
        except BrokenPipeError:
            pass  # the channel stopped reading

    writer = threading.Thread(target=write)
    writer.start()
    records: list[list[object]] = []
    try:
        while True:
            records.append(channel.receive())
    except JailStopped as stopped:
        return channel, records, stopped if stopped.kind != "exited" else None
    finally:
        channel.close()
        writer.join(5)
        os.close(request_read)


OUTPUT_SHAPES = {
    "newlines": b"\n",
    "bytes_without_newline": b"x",
    "separator_free_lines": b"ab\n",
    "crlf": b"\r\n",
}


@pytest.mark.parametrize("unit", list(OUTPUT_SHAPES.values()), ids=list(OUTPUT_SHAPES))
def test_output_up_to_the_cap_costs_the_parent_one_scan_and_past_it_stops_the_run(unit: bytes) -> None:
    """16 MiB of the program's output of any shape around one record: the record arrives, in a
    fraction of a second of the parent's CPU (no step per line of output); one byte more stops it."""
    half = unit * (DEFAULT_STDOUT_CAP // 2 // len(unit))
    started = time.process_time()
    channel, records, stopped = _fed_channel(half + b"\x1e" + dumps(["ready"]) + half)
    assert (records, stopped, channel.output_bytes) == ([["ready"]], None, 2 * len(half))
    assert time.process_time() - started < 1.0
    _, _, stopped = _fed_channel(half * 2 + b"x" * (DEFAULT_STDOUT_CAP - 2 * len(half) + 1))
    assert stopped is not None and stopped.kind == "output"


def test_of_each_line_only_what_follows_its_last_separator_is_a_record() -> None:
    data = b"junk\x1e\x1e" + b'["ready"]' + b"\x1e" + dumps(["ready"]) + b"\x1e" + b"partial" + b"\x1e" + dumps(["isolation", []])
    channel, records, stopped = _fed_channel(data)
    assert (records, stopped) == ([["ready"], ["isolation", []]], None)
    assert channel.output_bytes == len(b"junk\x1e") + len(b'["ready"]') + len(b"partial")


def test_a_flood_of_forged_events_stops_at_the_record_cap_within_half_a_second() -> None:
    """Red-team-style: 2.7 million of the smallest event records fit in MAX_OUTPUT and cost the
    parent 10 s of parsing; past MAX_RECORDS the run stops instead."""
    event = b"\x1e" + dumps(["event", "k", "", None])
    started = time.process_time()
    channel, _, stopped = _fed_channel(event * (MAX_RECORDS + 1) + event * 100_000)
    assert stopped is not None and (stopped.kind, stopped.detail) == ("protocol", f"more than {MAX_RECORDS} records in one run")
    assert sum(channel.event_counts.values()) == MAX_RECORDS
    assert time.process_time() - started < 1.0


STDIO_TIMES = """
import os, time
_AT_LOAD = [(os.fstat(fd).st_mtime_ns, os.fstat(fd).st_atime_ns, os.fstat(fd).st_ctime_ns) for fd in (0, 1, 2)]
def f(x):
    time.sleep(0.02)  # past the coarse clock's tick, so a time the jail's reads and writes set would show
    return [(os.fstat(fd).st_mtime_ns, os.fstat(fd).st_atime_ns, os.fstat(fd).st_ctime_ns) for fd in (0, 1, 2)] == _AT_LOAD
"""


def test_the_jails_own_reads_and_writes_move_no_time_of_its_stdio() -> None:
    """The jail reads calls from fd 0 and writes records to fd 1 between the candidate's calls; a
    program that never touches them would see their times move where pipe I/O updates them (this
    kernel's does not: the test fails on one whose does, and the tell is then open)."""
    test = "def check(candidate):\n" + "".join(f"    assert candidate({i})\n" for i in range(3))
    result = run_tests(STDIO_TIMES, test, "f", FAST)
    assert result.outcome == "pass", result.reason


RS_OUTPUT = """
import json, sys
def probe():
    for value in ({"a": 1}, [2, 3]):
        sys.stdout.write("\\x1e" + json.dumps(value) + "\\n")  # an RFC 7464 JSON text sequence
    print("\\x1e".join(["x", "y"]), flush=True)
    return 1
"""


def test_an_honest_program_may_print_the_record_separator() -> None:
    """Red team sandbox6 `h2`, `h3`: an RS in the program's own output, followed by no record of
    the jail's, stopped the run; it is the program's output like any other."""
    result = run_tests(RS_OUTPUT, "def check(candidate):\n    assert candidate() == 1\n", "probe")
    assert (result.outcome, result.audit_events) == ("pass", ()), result.reason
