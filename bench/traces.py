"""What logging one MLflow trace per candidate costs the default run (`python -m harness`, GSM8K, 50 problems x 4 candidates).

Three runs of the default job in a fresh directory with its own SQLite store: a first one with
`tracking.traces=on` (cold: every judge call made, unless `--cache` starts it from a copy of a call
cache), then, on the warm call cache, one with traces off and one with them on. The cost is the
seconds a run spends building its traces in memory and writing them in batches (the `traces.seconds`
it reports, until the store acknowledged the last batch); the warm pair shows the same difference
end to end. The goal is at most 10% of the cold default run: `share_of_first_run` is the first run's
trace seconds over its wall time (both under the same load); `estimated_share_of_default_run` scales
the warm run's cost per trace to the default run's 200 candidates over the cold run's wall time
(measured here when the first run is the cold default run, else the README's figure for a quiet
2-core VM, `DEFAULT_RUN_S`).

    python bench/traces.py [--limit 50] [--cache CALLS.sqlite]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
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

DEFAULT_RUN_S = 240.0  # README: the cold default run takes about four minutes on a quiet 2-core VM
DEFAULT_CANDIDATES = 200

HEADLINE = {
    "values": (
        ("problems x candidates", "{parameters.limit} x 4"),
        ("first run cold", "first.cold"),
        ("candidates traced", "first.traces_logged"),
        ("first run (s)", "first.wall_s"),
        ("trace logging in it (s)", "first.traces_seconds"),
        ("share of the first run", "share_of_first_run"),
        ("warm run, traces off (s)", "warm_off.wall_s"),
        ("warm run, traces on (s)", "warm_on.wall_s"),
        ("trace logging, warm run (s)", "warm_on.traces_seconds"),
        ("per trace (ms)", "ms_per_trace"),
        ("estimated share of the cold default run", "estimated_share_of_default_run"),
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
        "traces_not_logged": summary.get("traces.not_logged", 0),
        "traces_seconds": summary.get("traces.seconds", 0.0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=50, help="problems (default: the default run's 50)")
    parser.add_argument("--cache", type=Path, default=None, help="start from a copy of this judge-call cache (the first run is then warm)")
    args = parser.parse_args()
    limit = [f"limit={args.limit}"]
    load_before = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="bench-traces-") as tmp:
        workdir = Path(tmp)
        if args.cache is not None:
            for path in args.cache.parent.glob(args.cache.name + "*"):  # the database and its WAL
                shutil.copy(path, workdir / path.name.replace(args.cache.name, "cache.sqlite"))
        first = _run(workdir, "first", *limit, "tracking.traces=on")
        first["cold"] = first["cache_hits"] == 0
        warm_off = _run(workdir, "warm_off", *limit, "tracking.traces=off")
        warm_on = _run(workdir, "warm_on", *limit, "tracking.traces=on")
    per_trace_s = warm_on["traces_seconds"] / max(warm_on["traces_logged"], 1)
    default_run_s = first["wall_s"] if first["cold"] and args.limit == 50 else DEFAULT_RUN_S
    result = {
        **stamp(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_before": load_before,
        "load_average_after": list(os.getloadavg()),
        "parameters": {"command": "python -m harness " + " ".join(limit), "limit": args.limit, "store": "sqlite (local file)", "cache": str(args.cache) if args.cache else None},
        "first": first,
        "warm_off": warm_off,
        "warm_on": warm_on,
        "ms_per_trace": round(1000 * per_trace_s, 1),
        "share_of_first_run": round(first["traces_seconds"] / first["wall_s"], 4),
        "default_run_s": default_run_s,
        "estimated_share_of_default_run": round(per_trace_s * DEFAULT_CANDIDATES / default_run_s, 4),
    }
    RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({key: result[key] for key in ("first", "warm_off", "warm_on", "ms_per_trace", "share_of_first_run", "estimated_share_of_default_run")}, indent=2))


if __name__ == "__main__":
    main()
