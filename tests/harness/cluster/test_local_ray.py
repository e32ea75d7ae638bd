"""Judging on a real local Ray cluster: replicas that die mid-run, and drivers that crash.

Each test runs `python -m harness cluster=local ...` as its own process, the way users do, and
reaches into it only from outside: replica process ids from `replicas.jsonl`, progress from the
call cache, signals by PID.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.support.runs import cached_calls

ROOT = Path(__file__).resolve().parents[3]
RUN = ["limit=6", "judge=llama_tiny", "judge.members.llama_tiny.batch_size=4", "tracking.enabled=false", "seed=3"]


def _start(tmp_path: Path, name: str, *overrides: str) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / name
    command = [sys.executable, "-m", "harness", *RUN, f"output_dir={out}", f"cache.path={tmp_path / name}.sqlite", *overrides]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return process, out


def _finish(process: subprocess.Popen[str], timeout: float = 600) -> str:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-3000:]
    return output


def _wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _events(out: Path) -> list[dict]:
    path = out / "replicas.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _ray_processes(root_pid: int) -> dict[int, float]:
    """Ray's processes under `root_pid`: (pid -> start time), so a reused PID is never mistaken."""
    found = {}
    try:
        children = psutil.Process(root_pid).children(recursive=True)
    except psutil.Error:
        return found
    for child in children:
        try:
            command = " ".join(child.cmdline())
            if "ray::" in command or f"{os.sep}ray{os.sep}" in command:
                found[child.pid] = child.create_time()
        except psutil.Error:
            continue
    return found


def _alive(processes: dict[int, float]) -> list[int]:
    alive = []
    for pid, created in processes.items():
        try:
            process = psutil.Process(pid)
            if process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.Error:
            continue
    return alive


def _state(pid: int) -> str:
    """The kernel's one-letter state of `pid` ("T" once SIGSTOP has frozen it)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_killing_a_busy_replica_mid_run_changes_nothing_in_the_summary(tmp_path: Path) -> None:
    baseline, baseline_out = _start(tmp_path, "undisturbed", "cluster=inline")
    _finish(baseline)

    # 24 prompts in 6 batches of 4 over 2 replicas, at most 2 batches each in flight: the first fill
    # gives every replica work. Without stealing, no other replica can take the victim's batches.
    process, out = _start(tmp_path, "disturbed", "cluster=local", "cluster.steal=false", "judge.members.llama_tiny.resources.replicas=2")
    started = _wait_for(lambda: [e for e in _events(out) if e["event"] == "started"] if len(_events(out)) >= 2 else None, 180, "2 replicas")
    ray_processes = _ray_processes(process.pid)
    victim = started[0]
    # The pool writes "started" before it submits any batch, and a batch of 4 judgments takes seconds:
    # frozen now, the victim holds its first-fill batches and can answer none of them.
    os.kill(victim["pid"], signal.SIGSTOP)
    _wait_for(lambda: _state(victim["pid"]) == "T", 10, "the victim to stop")
    # mid-run: the other replica goes on answering while the victim's batches wait on it
    _wait_for(lambda: cached_calls(tmp_path / "disturbed.sqlite") >= 4, 180, "the other replica's first answered batch")
    assert cached_calls(tmp_path / "disturbed.sqlite") < 24
    assert _state(victim["pid"]) == "T"
    os.kill(victim["pid"], signal.SIGKILL)
    output = _finish(process)

    events = [(e["replica"], e["event"]) for e in _events(out)]
    # The pool records a death only when a batch submitted to that replica fails: proof the victim was busy.
    assert [replica for replica, event in events if event == "died"] == [victim["replica"]], events
    assert (victim["replica"], "restarted") in events, events
    restarted = next(e for e in _events(out) if e["event"] == "restarted")
    assert restarted["pid"] != victim["pid"]
    summary = json.loads((out / "summary.json").read_text())
    expected = json.loads((baseline_out / "summary.json").read_text())
    assert summary == expected
    # every batch answered exactly once: 24 calls made, 24 committed, nothing answered twice
    assert summary["judge_calls"] == 24 and cached_calls(tmp_path / "disturbed.sqlite") == 24
    assert "Traceback" not in output
    # the run stopped its own Ray cluster: nothing it started is left
    _wait_for(lambda: not _alive(ray_processes), 30, "the run's Ray processes to exit")


def test_a_crashed_driver_leaves_no_ray_processes_behind(tmp_path: Path) -> None:
    process, out = _start(tmp_path, "crashed", "cluster=local")
    _wait_for(lambda: _events(out), 180, "a replica to start")
    ray_processes = _ray_processes(process.pid)
    assert any("raylet" in " ".join(psutil.Process(pid).cmdline()) for pid in ray_processes)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    _wait_for(lambda: not _alive(ray_processes), 45, "Ray processes of the dead driver to exit")
    assert not (out / "summary.json").exists()


def test_a_layout_the_cluster_cannot_hold_is_refused_in_one_line(tmp_path: Path) -> None:
    process, out = _start(tmp_path, "too-big", "cluster=local", "cluster.num_cpus=1", "judge.members.llama_tiny.resources.replicas=2")
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 2, output[-2000:]
    assert output.strip().splitlines()[-1] == (
        "error: judge.members.llama_tiny needs 2 CPUs for 2 replica(s) but the Ray cluster has 1 left "
        "(lower judge.members.llama_tiny.resources.replicas or .resources.num_cpus)"
    )
    assert not (out / "summary.json").exists()
