"""Start one sandbox child and wait for it: forked from the fork server, or a fresh interpreter.

Both give the child the same things: its job on stdin (an unnamed file), stdout to /dev/null,
stderr and the evidence file as descriptors, its own session, a minimal environment (set by the
child from the job under the fork server). Both wait without polling (an event from the server's
reader thread, or a pidfd) and kill the child's whole process group on timeout, so nothing the
candidate started outlives its run. Each returns (returncode, timed out); returncode is Popen-style
(negative: killed by that signal), None when the fork server died before reporting it.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

from tasks.code.sandbox import forkserver

_CHILD = Path(__file__).with_name("_child.py")
KILL_GRACE_S = 5.0


def environment(workdir: str) -> dict[str, str]:
    """The child's whole environment."""
    return {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8"}


def run_forked(
    job_file: IO[bytes], stderr: IO[bytes], evidence_fd: int, wall_s: float, policy: forkserver.Policy
) -> tuple[int | None, bool]:
    """Fork the child from the warm server for `policy`. The server kills the child's process
    group when it exits, and on timeout when asked. Raises ForkServerError when it cannot start."""
    run = forkserver.shared(policy).run(job_file.fileno(), stderr.fileno(), evidence_fd)
    if run.wait(wall_s):
        return run.returncode, False
    run.kill()
    run.wait(KILL_GRACE_S)
    return run.returncode, True


def run_exec(job_file: IO[bytes], stderr: IO[bytes], evidence_fd: int, workdir: str, wall_s: float) -> tuple[int | None, bool]:
    """Start the child as a fresh `python -I -S -B _child.py` (no fork server)."""
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", "-B", str(_CHILD)],
        stdin=job_file,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        cwd=workdir,
        env=environment(workdir),
        pass_fds=(evidence_fd,),
        start_new_session=True,
    )
    try:
        timed_out = not _wait_exit(process, wall_s)
    finally:
        _kill_group(process)
        process.wait()
    return process.returncode, timed_out


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is already gone


def _wait_exit(process: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Block until the child exits or `timeout_s` passes; True when it exited.

    `Popen.wait(timeout)` polls with sleeps that grow to 50 ms, which cost more than the whole
    sandboxed run; a pidfd wakes us the moment the child exits. The fallback (no pidfd: non-Linux
    or kernels before 5.3) is that polling wait.
    """
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(max(0, int(timeout_s * 1000))))
    finally:
        os.close(pidfd)
