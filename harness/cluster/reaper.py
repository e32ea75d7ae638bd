"""Kill what a local Ray cluster leaves behind when the driver dies.

Ray fate-shares its GCS and raylet with the driver that started them, but measured on Ray 2.60 a
driver killed with SIGKILL leaves `ray::DashboardAgent` and `ray::RuntimeEnvAgent` running for good.
So the harness starts this watcher beside a local cluster: it remembers the driver's descendants
(Ray's processes only, polled every half second, by PID and start time so a reused PID is never
hit), and when the driver
goes away, the pipe from it closes and every remembered process still alive is terminated, then
killed. A driver that shuts down cleanly writes `stop` first; the watcher then sweeps the same way
after `ray.shutdown()`, which is harmless when Ray already stopped everything.

Run as `python -m harness.cluster.reaper <driver pid>` with its stdin a pipe from the driver.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time

import psutil

POLL_SECONDS = 0.5
GRACE_SECONDS = 3.0


def _is_ray(process: psutil.Process) -> bool:
    """Ray's own processes: its binaries and workers live under the `ray` package, workers are `ray::...`."""
    command = " ".join(process.cmdline())
    return "ray::" in command or f"{os.sep}ray{os.sep}" in command


def _descendants(driver: psutil.Process, known: dict[int, float]) -> None:
    """Add the driver's Ray descendants to `known` (other children, e.g. sandboxes, are not ours)."""
    try:
        children = driver.children(recursive=True)
    except psutil.Error:
        return
    for child in children:
        if child.pid in known:
            continue
        try:
            if _is_ray(child):
                known[child.pid] = child.create_time()
        except psutil.Error:
            continue


def _alive(known: dict[int, float]) -> list[psutil.Process]:
    found = []
    for pid, created in known.items():
        if pid == os.getpid():
            continue
        try:
            process = psutil.Process(pid)
            if process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except psutil.Error:
            continue
    return found


def sweep(known: dict[int, float]) -> int:
    """Terminate, then kill, every remembered process still alive; how many there were."""
    survivors = _alive(known)
    for process in survivors:
        try:
            process.terminate()
        except psutil.Error:
            pass
    _, still = psutil.wait_procs(survivors, timeout=GRACE_SECONDS)
    for process in still:
        try:
            process.kill()
        except psutil.Error:
            pass
    return len(survivors)


def watch(driver_pid: int) -> None:
    driver = psutil.Process(driver_pid)
    known: dict[int, float] = {}
    stdin = sys.stdin.buffer
    while True:
        _descendants(driver, known)
        ready, _, _ = select.select([stdin], [], [], POLL_SECONDS)
        if ready:
            line = stdin.readline()
            if line.strip() == b"stop":
                time.sleep(POLL_SECONDS)  # let a clean ray.shutdown() finish first
            break  # "stop", or EOF: the driver is gone
    sweep(known)


def start_reaper() -> subprocess.Popen[bytes]:
    """The watcher for this process, in its own session so a signal to our group does not reach it."""
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cluster.reaper", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_reaper(reaper: subprocess.Popen[bytes]) -> None:
    """After a clean shutdown: let the watcher sweep stragglers, and wait for it."""
    try:
        assert reaper.stdin is not None
        reaper.stdin.write(b"stop\n")
        reaper.stdin.close()
    except OSError:
        pass
    try:
        reaper.wait(timeout=30)
    except subprocess.TimeoutExpired:
        reaper.kill()


if __name__ == "__main__":
    watch(int(sys.argv[1]))
