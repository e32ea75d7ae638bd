"""What logging one MLflow trace per candidate costs the default run (`python -m harness`, GSM8K, 50 problems x 4 candidates).

Three runs of the default job in a fresh directory with its own SQLite store: a cold one with
`tracking.traces=on` (every judge call made), then, on the warm call cache, one with traces off and
one with them on. The cost is the seconds the run spends building and exporting its traces (the
`traces.seconds` it reports: spans built here, MLflow's export queue flushed) over the cold run's
wall time; the warm pair shows the same difference end to end. The goal is at most 10%.

    python bench/traces.py [--limit 50]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from provenance import stamp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "bench" / "results" / "traces.json"

HEADLINE = {
    "values": (
        ("candidates traced", "cold.traces_logged"),
        ("cold default run (s)", "cold.wall_s"),
        ("trace logging in it (s)", "cold.traces_seconds"),
        ("share of the run", "cost_share"),
        ("warm run, traces off (s)", "warm_off.wall_s"),
        ("warm run, traces on (s)", "warm_on.wall_s"),
        ("per trace (ms)", "ms_per_trace"),
    ),
}


def _run(workdir: Path, name: str, *overrides: str) -> dict[str, Any]:
    out = workdir / name
    command = [
        sys.executable, "-m", "harness", f"output_dir={out}", f"tracking.uri=sqlite:///{workdir / 'mlruns.db'}",
        f"cache.path={workdir / 'cache.sqlite'}", *overrides,
    ]
    environment = {key: value for key, value in os.environ.items() if key != "MLFLOW_TRACKING_URI"}
    environment["PYTHONPATH"] = str(ROOT)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, env=environment, timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: python -m harness exited {done.returncode}: {done.stderr[-2000:]}")
    summary = json.loads((out / "summary.json").read_text())
    return {
        "wall_s": round(wall, 2),
        "judge_calls": summary["judge_calls"],
        "cache_hits": summary["cache_hits"],
        "traces_logged": summary.get("traces.logged", 0),
        "traces_seconds": summary.get("traces.seconds", 0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=50, help="problems (default: the default run's 50)")
    args = parser.parse_args()
    limit = [f"limit={args.limit}"]
    load_before = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="bench-traces-") as tmp:
        workdir = Path(tmp)
        cold = _run(workdir, "cold", *limit, "tracking.traces=on")
        warm_off = _run(workdir, "warm_off", *limit, "tracking.traces=off")
        warm_on = _run(workdir, "warm_on", *limit, "tracking.traces=on")
    result = {
        **stamp(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_before": load_before,
        "load_average_after": list(os.getloadavg()),
        "parameters": {"command": "python -m harness " + " ".join(limit), "store": "sqlite (local file)"},
        "cold": cold,
        "warm_off": warm_off,
        "warm_on": warm_on,
        "cost_share": round(cold["traces_seconds"] / cold["wall_s"], 4),
        "ms_per_trace": round(1000 * cold["traces_seconds"] / max(cold["traces_logged"], 1), 1),
    }
    RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({key: result[key] for key in ("cold", "warm_off", "warm_on", "cost_share", "ms_per_trace")}, indent=2))


if __name__ == "__main__":
    main()
