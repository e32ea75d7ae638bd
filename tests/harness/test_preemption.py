"""A scheduler's stop signal mid-judging: `python -m harness` stops cleanly, exits 75, and the same
command run again finishes with no model call repeated and the summary of an undisturbed run.

Each run is a real `python -m harness` process signalled by PID from outside, as Slurm does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness.core.stopping import PREEMPTED_EXIT
from harness.preemption import StopRequest, stop_on_signals
from tests.support.runs import cached_calls, findings

TOTAL = 12  # limit=3 problems x 4 candidates, one judge
RUN = ["limit=3", "judge=llama_tiny", "judge.members.llama_tiny.batch_size=1", "tracking.enabled=false", "bootstrap_samples=0"]


def _command(out: Path, cache: Path, *overrides: str) -> list[str]:
    return [sys.executable, "-m", "harness", *RUN, f"hydra.run.dir={out}", f"cache.path={cache}", *overrides]


def _attempts(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory: pytest.TempPathFactory, shared_cache: Path) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("undisturbed") / "run"
    completed = subprocess.run(_command(out, shared_cache), cwd=out.parent, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge_calls"] + summary["cache_hits"] == TOTAL
    return summary


@pytest.mark.parametrize(
    ("stop_signal", "overrides"),
    [
        pytest.param(signal.SIGUSR1, [], id="sigusr1-inline"),
        pytest.param(signal.SIGTERM, ["cluster=local", "cluster.num_cpus=1", "cluster.max_inflight=1"], id="sigterm-local-ray"),
    ],
)
def test_a_stop_signal_mid_judging_resumes_with_no_repeated_call(
    tmp_path: Path, undisturbed: dict[str, Any], stop_signal: signal.Signals, overrides: list[str]
) -> None:
    out, cache = tmp_path / "run", tmp_path / "calls.sqlite"
    process = subprocess.Popen(_command(out, cache, *overrides), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while cached_calls(cache) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(stop_signal)
    _, stderr = process.communicate(timeout=300)

    assert process.returncode == PREEMPTED_EXIT, stderr[-3000:]
    assert "Traceback" not in stderr
    (stopped,) = _attempts(out)
    done = cached_calls(cache)
    assert stopped["status"] == "stopped" and stopped["signal"] == stop_signal.name
    assert 2 <= stopped["judge_calls"] == done < TOTAL, "the run should stop midway with every answered call in the cache"
    assert f"stopped: stopped by {stop_signal.name} after {done} judge calls" in stderr
    assert not (out / "summary.json").exists()

    resumed = subprocess.run(_command(out, cache, *overrides), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["cache_hits"], summary["judge_calls"]) == (done, TOTAL - done)
    assert [(a["status"], a["judge_calls"]) for a in _attempts(out)] == [("stopped", done), ("finished", TOTAL - done)]
    assert findings(summary) == findings(undisturbed)


def test_a_signal_after_judging_lets_the_run_finish(tmp_path: Path, shared_cache: Path, undisturbed: dict[str, Any]) -> None:
    """Fully cached, no batch is left to refuse: a signal once the prompts are built changes nothing."""
    out = tmp_path / "run"
    process = subprocess.Popen(_command(out, shared_cache), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while not (out / "prompts.jsonl").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGUSR1)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output[-3000:]
    assert "SIGUSR1 received" in output
    assert findings(json.loads((out / "summary.json").read_text())) == findings(undisturbed)


def _raise_and_wait(stop: StopRequest, number: signal.Signals) -> None:
    os.kill(os.getpid(), number)
    assert stop.wait(5), f"{number.name} should set the stop request"


def test_the_stopping_signal_is_handed_on_to_a_job_runners_own_handler() -> None:
    """submitit requeues its task from its SIGUSR2 handler: after the clean stop it must still run."""
    seen: list[int] = []
    previous = signal.signal(signal.SIGUSR2, lambda number, _frame: seen.append(number))
    try:
        with stop_on_signals() as stop:
            _raise_and_wait(stop, signal.SIGUSR2)
            assert seen == [], "the runner's handler must wait until judging has stopped"
        assert stop.signal_name == "SIGUSR2"
        stop.forward()
        assert seen == [signal.SIGUSR2]
    finally:
        signal.signal(signal.SIGUSR2, previous)


def test_a_default_action_is_never_replayed() -> None:
    """Plain `python -m harness`: SIGUSR1's default would kill the process instead of exiting 75."""
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
    with stop_on_signals() as stop:
        _raise_and_wait(stop, signal.SIGUSR1)
    assert signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL
    stop.forward()  # would end this test process if it replayed SIG_DFL
    assert stop.signal_name == "SIGUSR1"


GENERATE = ["limit=3", "pool=generate", "judge=none", "pool.samples=2", "pool.max_tokens=24", "pool.generator.batch_size=1", "tracking.enabled=false"]
GENERATED = 6  # limit=3 problems x 2 samples


def _generate(out: Path, cache: Path) -> list[str]:
    return [sys.executable, "-m", "harness", *GENERATE, "bootstrap_samples=0", f"hydra.run.dir={out}", f"cache.path={cache}"]


def test_a_stop_signal_mid_generation_is_recorded_and_resumes_with_no_repeated_call(tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "calls.sqlite"
    process = subprocess.Popen(_generate(out, cache), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while cached_calls(cache) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGUSR1)
    _, stderr = process.communicate(timeout=300)

    assert process.returncode == PREEMPTED_EXIT, stderr[-3000:]
    assert "Traceback" not in stderr
    done = cached_calls(cache)
    (stopped,) = _attempts(out)
    assert (stopped["status"], stopped["signal"], stopped["judge_calls"]) == ("stopped", "SIGUSR1", 0)
    assert 2 <= stopped["generator_calls"] == done < GENERATED and stopped["generator_cache_hits"] == 0
    assert f"after {done} policy-model calls, all kept in the cache" in stderr
    assert not (out / "summary.json").exists()

    resumed = subprocess.run(_generate(out, cache), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["generator_cache_hits"], summary["generator_calls"]) == (done, GENERATED - done)
    finished = _attempts(out)[1]
    assert (finished["status"], finished["generator_calls"], finished["generator_cache_hits"]) == ("finished", GENERATED - done, done)
