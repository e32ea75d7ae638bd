"""Benchmark: what the per-jail cpu cgroup (one CPU, `sandbox/_cgroup.py`) costs a run.

Times `RUNS` sequential runs of an honest candidate (HumanEval/0's canonical solution against its
hidden test, no differential run) with the cpu controller, as shipped, and without it (a fork
server whose `_cgroup` sees no cpu hierarchy: the memory and pids cgroups only), alternating the
two for `ROUNDS` rounds and keeping each one's fastest, and reports the mean run time of each and
the difference per run. Every run must pass, and the isolation record must name `cpu_cgroup` in
the first configuration and lack it in the second. Writes `bench/results/cpu_cgroup.json`.
Run: `python bench/cpu_cgroup.py` (root, cgroup v1 or v2 with the cpu controller delegated).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from provenance import stamp  # noqa: E402

from tasks.code.loader import _bundled_rows  # noqa: E402
from tasks.code.sandbox import forkserver, run_tests  # noqa: E402

RUNS = 100
ROUNDS = 3
PROBLEM = "HumanEval/0"
RESULTS = Path(__file__).with_name("results") / "cpu_cgroup.json"
SHIPPED = forkserver.server_command
# The same fork server, with `_cgroup` imported first and told there is no cpu hierarchy (v1) or
# that the cpu controller cannot be enabled (v2): the runs then get the memory and pids cgroups only.
_WITHOUT_CPU = (
    "import os, runpy, sys; path = sys.argv[1]; sys.argv = sys.argv[1:]; sys.path.insert(0, os.path.dirname(path)); "
    "import _cgroup; _cgroup._V1_CPU = '/nonexistent'; _write = _cgroup._write; "
    "_cgroup._write = lambda p, t: (_ for _ in ()).throw(OSError('no cpu')) if t == '+cpu' else _write(p, t); "
    "runpy.run_path(path, run_name='__main__')"
)

HEADLINE = {
    "values": (
        ("mean run time with the cpu cgroup (ms)", "with_cpu_ms"),
        ("mean run time without it (ms)", "without_cpu_ms"),
        ("cost of the cpu cgroup per run (ms)", "cost_ms"),
        ("runs per configuration and round", "runs"),
    ),
}


def _without_cpu(*arguments: str) -> list[str]:
    return [sys.executable, "-c", _WITHOUT_CPU, str(forkserver._ZYGOTE), *arguments]


def _close_servers() -> None:
    """Close this process's fork servers, so the next run starts one with the current command."""
    with forkserver._shared_lock:
        servers = list(forkserver._shared.values())
        forkserver._shared.clear()
    for server in servers:
        server.close()


def _time(command, row: dict) -> tuple[float, tuple[str, ...]]:
    """Seconds for `RUNS` runs on a fresh fork server started by `command` (its start not counted)."""
    forkserver.server_command = command
    _close_servers()
    program = row["prompt"] + row["canonical_solution"]
    first = run_tests(program, row["test"], row["entry_point"])  # starts the server, makes its spares
    assert first.passed, first.reason
    started = time.perf_counter()
    for _ in range(RUNS):
        result = run_tests(program, row["test"], row["entry_point"])
        assert result.passed, result.reason
    return time.perf_counter() - started, first.isolation


def main() -> None:
    row = next(r for r in _bundled_rows() if r["task_id"] == PROBLEM)
    load_before = os.getloadavg()
    with_rounds, without_rounds = [], []
    for _ in range(ROUNDS):
        seconds, isolation = _time(SHIPPED, row)
        assert "cpu_cgroup" in isolation, f"the cpu cgroup did not apply: {isolation}"
        with_rounds.append(seconds)
        seconds, isolation = _time(_without_cpu, row)
        assert "cpu_cgroup" not in isolation and "pids_cgroup" in isolation, isolation
        without_rounds.append(seconds)
    forkserver.server_command = SHIPPED
    _close_servers()
    with_ms, without_ms = min(with_rounds) / RUNS * 1000, min(without_rounds) / RUNS * 1000
    report = {
        **stamp(),
        "problem": PROBLEM,
        "runs": RUNS,
        "rounds": ROUNDS,
        "with_cpu_ms": round(with_ms, 2),
        "without_cpu_ms": round(without_ms, 2),
        "cost_ms": round(with_ms - without_ms, 2),
        "with_cpu_rounds_seconds": [round(x, 3) for x in with_rounds],
        "without_cpu_rounds_seconds": [round(x, 3) for x in without_rounds],
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
