"""Run one candidate: its program in a fresh jail, the hidden test here, and judge what happened.

Per run: a fresh work dir (a size-limited tmpfs inside the jail), two fresh pipes (the jail's
stdin and stdout), a stderr file (its shell copies the jail's stderr pipe there, up to the
file-size limit; the program's stdout output is capped by the channel at the same size),
and a jail forked from the warm fork server (`launcher="fork_server"`) or from a one-shot server
(`"exec"`, also the fallback when the warm one is unavailable or misses its start deadline). The
jail loads the program and reports `ready`; the trusted test (`runner.py`) then calls the entry
point through the channel (`channel.py`). One wall-clock deadline bounds the whole run, every wait
included; when the test ends, or the deadline passes, the jail is told to end and then killed,
and with it its whole PID namespace.

The parent records what it observed itself, as events nothing in the jail can erase:
  exit              the jail exited while the test still needed it (os._exit, posix._exit, a
                    crash, C-level exit): the run fails
  kernel_refusal    the kernel killed the jail for a forbidden system call (SIGSYS from seccomp)
  evidence_tampering  the jail ended itself because its audit records were being diverted
Exit status is never evidence of a pass.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tasks.code.sandbox._cgroup import MEMORY_LIMIT_STATUS
from tasks.code.sandbox._hook import CPU_LIMIT_STATUS, DIVERTED_STATUS
from tasks.code.sandbox._wire import WireError, decode, dumps, encoder, safe_text
from tasks.code.sandbox.channel import Channel, JailStopped
from tasks.code.sandbox.confinement import readable_paths, sandbox_root
from tasks.code.sandbox.differential import combine, differing_answer, variant_limits
from tasks.code.sandbox.forkserver import ForkServerError
from tasks.code.sandbox.instrument import InstrumentedTest, instrument
from tasks.code.sandbox.launch import Jail, environment, require_kernel_module, start_exec, start_forked
from tasks.code.sandbox.reference import Reference
from tasks.code.sandbox.result import CaseResult, ExecutionResult, Outcome
from tasks.code.sandbox.runner import CandidateFailure, CheckRun, run_check

Launcher = Literal["fork_server", "exec"]
Replay = Sequence[tuple[tuple[Any, ...], dict[str, Any]]]
_STDERR_TAIL = 2000
_END_GRACE_S = 1.0
_KILL_GRACE_S = 5.0


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. Defaults fit HumanEval: 10 s wall (the whole run, test included), 10 s CPU,
    1 GiB of memory, 16 MiB per file, 64 MiB of work-dir disk in all, 16 MiB of private
    /dev/shm (with the memory cgroup, the shares of its budget that files may take), 4096 descriptors, 16,384 threads besides the jail's own (twice as many in the
    variant; the memory cgroup bounds what they hold).

    How each is bounded depends on the cgroups (docs/sandbox.md, "Limits"). Where the memory, pids
    and cpu cgroups apply (`_cgroup.py`; CI requires them), the jail's rlimits as it reads them are
    a login's (the machine's own, with no core dumps) and the kernel bounds it from outside its
    view: `memory_mb` + `disk_mb` + `shm_mb` is its memory cgroup's limit (anonymous, memfd and
    tmpfs pages together; the work dir, HOME and /dev/shm are then tmpfs mounts of an ordinary
    tmpfs's size, so that no size of the jail's shows), `threads` + 4 its pids cgroup's (the init, the jail's parent and its
    forking thread, the jail),
    one CPU its cpu cgroup's, so its CPU time never exceeds its wall time; `open_files` is then
    not applied (the login's descriptor limit is). Without them they are rlimits, as the only
    bound there is: RLIMIT_CPU `cpu_s`, RLIMIT_AS `memory_mb`, RLIMIT_NOFILE `open_files` (soft a
    quarter of it) and RLIMIT_NPROC `threads` + 1 of the jail's own uid. In both, the parent's
    deadline is `deadline_s`, min(`wall_s`, `cpu_s`): on one CPU a run's CPU time is at most its
    wall time, so `cpu_s` is a bound on the whole run there and stays one where the cgroups do not
    apply (a multi-threaded jail may reach RLIMIT_CPU before it). RLIMIT_FSIZE `file_size_mb`
    applies in both.
    `unshare_network` asks for an empty network namespace. `launcher` is "fork_server" (fast;
    falls back to "exec" where unavailable) or "exec" (a fresh one-shot server per run); the
    result's `details["launcher"]` says which ran. `confine_filesystem` limits reads to the
    standard library and shared libraries and writes to the work dir (Landlock)."""

    wall_s: float = 10.0
    cpu_s: int = 10
    memory_mb: int = 1024
    file_size_mb: int = 16
    disk_mb: int = 64
    shm_mb: int = 16
    open_files: int = 4096
    # Far above what any honest program starts: the memory cgroup is what bounds a thread bomb (its
    # threads' stacks and states), so a probe cannot find the cap without ending its own run
    # (red team sandbox6 `t3`: 200 threads hit a cap of 40, 80 in the variant, in both runs).
    threads: int = max(16_384, (os.cpu_count() or 1) + 8)
    unshare_network: bool = True
    launcher: Launcher = "fork_server"
    confine_filesystem: bool = True

    def __post_init__(self) -> None:
        if self.launcher not in ("fork_server", "exec"):
            raise ValueError(f"SandboxLimits.launcher: {self.launcher!r} is not 'fork_server' or 'exec'")

    @property
    def deadline_s(self) -> float:
        """The parent's deadline for the whole run: `wall_s`, or `cpu_s` when it is smaller (one
        CPU's worth of `cpu_s` seconds is all the cpu cgroup lets a jail burn in that time)."""
        return min(self.wall_s, float(self.cpu_s))


def run_tests(
    program: str,
    test_source: str,
    entry_point: str,
    limits: SandboxLimits = SandboxLimits(),
    *,
    helpers: str = "",
    min_cases: int = 1,
    replay: Replay = (),
    reference: Reference | None = None,
    differential: bool = False,
    calls: Sequence[tuple[Any, Any]] | None = None,
) -> ExecutionResult:
    """Execute `program` (the candidate module) in a jail against a HumanEval-style
    `check(candidate)` test run here, with `helpers` (the reference program: the prompt and the
    canonical solution, or the prompt alone) as the test's pristine namespace.

    A pass needs at least `min_cases` asserts evaluated (`profile.measure` gives the number a
    correct solution reaches). `replay` calls are made first, unjudged (the shield's hidden
    inputs). With `reference` (the canonical answers, `TestProfile.reference`), a pass also needs
    every hidden call answered as the reference answers (`reference.py`); `details` then carries
    `reference_check` (True/False), `hidden_test` (the asserts' own verdict) and `disagreement`
    (the two differ). With `differential`, a run that passed is repeated in a jail whose
    surroundings differ, which must pass and, when `reference` is given, give the same answers
    (`differential.py`): otherwise the run
    fails as `environment_dependent`. `calls`: the test's calls (wire-tagged (args, kwargs), as
    `TestProfile.inputs`), which the jail's test file is written with before the program runs, as
    a test file holds its calls; the reference's inputs by default. Raises ValueError when the *test* has no instrumentable `check` (a data
    problem, not the candidate's); everything the candidate does is reported in the result.
    """
    require_kernel_module()
    test = instrument(test_source)
    planned = _planned(replay, calls if calls is not None else reference.inputs if reference is not None else ())
    if not differential:
        return _launch(_Run(program, test, entry_point, limits, helpers, min_cases, replay, reference, None, planned=planned))
    # The variant runs after the first run has passed, never beside it: two jails of one candidate
    # that overlap in time could sense each other (a lock or a watch on a file both read, the load
    # they put on the machine), and "a copy of me runs now" is a tell only differential execution
    # shows, so it would defeat the check it is part of (red team sandbox3 `a_twin_flock`).
    first_answers: list[tuple[Any, Any]] = []
    first = _launch(_Run(program, test, entry_point, limits, helpers, min_cases, replay, reference, first_answers, planned=planned))
    if not first.passed:
        return first  # a run that failed cannot gain from recognising the jail: no variant
    variant = _Run(program, test, entry_point, limits, helpers, min_cases, replay, None, [], variant=True, planned=planned)
    second = _launch(variant)
    # The first run's answers are the variant's reference only where answers are unique (a
    # reference exists); on a problem that accepts several (HumanEval/32: any root), the variant is
    # judged by the hidden test alone, the task's own predicate, so a valid different answer is not
    # `environment_dependent`.
    mismatch = differing_answer(first_answers, variant.record or []) if reference is not None and second.passed else None
    return combine(first, second, mismatch)


@dataclass(frozen=True)
class _Run:
    """One jail's run: what `_attempt` needs. `variant` is the differential run's (other
    surroundings); `record` collects the judged calls' answers."""

    program: str
    test: InstrumentedTest
    entry_point: str
    limits: SandboxLimits
    helpers: str
    min_cases: int
    replay: Replay
    reference: Reference | None
    record: list[tuple[Any, Any]] | None
    variant: bool = False
    planned: tuple[tuple[Any, Any], ...] = ()


# The most of the planned calls a job carries (encoded): past it the test file holds none.
_PLANNED_BYTES = 1 << 20


def _planned(replay: Replay, calls: Sequence[tuple[Any, Any]]) -> tuple[tuple[Any, Any], ...]:
    """The calls the jail's test file is written with: the replayed ones, which are made first,
    then the test's; none where they would make the job larger than `_PLANNED_BYTES`."""
    encode, reset = encoder()
    replayed = []
    for args, kwargs in replay:
        reset()
        replayed.append((encode(tuple(args)), encode(dict(kwargs))))
    planned = (*replayed, *((args, kwargs) for args, kwargs in calls))
    return planned if len(dumps(["calls", list(planned)])) <= _PLANNED_BYTES else ()


def _launch(run: _Run) -> ExecutionResult:
    """`_attempt` with the warm fork server, falling back to a one-shot server."""
    if run.limits.launcher == "fork_server":
        try:
            return _attempt("fork_server", run)
        except ForkServerError:
            pass  # unavailable or unresponsive: run it with a one-shot server instead
    return _attempt("exec", run)


class _JailCaller:
    """The runner's caller over a channel: one request, one reply, each value checked."""

    def __init__(self, channel: Channel, calls: list[int | None]) -> None:
        self.channel, self.calls = channel, calls
        self.encode, self.reset = encoder()

    def __call__(self, args: tuple[Any, ...], kwargs: dict[str, Any], case: int | None) -> Any:
        call_id = len(self.calls)
        self.calls.append(case)
        self.reset()
        try:
            self.channel.send(["call", call_id, self.encode(tuple(args)), self.encode(dict(kwargs))])
            reply = self.channel.receive()
        except JailStopped as stopped:
            raise CandidateFailure("stopped", stopped.detail, stopped.kind) from None
        if len(reply) == 3 and reply[0] == "return" and reply[1] == call_id:
            try:
                return decode(reply[2])
            except WireError as error:
                raise CandidateFailure("opaque", f"call {call_id} returned {error}") from None
        if len(reply) == 4 and reply[0] == "raised" and reply[1] == call_id and type(reply[2]) is str and type(reply[3]) is str:
            cause = safe_text(reply[2], 100)
            raise CandidateFailure("raised", f"{cause}: {safe_text(reply[3])}", cause)
        raise CandidateFailure("stopped", f"unexpected reply to call {call_id}", "protocol")


def _attempt(launcher: Launcher, run: _Run) -> ExecutionResult:
    limits = run.limits
    started = time.monotonic()
    deadline = started + limits.deadline_s
    applied = {k: getattr(limits, k) for k in ("cpu_s", "memory_mb", "file_size_mb", "open_files", "disk_mb", "shm_mb", "threads")}
    workdir = tempfile.mkdtemp(prefix="job-" if run.variant else "tmp", dir=sandbox_root())
    policy = (sandbox_root(), readable_paths()) if limits.confine_filesystem else None
    request_r, request_w = os.pipe2(os.O_CLOEXEC)
    reply_r, reply_w = os.pipe2(os.O_CLOEXEC)
    calls: list[int | None] = []
    file_size = limits.file_size_mb * 1024 * 1024  # the cap on its stdout (here) and its stderr (its shell)
    channel = Channel(request_w, reply_r, deadline, lambda call: calls[call] if 0 <= call < len(calls) else None, file_size)
    jail: Jail | None = None
    try:
        with tempfile.TemporaryFile() as stderr:
            try:
                start = start_forked if launcher == "fork_server" else start_exec
                seen = variant_limits(applied) if run.variant else applied
                # The memory cgroup holds the address space's worth and the work dir's tmpfs pages.
                # Its pids: the init, the jail's parent and the thread that forked the jail, the jail
                # and its threads.
                cgroup = ((seen["memory_mb"] + seen["disk_mb"] + seen["shm_mb"]) * 1024 * 1024, seen["threads"] + 4)
                jail = start(request_r, reply_w, stderr.fileno(), policy, run.variant, cgroup, file_size)
            finally:
                os.close(request_r)
                os.close(reply_w)
            job = {
                "workdir": workdir,
                "program": run.program,
                "entry_point": run.entry_point,
                "environment": environment(workdir, run.variant),
                "unshare_network": limits.unshare_network,
                "limits": seen,
                "calls": [list(call) for call in run.planned],
            }
            verdict = _Verdict(channel, run.min_cases, limits)
            verdict.run(job, run, _JailCaller(channel, calls))
            verdict.killed = _finish(channel, jail, verdict.stop_kind)
            stderr.seek(0, os.SEEK_END)
            stderr.seek(max(0, stderr.tell() - _STDERR_TAIL))
            stderr_tail = safe_text(stderr.read().decode("utf-8", "replace"), _STDERR_TAIL)
    finally:
        if jail is not None and jail.returncode is None:
            jail.kill()
        channel.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return verdict.result(jail.returncode, time.monotonic() - started, stderr_tail, launcher)


def _finish(channel: Channel, jail: Jail, stop_kind: str | None) -> bool:
    """Tell a jail that still answers to end, and give one that closed its reply pipe a moment to
    exit, so that the status the parent reads is the jail's own (a CPU limit, a diverted record);
    kill it at once after a timeout or a protocol breach, and whenever it does not end in time.
    True when the parent killed it."""
    if stop_kind is None:
        try:
            channel.send(["end"])
        except JailStopped:
            pass  # it ended on its own
    if stop_kind not in (None, "exited") or not jail.wait(_END_GRACE_S):
        jail.kill()
        jail.wait(_KILL_GRACE_S)
        return True
    return False


class _Verdict:
    """Drives one run through the channel and decides its outcome from what the parent saw."""

    def __init__(self, channel: Channel, min_cases: int, limits: SandboxLimits) -> None:
        self.channel, self.min_cases = channel, max(1, min_cases)
        self.timeout_reason = "wall-clock limit" if limits.wall_s <= limits.cpu_s else "CPU-time limit (cpu_s seconds on one CPU)"
        self.isolation: tuple[str, ...] = ()
        self.abort: str | None = None
        self.abort_phase: str | None = None
        self.stop_kind: str | None = None
        self.stop_detail = ""
        self.check = CheckRun()
        self.killed = False  # by the parent (`_finish`); a SIGKILL it did not send is the CPU limit's

    def run(self, job: dict[str, Any], run: _Run, caller: _JailCaller) -> None:
        try:
            self.channel.send(["job", job])
            first = self.channel.receive()
            if first[0] != "isolation" or len(first) != 2 or type(first[1]) is not list:
                raise JailStopped("protocol", "no isolation record")
            self.isolation = tuple(sorted(safe_text(name, 40) for name in first[1] if type(name) is str))
            loaded = self.channel.receive()
        except JailStopped as stopped:
            self.stop_kind, self.stop_detail = stopped.kind, stopped.detail
            return
        if loaded[0] == "abort" and len(loaded) == 4 and all(type(part) is str for part in loaded[1:]):
            self.abort_phase = safe_text(loaded[1], 20)
            self.abort = f"{self.abort_phase}: {safe_text(loaded[2], 100)}: {safe_text(loaded[3])}"
            return
        if loaded != ["ready"]:
            self.stop_kind, self.stop_detail = "protocol", "no ready record"
            return
        self.check = run_check(run.test, run.helpers, run.entry_point, caller, run.replay, run.reference, run.record)
        if self.check.stopped is not None:
            self.stop_kind, self.stop_detail = self.check.stopped.cause, self.check.stopped.reason

    def result(self, returncode: int | None, duration: float, stderr_tail: str, launcher: str) -> ExecutionResult:
        cases = self.check.cases
        test_index = len(cases) - 1 if cases else None
        if returncode == -signal.SIGSYS:
            self.channel.record_event("kernel_refusal", "the kernel killed the jail for a forbidden system call (seccomp)", test_index)
        elif returncode == DIVERTED_STATUS:
            self.channel.record_event(
                "evidence_tampering",
                "the audit hook could not keep its records: its descriptor closed or replaced, its sealed state changed,"
                " or its judgement interrupted three times",
                test_index,
            )
        elif self.stop_kind == "exited" and returncode is not None and returncode not in (
            CPU_LIMIT_STATUS, MEMORY_LIMIT_STATUS, -signal.SIGXCPU, -signal.SIGKILL
        ):
            self.channel.record_event("exit", f"the jail exited with status {returncode} during the test", test_index)
        outcome, reason = self._decide(returncode)
        checked: dict[str, Any] = {}
        if self.check.reference is not None:
            held = self.check.reference.held()
            checked = {"reference_check": held, "hidden_test": outcome == "pass", "disagreement": False}
            if outcome == "pass" and not held:
                mismatch = self.check.reference.mismatch or "fewer calls were answered than the reference answers"
                outcome, reason = "wrong_answer", f"the hidden test's asserts held, but {mismatch}"
                checked["disagreement"] = True
            elif outcome == "wrong_answer" and held:
                checked["disagreement"] = True
            if self.check.reference.mismatch:
                checked["reference_mismatch"] = self.check.reference.mismatch
        details = {
            "launcher": launcher,
            "aborts": [self.abort] if self.abort else [],
            "abort_phase": self.abort_phase,
            "event_counts": dict(self.channel.event_counts),
            "calls": self.check.calls,
            "min_cases": self.min_cases,
            **checked,
        }
        return ExecutionResult(
            outcome, reason, tuple(cases), tuple(self.channel.events), round(duration, 4), self.isolation, returncode,
            stderr_tail, details,
        )

    def _decide(self, returncode: int | None) -> tuple[Outcome, str]:
        failure = self.check.failure
        errors = [self.abort or "", failure.reason if failure else ""]
        if self.stop_kind == "timeout" or returncode in (-signal.SIGXCPU, CPU_LIMIT_STATUS):
            return "timeout", self.timeout_reason if self.stop_kind == "timeout" else "CPU-time limit"
        if returncode == -signal.SIGKILL and not self.killed:  # a handler kept SIGXCPU from ending it
            return "timeout", "CPU-time hard limit (the kernel killed the jail)"
        if any("MemoryError" in error for error in errors) or returncode == -signal.SIGSEGV:
            return "memory_exceeded", "address-space limit"
        if returncode == MEMORY_LIMIT_STATUS:
            return "memory_exceeded", "memory cgroup limit (the kernel killed the jail)"
        if returncode == -signal.SIGSYS:
            return "error", "the kernel killed the jail for a forbidden system call"
        if returncode == DIVERTED_STATUS:
            return "error", "the jail diverted its audit records"
        if self.stop_kind == "output":
            return "error", f"output limit: {self.stop_detail} (the run's file-size limit)"
        if self.stop_kind is not None:
            return "error", f"the jail stopped answering ({self.stop_kind}: {self.stop_detail}), status {returncode}"
        if self.abort:
            return "error", self.abort
        cases = self.check.cases
        if failure is not None and failure.kind == "raised":
            at = f"case {_first_failed(cases)} " if cases else ""
            return "error", f"{at}raised {failure.reason}"
        if failure is not None:
            return "wrong_answer", f"case {_first_failed(cases)}: {failure.reason}"
        if self.check.assertion_failed or self.check.test_error:
            if not cases:
                return "error", f"the hidden test raised {self.check.test_error or 'AssertionError'} before any assert"
            last = cases[-1]
            return "wrong_answer", f"case {last.index} (assert #{last.site}, line {last.line}) failed: {last.error}"
        if len(cases) < self.min_cases:
            return "error", f"{len(cases)} asserts ran; a correct solution makes {self.min_cases} run"
        return "pass", f"{len(cases)} asserts ran and held"


def _first_failed(cases: Sequence[CaseResult]) -> int | None:
    """The index of the first failed case."""
    return next((case.index for case in cases if not case.passed), None)
