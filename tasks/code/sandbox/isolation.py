"""The names a run's `isolation` may carry, one per measure the jail applies (see `_jail.py`).

A measure is named only when it really applied in that run: the jail checks each one after
applying it (the uid and capabilities it now has, the descriptors' kinds, access modes and
owners, the filter that loaded) and reports what held. `MEASURES` is the full set, what a root run
on a kernel with Landlock ABI 6+, libseccomp and delegated memory, pids and cpu cgroups (v1 or v2)
gives (as in CI, where
`tests/tasks/code/test_jail.py` fails without one); elsewhere some are missing, and the result says
which.
"""

from __future__ import annotations

MEASURES: dict[str, str] = {
    "pidns": "a PID namespace of its own, below an init and a session-leading parent: nothing outlives the run, no outside pid is visible",
    "netns": "an empty network namespace",
    "tmpfs_workdir": "a size-limited tmpfs work dir in a private mount namespace (aggregate disk cap)",
    "minimal_root": "a root of its own (`_root.py`): read-only binds of the readable paths and four /dev nodes, its work dir and /dev/shm, nothing else of the machine",
    "login_home": "its login's home and accounts: a size-limited tmpfs at HOME, and /etc/passwd and /etc/group naming it",
    "private_shm": "a size-limited /dev/shm of its own (POSIX semaphores and shared memory), shared with no one",
    "unprivileged_uid": "an unprivileged uid and gid of its own, no groups, no capabilities",
    "rlimits": "with the three cgroups, a login's limits (file size apart, no core dumps); without them CPU seconds, address space, descriptors, threads",
    "memory_cgroup": "a memory cgroup of its own: everything it holds (memfd, tmpfs and anonymous pages) within the limit",
    "pids_cgroup": "a pids cgroup of its own: at most `threads` threads besides its own",
    "cpu_cgroup": "a cpu cgroup of its own: at most one CPU, so its CPU time never exceeds the wall clock",
    "landlock": "reads only the standard library and shared libraries",
    "landlock_writes": "writes only in its work dir and its private /dev/shm",
    "landlock_net": "no TCP bind or connect",
    "landlock_signal_scope": "no signals or abstract Unix sockets outside its own Landlock domain",
    "stdio_pipes": "fds 0, 1, 2 are pipes owned by its uid: the request pipe's read end, the reply pipe's write end (framed records beside its output), a stderr pipe its shell drains",
    "only_stdio": "nothing open above fd 2 while candidate code runs",
    "seccomp": "no new processes, exec, ptrace, sockets (but a Unix stream socketpair), or signals outside the jail",
    "audit_hook": "records and refuses what the shield must see",
    "bare_stack": "no frame of the sandbox's below the candidate's: its program and calls are called from C on a thread forked with no Python frame",
}


def missing(isolation: tuple[str, ...] | list[str]) -> list[str]:
    """The measures of `MEASURES` a run's isolation lacks, in `MEASURES` order."""
    return [name for name in MEASURES if name not in isolation]
