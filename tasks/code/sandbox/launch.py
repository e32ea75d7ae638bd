"""Start one jail: forked from the warm fork server, or from a fresh one-shot server process.

Both give the jail the same things (see `_zygote.py`): the request pipe's read end as its stdin,
the reply pipe's write end as its stdout, a stderr pipe its shell copies into the stderr file, its own PID namespace, session and uid where the platform allows. Each
returns a handle to wait on (an event from the server's reader thread, or a pidfd: no polling, no
signals in this process) and to kill; `returncode` is Popen-style (negative: killed by that
signal), None when the fork server died before reporting it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import select
import subprocess
from typing import Protocol

from tasks.code.sandbox import forkserver


@functools.cache
def require_kernel_module() -> None:
    """Raise when one of the jail's C modules (`_kernel.c`, `_gate.c`, `_subclasses.c`, built by `pip install` on
    Linux with a C compiler) is missing: without them no jail can be set up, and there is no ctypes
    fallback (no jail may hold ctypes: docs/sandbox.md, "No native code in the jail") nor a Python
    audit hook's (a tell: "The audit hook")."""
    for name in ("_kernel", "_gate", "_subclasses"):
        if importlib.util.find_spec(f"tasks.code.sandbox.{name}") is None:
            raise RuntimeError(
                f"the code sandbox needs its C module tasks/code/sandbox/{name}.c built: on Linux, with gcc and the C "
                "library's headers installed (Debian: apt-get install gcc libc6-dev), run `pip install -e .` again"
            )


class Jail(Protocol):
    """A started jail process."""

    def wait(self, timeout_s: float) -> bool: ...

    def kill(self) -> None: ...

    @property
    def returncode(self) -> int | None: ...


# What a user's shell would hand a program it starts; the differential run's variant differs in
# every value, so an answer that depends on any of them shows (`differential.py`). Both LANGs name
# the one locale every glibc system has (C.UTF-8, spelt two ways), so `setlocale(LC_ALL, "")`
# succeeds in both runs.
# A shell exports SHLVL (its depth) and `_` (the program it started) to every program it runs
# (red team sandbox4 `w_env_tell`: an environment without them was a tell both runs shared).
_ENVIRONMENTS = (
    {"HOME": "/home/dev", "USER": "dev", "LOGNAME": "dev", "SHELL": "/bin/bash", "LANG": "C.UTF-8",
     "PATH": "/usr/local/bin:/usr/bin:/bin", "TERM": "xterm-256color", "SHLVL": "1", "_": "/usr/bin/python3"},
    {"HOME": "/home/ci", "USER": "ci", "LOGNAME": "ci", "SHELL": "/bin/sh", "LANG": "C.utf8",
     "PATH": "/usr/bin:/bin:/usr/local/bin", "TERM": "dumb", "SHLVL": "2", "_": "/usr/local/bin/python3"},
)


def environment(workdir: str, variant: bool = False) -> dict[str, str]:
    """The jail's whole environment: an ordinary login's, with PWD the work dir (its cwd) and
    TMPDIR there too (the only place it can write)."""
    return {**_ENVIRONMENTS[int(variant)], "PWD": workdir, "TMPDIR": workdir}


def policy_text(policy: forkserver.Policy) -> bytes:
    """The confinement policy as the server reads it on stdin: root, then readable paths, NUL-separated."""
    return "\0".join([policy[0], *policy[1]]).encode() if policy else b""


def start_forked(
    request_fd: int,
    reply_fd: int,
    stderr_fd: int,
    policy: forkserver.Policy,
    variant: bool = False,
    cgroup: tuple[int, int] = (0, 0),
    stderr_bytes: int = 0,
) -> Jail:
    """Fork the jail from the warm server for `policy`; ForkServerError when it cannot. `cgroup`
    is (memory bytes, pids) for the run's own cgroups, (0, 0) for none; `stderr_bytes` the most
    of the jail's stderr its shell copies into `stderr_fd` (0: no such cap)."""
    return forkserver.shared(policy, variant).run(request_fd, reply_fd, stderr_fd, variant, cgroup, stderr_bytes)


class _OneShot:
    """A one-shot server (`_zygote.py --once`): its exit status is its jail's."""

    def __init__(
        self,
        request_fd: int,
        reply_fd: int,
        stderr_fd: int,
        policy: forkserver.Policy,
        variant: bool,
        cgroup: tuple[int, int],
        stderr_bytes: int,
    ) -> None:
        command = forkserver.server_command("--once", str(request_fd), str(reply_fd), str(stderr_fd))
        self.process = subprocess.Popen(
            [*command, str(int(variant)), str(cgroup[0]), str(cgroup[1]), str(stderr_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=stderr_fd,
            cwd="/",
            env=forkserver.SERVER_ENVIRONMENT,
            pass_fds=(request_fd, reply_fd, stderr_fd),
            start_new_session=True,
        )
        assert self.process.stdin is not None  # stdin=PIPE
        with self.process.stdin as pipe:
            pipe.write(policy_text(policy))

    def wait(self, timeout_s: float) -> bool:
        """Block until the server exits or `timeout_s` passes, on a pidfd (Popen.wait polls)."""
        if self.process.poll() is not None:
            return True
        try:
            pidfd = os.pidfd_open(self.process.pid)
        except OSError:
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                return False
            return True
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            exited = bool(poller.poll(max(0, int(timeout_s * 1000))))
        finally:
            os.close(pidfd)
        if exited:
            self.process.wait()
        return exited

    def kill(self) -> None:
        """Kill the server; its jail dies by its parent-death signal, taking its namespace along."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    @property
    def returncode(self) -> int | None:
        code = self.process.returncode
        return None if code is None else -(code - 128) if code > 128 else code


def start_exec(
    request_fd: int,
    reply_fd: int,
    stderr_fd: int,
    policy: forkserver.Policy,
    variant: bool = False,
    cgroup: tuple[int, int] = (0, 0),
    stderr_bytes: int = 0,
) -> Jail:
    """Start a fresh one-shot server that forks one jail (no warm server involved)."""
    return _OneShot(request_fd, reply_fd, stderr_fd, policy, variant, cgroup, stderr_bytes)
