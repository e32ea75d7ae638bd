"""A memory, a pids and a cpu cgroup per jail (untrusted side's set-up, standard library only).

These are the jail's bounds, outside the candidate's view: where all three apply, its rlimits are
a login's (`_jail._set_limits`), so no limit it reads tells it that it is being graded. RLIMIT_AS
would bound the address space, not what a jail holds: memfd and tmpfs pages and memory the kernel
charges elsewhere sit outside it. A memory cgroup bounds all of it together (swap included), a
pids cgroup bounds its tasks (threads included), and the cpu controller holds it to one CPU
(`CPU_QUOTA_US` per `CPU_PERIOD_US`), so its CPU time never exceeds its wall time (the parent's
deadline) and a pooled neighbour keeps its core. Both cgroup layouts are supported:
  v1  /sys/fs/cgroup/memory, /sys/fs/cgroup/pids and /sys/fs/cgroup/cpu, each writable
      (memory.limit_in_bytes and memory.memsw.limit_in_bytes where swap is accounted, pids.max,
      cpu.cfs_period_us and cpu.cfs_quota_us), as on these machines;
  v2  the unified /sys/fs/cgroup with the memory, pids and cpu controllers delegated (memory.max,
      memory.swap.max, pids.max, cpu.max).
The fork server makes one directory per server (`sandbox-<pid>`) at start (removing those of
servers that are gone); each run's init
(`_zygote.py`) makes `jail-<n>` below it, sets the limits, enters it before it forks the jail, and
after the jail's exit reads whether the kernel killed anything for memory, and exits inside it.
The server removes the empty directory after it has reported the run's exit, when it has nothing
else to do (`release`, `sweep`): moving a process between cgroups and removing one each wait for
the kernel (an RCU grace period), so neither stays on a run's path. A directory is never reused:
each run's accounting starts from nothing. The jail names `memory_cgroup`, `pids_cgroup` and
`cpu_cgroup` in its isolation record only when its own /proc/self/cgroup shows it in such a
directory (`applied`). Without delegation nothing here
applies, and the run's isolation says so.
"""

import os

MEMORY_LIMIT_STATUS = 88  # the init's exit status when the kernel killed the jail at its memory limit
_V1_MEMORY, _V1_PIDS, _V1_CPU, _V2 = "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup"
CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
CPU_QUOTA_US = CPU_PERIOD_US  # one CPU: the jail's CPU time is at most its wall time
_REMOVE_TRIES = 100  # a directory the kernel still holds busy is tried again, at most this often


def _write(path, text):
    with open(path, "w") as file:
        file.write(text)


class Layout:
    """Where this server's per-jail cgroups go; `bases` is empty when none can be made."""

    def __init__(self):
        self.version, self.bases = None, {}
        self.pending = {}  # directory -> removal tries left: runs that ended, not yet removed
        name = f"sandbox-{os.getpid()}"
        _remove_stale()
        try:
            if os.path.exists(_V2 + "/cgroup.controllers"):
                # v2 lets no process sit in a cgroup that has controllers enabled for its children:
                # only the leaves `jail-<n>` ever hold one (a run's init, until it exits).
                base = f"{_V2}/{name}"
                os.mkdir(base)
                _write(base + "/cgroup.subtree_control", "+memory +pids")
                self.version, self.bases = 2, {"memory": base, "pids": base}
                try:
                    _write(base + "/cgroup.subtree_control", "+cpu")
                    self.bases["cpu"] = base
                except OSError:
                    pass  # not delegated: the jail's isolation lacks cpu_cgroup, and its rlimits stay ours
            elif os.path.isdir(_V1_MEMORY) and os.path.isdir(_V1_PIDS):
                bases = {"memory": f"{_V1_MEMORY}/{name}", "pids": f"{_V1_PIDS}/{name}"}
                if os.path.isdir(_V1_CPU):
                    bases["cpu"] = f"{_V1_CPU}/{name}"
                for base in bases.values():
                    os.mkdir(base)
                self.version, self.bases = 1, bases
        except OSError:
            self.remove()
            self.version, self.bases = None, {}

    @property
    def complete(self):
        """True when every run gets all three controllers (unless making its directories fails:
        the jail checks what applied, `applied`)."""
        return set(self.bases) == set(CONTROLLERS)

    def paths(self, run):
        """The directories of `run`, one per hierarchy (v2: one for all controllers)."""
        return list(dict.fromkeys(f"{base}/jail-{run}" for base in self.bases.values()))

    def enter(self, run, memory_bytes, pids_max):
        """Make `jail-<run>` with the limits and move this process into it; the directories made
        (all of them unless one failed: the jail's isolation record says what applied)."""
        made = []
        try:
            for controller, base in self.bases.items():
                path = f"{base}/jail-{run}"
                if path in made:
                    continue
                os.mkdir(path)
                made.append(path)
                if controller == "memory" or self.version == 2:
                    if self.version == 1:
                        _write(path + "/memory.limit_in_bytes", str(memory_bytes))
                        if os.path.exists(path + "/memory.memsw.limit_in_bytes"):  # swap accounted: none beyond it
                            _write(path + "/memory.memsw.limit_in_bytes", str(memory_bytes))
                    else:
                        _write(path + "/memory.max", str(memory_bytes))
                        _write(path + "/memory.swap.max", "0")
                if controller == "pids" or self.version == 2:
                    _write(path + "/pids.max", str(pids_max))
                if controller == "cpu" or self.version == 2:
                    if self.version == 1:
                        _write(path + "/cpu.cfs_period_us", str(CPU_PERIOD_US))
                        _write(path + "/cpu.cfs_quota_us", str(CPU_QUOTA_US))
                    else:
                        _write(path + "/cpu.max", f"{CPU_QUOTA_US} {CPU_PERIOD_US}")
                _write(path + "/cgroup.procs", str(os.getpid()))
        except OSError:
            pass  # the rest does not apply (the jail's isolation record says which did); the server removes what was made
        return made

    def killed(self, made):
        """True when the kernel killed a task in `made` for memory (read by the run's init, which
        stays inside until it exits)."""
        return any(_oom_kills(path, self.version) > 0 for path in made)

    def release(self, run):
        """`run` has ended (its init was reaped): its directories are to be removed (`sweep`)."""
        for path in self.paths(run):
            self.pending.setdefault(path, _REMOVE_TRIES)

    def sweep(self):
        """Remove the released directories that are gone or empty now; True when some remain (the
        kernel may hold one busy for a moment after its last task was reaped)."""
        for path, tries in list(self.pending.items()):
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass  # never made (the init failed before), or removed already
            except OSError:
                if tries > 1:
                    self.pending[path] = tries - 1
                    continue
            del self.pending[path]
        return bool(self.pending)

    def remove(self):
        for base in set(self.bases.values()):
            try:
                for entry in os.listdir(base):
                    if entry.startswith("jail-"):
                        os.rmdir(f"{base}/{entry}")
                os.rmdir(base)
            except OSError:
                pass


def _remove_stale():
    """Remove what servers that were killed left behind: `sandbox-<pid>` of a pid that is gone."""
    for root in (_V2, _V1_MEMORY, _V1_PIDS, _V1_CPU):
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for entry in entries:
            pid = entry.removeprefix("sandbox-")
            if entry.startswith("sandbox-") and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                stale = Layout.__new__(Layout)
                stale.bases = {"memory": f"{root}/{entry}"}
                stale.remove()


def _oom_kills(path, version):
    name, key = ("memory.oom_control", "oom_kill") if version == 1 else ("memory.events", "oom_kill")
    try:
        with open(f"{path}/{name}") as file:
            for line in file:
                field, _, value = line.partition(" ")
                if field == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def applied():
    """The cgroup measures this process is under: per-jail directories in its /proc/self/cgroup."""
    names: list[str] = []
    try:
        with open("/proc/self/cgroup") as file:
            lines = file.read().splitlines()
    except OSError:
        return names
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "/jail-" not in path or "/sandbox-" not in path:
            continue
        listed = controllers.split(",") if controllers else list(CONTROLLERS)  # v2: one line, "0::/..."
        names += [f"{name}_cgroup" for name in CONTROLLERS if name in listed]
    return sorted(set(names))
