"""The trusted side of the fork server: start it, hand it descriptors, learn when jails exit.

One server (`_zygote.py`) per parent process, started on first use as a fresh, plain `python3`
(no option, so the jail's `sys.flags`, `site` and builtins are an ordinary interpreter's) with the
start-up environment of a login (`SERVER_ENVIRONMENT`: no PYTHON* variable, so `-I` is not needed),
so it holds nothing of this process. It is given three
descriptors per run over a Unix socket and never the job itself (see `_zygote.py` for what a child
can and cannot inherit). Many threads may use the server at once: a reader thread routes each
"started"/"exited" message to the waiting run. Waits are events, not polling, and no signals are
involved, so this works from any thread or Ray actor.

If the server cannot start, dies, or misses a run's start deadline (stopped, wedged: it is then
killed), `ForkServerError` is raised and the executor runs that candidate with a one-shot server
(`launch.start_exec`); the next run starts a new warm server.
"""

from __future__ import annotations

import array
import atexit
import itertools
import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

_ZYGOTE = Path(__file__).with_name("_zygote.py")
_START_TIMEOUT_S = 3.0  # a fork takes milliseconds; a server this late is stopped or wedged
_MAX_MESSAGE = 256

Policy = tuple[str, tuple[str, ...]] | None  # (sandbox root, readable paths), or no confinement


class ForkServerError(RuntimeError):
    """The fork server is unavailable, refused a run, or stopped answering."""


@dataclass
class _Run:
    started: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)
    pid: int | None = None
    returncode: int | None = None
    failure: str | None = None


def available() -> bool:
    """The fork server needs Linux pidfds (5.3+) and descriptor passing over Unix sockets."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open") or not hasattr(socket, "SCM_RIGHTS"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


# What a login's shell hands `python3` at start-up, as far as the interpreter's own configuration
# reads it (locale and UTF-8 mode from LANG, the user site from HOME): the jail's flags and start-up
# modules are those of `python3 main.py` typed there. The jail's full environment is `launch.environment`.
SERVER_ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/home/dev"}


def server_command(*arguments: str) -> list[str]:
    """The fork server's command line: this interpreter, plain (no -S, -B or -I: each would show in
    the jail's `sys.flags`), running `_zygote.py` with `arguments`."""
    return [sys.executable, str(_ZYGOTE), *arguments]


class ForkServer:
    """A running fork server; `run` starts one sandbox child and returns a handle to wait on."""

    def __init__(self, policy: Policy = None) -> None:
        """`policy` is (root, readable paths): the server confines itself to reading those and
        writing under root before it forks anything (see `_landlock.py`); None leaves it unconfined."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The policy goes in on stdin (NUL-separated: root, then readable paths), not the command line.
        confinement = "\0".join([policy[0], *policy[1]]).encode() if policy else b""
        try:
            self._process = subprocess.Popen(
                server_command(str(theirs.fileno())),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env=SERVER_ENVIRONMENT,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        finally:
            theirs.close()
        assert self._process.stdin is not None  # stdin=PIPE
        with self._process.stdin as policy_pipe:
            policy_pipe.write(confinement)  # read at once by the server, before anything else
        self.owner_pid = os.getpid()
        self._socket = ours
        self._lock = threading.Lock()
        self._runs: dict[str, _Run] = {}
        self._ids = itertools.count()
        self.alive = True
        threading.Thread(target=self._read, name="sandbox-fork-server", daemon=True).start()

    def run(
        self, request_fd: int, reply_fd: int, stderr_fd: int, variant: bool = False, cgroup: tuple[int, int] = (0, 0), stderr_bytes: int = 0
    ) -> ForkedRun:
        """Fork a jail on the request pipe's read end and the reply pipe's write end; the
        descriptors are duplicated, not taken. `variant` asks for the differential run's other
        surroundings (another uid range and pid); `cgroup` is (memory bytes, pids) for the run's
        cgroups, (0, 0) for none; `stderr_bytes` the most of the jail's stderr written to
        `stderr_fd` (0: the file-size limit alone bounds it). A server that misses the start deadline (stopped,
        wedged) is killed, so the next run starts a fresh one."""
        job_id = str(next(self._ids))
        run = _Run()
        with self._lock:
            if not self.alive:
                raise ForkServerError("the fork server has exited")
            self._runs[job_id] = run
            try:
                fds = array.array("i", (request_fd, reply_fd, stderr_fd)).tobytes()
                self._socket.sendmsg([f"run {job_id} {int(variant)} {cgroup[0]} {cgroup[1]} {stderr_bytes}".encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            except OSError as error:
                self._runs.pop(job_id, None)
                raise ForkServerError(f"cannot reach the fork server: {error}") from error
        if not run.started.wait(_START_TIMEOUT_S) or run.pid is None:
            self._forget(job_id)
            if run.failure is None:  # no answer at all: the server is not working, replace it
                self.terminate()
            raise ForkServerError(run.failure or "the fork server missed its start deadline")
        return ForkedRun(self, job_id, run)

    def kill(self, job_id: str) -> None:
        with self._lock:
            if self.alive:
                try:
                    self._socket.send(f"kill {job_id}".encode())
                except OSError:
                    pass  # the server is gone, and its children were killed as it went

    def terminate(self) -> None:
        """Kill the server at once (its jails die by their parent-death signal) and mark it dead."""
        with self._lock:
            self.alive = False
        self._process.kill()
        self.close()

    def close(self) -> None:
        """Stop the server; it kills any child still running before it exits."""
        with self._lock:
            self.alive = False
            try:
                self._socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already disconnected
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._socket.close()

    def _forget(self, job_id: str) -> None:
        with self._lock:
            self._runs.pop(job_id, None)

    def _read(self) -> None:
        while True:
            try:
                message = self._socket.recv(_MAX_MESSAGE)
            except OSError:
                message = b""
            try:
                verb, job_id, value = message.decode("ascii", "replace").split(" ", 2)
            except ValueError:
                break  # disconnected, or a message the server never sends: treat it as gone
            with self._lock:
                run = self._runs.pop(job_id, None) if verb != "started" else self._runs.get(job_id)
            if run is None:
                continue
            if verb == "started":
                run.pid = int(value)
                run.started.set()
            elif verb == "exited":
                run.returncode = int(value)
                run.exited.set()
            else:
                run.failure = f"the fork server could not fork: {value}"
                run.started.set()
        with self._lock:
            self.alive = False
            runs, self._runs = list(self._runs.values()), {}
        for run in runs:
            run.failure = run.failure or "the fork server exited"
            run.started.set()
            run.exited.set()


@dataclass
class ForkedRun:
    """A child of the fork server: wait for it, kill its process group, read its exit status."""

    server: ForkServer
    job_id: str
    state: _Run

    @property
    def pid(self) -> int | None:
        return self.state.pid

    def wait(self, timeout_s: float) -> bool:
        """True when the child exited (and was reaped, its process group killed) within the time."""
        return self.state.exited.wait(timeout_s)

    def kill(self) -> None:
        self.server.kill(self.job_id)

    @property
    def returncode(self) -> int | None:
        """Popen-style status (negative: killed by that signal); None if the server died first."""
        return self.state.returncode


_shared: dict[tuple[Policy, bool], ForkServer] = {}
_shared_lock = threading.Lock()


def shared(policy: Policy = None, variant: bool = False) -> ForkServer:
    """This process's fork server for `policy`, started on first use and restarted if it died.
    The differential run's variants fork from a server of their own (`variant`): a process
    started apart, so its hash secret (`PYTHONHASHSEED` unset: drawn at its start) and its address
    layout are its own, as two runs of `python3 main.py` differ in them. Forked from the same
    server, the variant shared them with the first run, and a function right only for one hash
    secret was never caught (red team sandbox10 `x1`)."""
    with _shared_lock:
        server = _shared.get((policy, variant))
        if server is None or not server.alive or server.owner_pid != os.getpid():
            if server is not None and server.owner_pid == os.getpid():
                server.close()  # reap the dead one (a forked copy's server belongs to its parent)
            if not available():
                raise ForkServerError("fork server needs Linux with pidfd_open")
            server = _shared[(policy, variant)] = ForkServer(policy)
            atexit.register(server.close)
        return server
