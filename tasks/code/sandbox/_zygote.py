"""The fork server (untrusted side): a warm interpreter that forks one sandbox child per job.

Started once per parent process as `python -I -S -B _zygote.py <control_fd>` by `forkserver.py`,
it imports everything a child needs (`_child`, `_hook`, `_landlock`, ctypes), confines its
filesystem access when stdin carries a policy (NUL-separated root and readable paths; Landlock:
read only those paths, write only under the root, inherited by every child), and then only forks,
reaps and kills.
Starting a child costs a fork (about a millisecond) instead of an interpreter start (tens).

What a child can inherit is deliberately nothing: the server never sees a job's content (program,
tests, nonce, work dir). The parent passes three descriptors per job over the control socket
(SCM_RIGHTS: the job file, the evidence file, the stderr file); the child reads the job itself from
its own descriptor after the fork. The server holds only job ids and pids, and it is a fresh
interpreter (exec'd, not forked from the trusted parent), so its memory holds no parent secret.
Each child moves its descriptors to 0-3, closes every other descriptor (the control socket, the
pidfds of its siblings), starts its own session, and then runs `_child._main`, which applies the
network namespace, rlimits, a minimal environment, the work dir and the audit hook before any
candidate code.

Protocol, one ASCII datagram per message (SOCK_SEQPACKET):
  parent -> server: "run <id>" with 3 descriptors | "kill <id>"
  server -> parent: "started <id> <pid>" | "exited <id> <returncode>" | "failed <id> <reason>"
Single-threaded by design: fork is only safe without other threads. A child's process group is
killed when it exits, while its zombie still pins the pid, so a reused pid can never be hit. When
the control socket closes (the parent exited or shut us down), every child group is killed.
"""

import fcntl
import os
import select
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import _child  # noqa: E402  (warm the child's imports: this is the point of the server)
import _hook  # noqa: E402,F401
import _landlock  # noqa: E402,F401
import ctypes  # noqa: E402,F401  (used by _child to unshare the network namespace)
import atexit  # noqa: E402,F401

_MAX_MESSAGE = 256
_DESCRIPTORS = 3
_FIRST_FREE_FD = 4
_FD_CEILING = 1 << 20  # closerange uses close_range(2): the span costs nothing


def _kill(pid):
    for kill, target in ((os.killpg, pid), (os.kill, pid)):
        try:
            kill(target, signal.SIGKILL)  # the group, and the child itself if it has not setsid yet
        except ProcessLookupError:
            pass


def _become_child(fds):
    """In the forked child: descriptors 0-3, nothing else open, own session, then run the job."""
    try:
        os.setsid()
        # Move the three above 0-3 first, so that the dup2s below cannot overwrite one another.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
        devnull = os.open(os.devnull, os.O_RDWR)
        for target, fd in ((0, high[0]), (1, devnull), (2, high[1]), (3, high[2])):
            os.dup2(fd, target)
        os.closerange(_FIRST_FREE_FD, _FD_CEILING)  # control socket, sibling pidfds, the copies above
        _child._main()
    finally:
        os._exit(70)  # _main always ends in os._exit; reaching this line means it raised


class _Server:
    """The control loop: fork on "run", kill on "kill", reap and report each child's exit."""

    def __init__(self, control_fd):
        self.control = socket.socket(fileno=control_fd)
        self.children = {}  # pidfd -> (job id, pid)
        self.poller = select.poll()
        self.poller.register(self.control, select.POLLIN)

    def serve(self):
        try:
            while True:
                for fd, _ in self.poller.poll():
                    if fd in self.children:
                        self._reap(fd)
                    elif not self._handle():
                        return
        except OSError:
            return  # the parent has gone: nothing left to report to
        finally:
            for _, pid in self.children.values():
                _kill(pid)

    def _handle(self):
        """One control message; False when the parent closed the socket."""
        message, ancillary, _, _ = self.control.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(_DESCRIPTORS * 4))
        fds = []
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, len(data) - len(data) % 4, 4))
        if not message:
            return False
        verb, job_id = message.decode("ascii").split()[:2]
        if verb == "run" and len(fds) == _DESCRIPTORS:
            self._fork(job_id, fds)
        elif verb == "run":
            self.control.send(f"failed {job_id} expected-{_DESCRIPTORS}-descriptors".encode())
        elif verb == "kill":
            for running, pid in self.children.values():
                if running == job_id:
                    _kill(pid)
        for fd in fds:
            os.close(fd)
        return True

    def _fork(self, job_id, fds):
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as error:
            self.control.send(f"failed {job_id} {type(error).__name__}".encode())
            return
        if pid == 0:
            _become_child(fds)  # never returns
        pidfd = os.pidfd_open(pid)
        self.children[pidfd] = (job_id, pid)
        self.poller.register(pidfd, select.POLLIN)
        self.control.send(f"started {job_id} {pid}".encode())

    def _reap(self, pidfd):
        job_id, pid = self.children.pop(pidfd)
        self.poller.unregister(pidfd)
        _kill(pid)  # whatever the candidate left in its group dies too; the zombie pins the pid
        _, status = os.waitpid(pid, 0)
        os.close(pidfd)
        self.control.send(f"exited {job_id} {os.waitstatus_to_exitcode(status)}".encode())


if __name__ == "__main__":
    policy = sys.stdin.buffer.read().decode()
    if policy:  # confine before the first fork: every child inherits this layer
        root, *readable = policy.split("\0")
        _landlock.inherited = _landlock.confine_reads(readable, root)
        _landlock.readable_prefixes = _landlock.prefixes(readable)
    _Server(int(sys.argv[1])).serve()
