"""Mining and `verify --follow` on inputs built to make them slow (issue 22's red team): wall time,
exit status and stderr lines of the real command on each.

- `mine_wide_N`: `mine` on one trace of N `agent_message` events with distinct actions `a0..aN-1`
  (ordering inference compares pairs of first visits, quadratic in N; past 1,000,000 pairs it is
  not inferred, so N = 2,000 drafts without orderings);
- `follow_dev_zero`: `verify --follow /dev/zero`, an endless line refused at the 64 MiB line cap.

    python bench/shield_mine_follow_bounds.py

Writes `bench/results/shield_mine_follow_bounds.json`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from provenance import ROOT, stamp

WIDTHS = (200, 800, 2000)
GRAPH = {
    "format_version": 1, "task_id": "simple", "initial_state": "INIT", "goal_states": ["GOAL"],
    "nodes": [{"node_id": "INIT", "actions": ["start"], "next_allowed": ["GOAL"]}, {"node_id": "GOAL", "actions": ["finish"], "next_allowed": []}],
}


def _run(*args: str) -> tuple[dict[str, Any], str]:
    """The command's wall time, exit status, stderr lines and first stderr line; and its stdout."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "harness.shield", *args], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    record = {"wall_s": round(time.monotonic() - start, 2), "exit": done.returncode, "stderr_lines": done.stderr.count("\n"),
              "stderr": done.stderr.splitlines()[0][:160] if done.stderr else ""}
    return record, done.stdout


def measure() -> dict[str, Any]:
    cases: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        for width in WIDTHS:
            traces = Path(folder) / f"wide_{width}"
            traces.mkdir()
            events = [{"event_type": "agent_message", "action": f"a{index}", "content": "x"} for index in range(width)]
            (traces / "t.json").write_text(json.dumps({"task_id": "wide", "reward": 1.0, "events": events}))
            out = Path(folder) / f"draft_{width}.json"
            record, stdout = _run("mine", "--traces", str(traces), "--out", str(out), "--format", "json")
            report = json.loads(stdout)
            record["orderings"] = sum(constraint["kind"] == "ordering" for constraint in report["constraints"])
            record["orderings_not_inferred"] = any(line.startswith("orderings:") for line in report["not_inferred"])
            cases[f"mine_wide_{width}"] = record
        graph = Path(folder) / "g.json"
        graph.write_text(json.dumps(GRAPH))
        cases["follow_dev_zero"], _ = _run("verify", "--graph", str(graph), "--follow", "/dev/zero")
    return {"cases": cases}


HEADLINE = {
    "tables": ({"over": "cases", "key": "case", "columns": (("wall s", "wall_s"), ("exit", "exit"), ("stderr lines", "stderr_lines"))},),
}


def main() -> int:
    result = {**stamp(), **measure()}
    path = ROOT / "bench" / "results" / "shield_mine_follow_bounds.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["cases"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
