"""A real single-node Slurm cluster for the tests: munged, slurmctld and slurmd from Debian's packages.

Everything the cluster writes (config, state, spool, logs, pid files) lives in a temp directory and
its ports are free ones picked here, so it never touches a Slurm the machine already runs; clients
reach it through SLURM_CONF, which sbatch exports into the jobs (so `scontrol requeue` inside a job
talks to this controller). The daemons this fixture started are stopped by PID at the end.

Slurm needs root and Debian's `slurm-wlm` and `munge` packages (.ci/run installs them). Without them
the tests skip with the reason, except under CI=true, where a missing Slurm is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.ci import unavailable

MUNGE_PID = Path("/run/munge/munged.pid")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop(pid: int, timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if it is still there after `timeout` seconds."""
    if not _alive(pid):
        return
    os.kill(pid, 15)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        os.kill(pid, 9)


def _config(root: Path, host: str, node_line: str) -> str:
    return "\n".join(
        [
            "ClusterName=harness-test",
            f"SlurmctldHost={host}",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "AuthType=auth/munge",
            f"StateSaveLocation={root / 'state'}",
            f"SlurmdSpoolDir={root / 'spool'}",
            f"SlurmctldPidFile={root / 'slurmctld.pid'}",
            f"SlurmdPidFile={root / 'slurmd.pid'}",
            f"SlurmctldLogFile={root / 'slurmctld.log'}",
            f"SlurmdLogFile={root / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={root / 'jobcomp.log'}",
            "SchedulerType=sched/backfill",
            "SchedulerParameters=sched_interval=2",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",  # CR_Core_Memory would give each job all memory, one at a time
            "ReturnToService=2",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "KillWait=10",
            f"{node_line} State=UNKNOWN",
            f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


@dataclass
class SlurmCluster:
    """The running cluster: `env` reaches it; `run` calls a Slurm client; `job` reads a job's record."""

    root: Path
    env: dict[str, str]
    pids: list[int] = field(default_factory=list)

    def run(self, *command: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=timeout)

    def submit(self, *command: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
        """`sbatch --parsable ...`; the job id."""
        completed = subprocess.run(
            ["sbatch", "--parsable", *command], env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=60, cwd=cwd
        )
        assert completed.returncode == 0, completed.stderr
        return completed.stdout.strip().split(";")[0]

    def job(self, job_id: str) -> dict[str, str]:
        """`scontrol show job` as key=value pairs (one dict; an array's first task)."""
        shown = self.run("scontrol", "show", "job", "-o", job_id)
        assert shown.returncode == 0, shown.stderr
        first = shown.stdout.splitlines()[0]
        return dict(re.findall(r"(\w+(?::\w+)?)=(\S*)", first))

    def wait(self, job_id: str, timeout: float, until: tuple[str, ...] = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            record = self.job(job_id)
            if record.get("JobState") in until:
                return record
            time.sleep(0.5)
        raise AssertionError(f"job {job_id} not in {until} after {timeout:.0f}s: {self.job(job_id)}\n{self.logs()}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.root.glob("*.log")))

    def cancel_all(self) -> None:
        self.run("scancel", "--user", "root")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.run("squeue", "-h").stdout.strip():
            time.sleep(0.5)


def _start_munge() -> int | None:
    """munged's PID if this call started it; None when one is already answering."""
    if MUNGE_PID.exists() and _alive(int(MUNGE_PID.read_text().split()[0])):
        return None
    subprocess.run(["install", "-d", "-o", "munge", "-g", "munge", "-m", "0755", "/run/munge"], check=True)
    # munged refuses to run as root (its log would be root-owned); the recipe is to run it as munge
    subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True, capture_output=True, timeout=30)
    deadline = time.monotonic() + 10
    while not MUNGE_PID.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return int(MUNGE_PID.read_text().split()[0])


def _read_pid(path: Path, timeout: float = 15) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text().split()[0])
        time.sleep(0.1)
    raise AssertionError(f"{path.name} never appeared")


def _wait_idle(cluster: SlurmCluster, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = cluster.run("sinfo", "-h", "-o", "%T").stdout.strip()
        if state == "idle":
            return
        time.sleep(0.3)
    raise AssertionError(f"the Slurm node never became idle (state {state!r})\n{cluster.logs()}")


@pytest.fixture(scope="session")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    if os.geteuid() != 0:
        unavailable("a single-node Slurm cluster needs root (slurmd launches the jobs)")
    missing = [name for name in ("slurmctld", "slurmd", "sbatch", "scontrol", "munged", "runuser") if shutil.which(name) is None]
    if missing:
        unavailable(f"Slurm is not installed ({', '.join(missing)} missing): apt-get install slurm-wlm munge")
    host = socket.gethostname().split(".")[0]
    try:
        socket.gethostbyname(host)
    except OSError:
        unavailable(f"this host's name {host!r} does not resolve; add it to /etc/hosts")
    root = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (root / sub).mkdir()
    node_line = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    (root / "slurm.conf").write_text(_config(root, host, node_line))
    env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf")}
    cluster = SlurmCluster(root, env)
    munge = _start_munge()
    if munge is not None:
        cluster.pids.append(munge)
    try:
        for daemon, pid_file in (("slurmctld", "slurmctld.pid"), ("slurmd", "slurmd.pid")):
            started = subprocess.run([daemon], env=env, capture_output=True, text=True, timeout=60)
            assert started.returncode == 0, f"{daemon}: {started.stderr}\n{cluster.logs()}"
            cluster.pids.append(_read_pid(root / pid_file))
        _wait_idle(cluster)
        yield cluster
    finally:
        if len(cluster.pids) > (munge is not None):  # slurmctld answers: cancel what is left before stopping
            cluster.cancel_all()
        for pid in reversed(cluster.pids):
            _stop(pid)
