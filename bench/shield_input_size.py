"""The shield's command line on the largest inputs it accepts: one input file just under the 64 MiB
cap (`harness.shield.json_input.MAX_BYTES`), for each command and each way of filling it.

Issue 19 asks that `verify`, `check` and `import` never spend more than 30 s on any one input file
within the cap, and end at their documented exit status with at most one stderr line on bad input.
Time on a trace grows with its events (every invariant is evaluated at every event: about 1 ms
per event on the airline graph's 25), so a trace of 528,000 one-call events would take minutes:
the caps (`harness.shield.MAX_EVENTS`, the graph's) refuse such inputs before the work, the walk's
budget (`invariants.WALK_BUDGET_S`) fails a trace closed with `verification_deadline`, and the
step deadline (`watchdog.STEP_DEADLINE_S`) ends an evaluation that does not return. Each case here runs the real command in a subprocess and records
its wall time, exit status, stderr lines and summary:

- `verify_tau_calls`: an imported τ-bench trace of one-call `think` messages filling 64 MiB (refused
  by the event cap), and `verify_tau_calls_at_cap` the same at the cap, `--replay tau-bench`;
- `verify_tau_long_message`: the same trace's opening and one user message of ~60 MiB of text;
- `verify_tau_batch`: a `.jsonl` of the 200 shipped τ traces repeated to 64 MiB (refused by the
  event cap), and `verify_tau_batch_at_cap` as many as the cap holds;
- `import_tau_calls`: a τ-bench results file of one-call messages, `import tau-bench`, and
  `import_tau_batch` the shipped trials repeated to 64 MiB;
- `verify_follow_tau_calls_at_cap`: the calls trace at the cap as JSONL events, `verify --follow`;
- `verify_graph_at_cap_tau_calls_at_cap`: a graph of the longest expressions its caps allow, on the
  calls trace at the event cap (the walk's budget ends it);
- `verify_nested_comprehension`: one shipped trace against the airline graph plus one invariant of
  eight nested comprehensions (the worker is killed at the per-trace deadline);
- `check_graph_invariants`, `check_graph_nodes`: graphs whose invariants or nodes fill 64 MiB;
  `check_graph_nodes_at_cap`: a chain of as many nodes as a graph may have.

    python bench/shield_input_size.py [--mib 63.5] [--only CASE ...]

Writes `bench/results/shield_input_size.json`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from provenance import ROOT, stamp

from harness.core import HarnessError
from harness.shield.graph import MAX_EXPRESSION_TEXT, MAX_NODES
from harness.shield.json_input import MAX_BYTES
from harness.shield.trace import MAX_EVENTS
from tasks.tau_airline.importer import trace_data
from tasks.tau_airline.trajectory import load_results

GRAPH = ROOT / "tasks" / "tau_airline" / "graphs" / "airline.json"
SHIPPED = ROOT / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz"
LIMIT_S = 30.0
HEADLINE = {
    "values": (
        ("input size (MiB)", "mib"),
        ("slowest case (s)", "slowest_s"),
        ("every case within 30 s", "all_within_limit"),
    ),
    "tables": (
        {
            "over": "cases",
            "key": "case",
            "columns": (
                ("MiB", "mib"),
                ("events", "events"),
                ("wall s", "wall_s"),
                ("exit", "exit"),
                ("stderr lines", "stderr_lines"),
                ("outcome", "outcome"),
            ),
        },
    ),
}


def shipped_results() -> list[dict[str, Any]]:
    with gzip.open(SHIPPED, "rt") as handle:
        return json.load(handle)


def calls_results(shipped: list[dict[str, Any]], calls: int) -> list[dict[str, Any]]:
    """Task 31 trial 0's opening, then `calls` assistant messages of one `think` call each."""
    base = next(item for item in shipped if item["task_id"] == 31 and item["trial"] == 0)
    messages = list(base["traj"][:2])
    for index in range(calls):
        call = {"id": f"c{index}", "type": "function", "function": {"name": "think", "arguments": '{"thought": "x"}'}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": f"c{index}", "name": "think", "content": ""}]
    return [{**base, "traj": messages}]


def long_message_results(shipped: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """Task 31 trial 0's system prompt and one user message of `size` characters of prose."""
    base = next(item for item in shipped if item["task_id"] == 31 and item["trial"] == 0)
    words = "yes please go ahead and book it, actually no, wait: confirm? " * (size // 62 + 1)
    return [{**base, "traj": [base["traj"][0], {"role": "user", "content": words[:size]}]}]


def trace_json(results: list[dict[str, Any]], folder: Path) -> str:
    path = folder / "scratch-results.json"
    path.write_text(json.dumps(results))
    data = trace_data(next(iter(load_results(str(path)))))
    path.unlink()
    return json.dumps(data)


def fill(build: Callable[[int], str], target: int) -> str:
    """The largest text `build(n)` makes within `target` bytes, by scaling from two small n."""
    small, large = len(build(100).encode()), len(build(300).encode())
    per_unit = (large - small) / 200
    count = int(100 + (target - small) / per_unit)
    text = build(count)
    while len(text.encode()) > target:
        count = int(count * target / len(text.encode()) * 0.999)
        text = build(count)
    return text


def events_of(text: str) -> int:
    """Events in a trace's JSON text, or in a JSONL batch's lines together."""
    return sum(len(json.loads(line)["events"]) for line in text.splitlines() if line.strip())


def fill_events(build: Callable[[int], str], cap: int) -> str:
    """The largest text `build(n)` makes within `cap` events (n grows with the events; a build the
    importer refuses as too long is over the cap too)."""

    def fits(count: int) -> bool:
        try:
            return events_of(build(count)) <= cap
        except HarnessError:
            return False

    low, high = 1, 2
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return build(low)


def prepare(case: str, folder: Path, target: int, shipped: list[dict[str, Any]]) -> list[str]:
    """Write the case's input under `folder` and return the command's arguments."""
    graph = ["--graph", str(GRAPH)]
    replay = ["--replay", "tau-bench"]
    opening = json.loads(trace_json(calls_results(shipped, 1), folder))

    def calls(count: int) -> str:
        """The importer's trace of `count` one-call messages, written directly: the importer itself
        refuses a trajectory over the event cap, and these go past it."""
        call = opening["events"][-1]
        events = [*opening["events"][:-1], *({**call, "source_index": 2 + 2 * index} for index in range(count))]
        return json.dumps({**opening, "events": events})

    def batch(count: int) -> str:
        """`count` lines of the shipped traces, repeated (converted once, on first use)."""
        if not shipped_lines:
            shipped_lines.extend(json.dumps(trace_data(trial)) for trial in load_results_list(shipped, folder))
        return "\n".join(shipped_lines[i % len(shipped_lines)] for i in range(count)) + "\n"

    shipped_lines: list[str] = []
    base = json.loads(GRAPH.read_text())

    def chain(count: int) -> str:
        """The airline graph and a chain of `count` more nodes, the last a goal."""
        nodes = [{"node_id": f"N{index}", "next_allowed": [f"N{index + 1}"]} for index in range(count)] + [{"node_id": f"N{count}", "is_goal": True}]
        return json.dumps({**base, "nodes": [*base["nodes"], *nodes]})

    def with_invariants(extra: list[str]) -> str:
        """The airline graph with `extra` global invariants after its own."""
        return json.dumps({**base, "global_invariants": [*base["global_invariants"], *extra]})

    path = folder / CASES[case]
    if case == "verify_tau_calls":
        path.write_text(fill(calls, target))
        return ["verify", *graph, "--trace", str(path), *replay]
    if case == "verify_tau_calls_at_cap":
        path.write_text(fill_events(calls, MAX_EVENTS))
        return ["verify", *graph, "--trace", str(path), *replay]
    if case == "verify_tau_long_message":
        path.write_text(fill(lambda n: trace_json(long_message_results(shipped, n * 100), folder), target))
        return ["verify", *graph, "--trace", str(path), *replay]
    if case == "verify_tau_batch":
        path.write_text(fill(batch, target))
        return ["verify", *graph, "--trace", str(path), *replay]
    if case == "verify_tau_batch_at_cap":
        path.write_text(fill_events(batch, MAX_EVENTS))
        return ["verify", *graph, "--trace", str(path), *replay]
    if case == "import_tau_calls":
        path.write_text(fill(lambda n: json.dumps(calls_results(shipped, n)), target))
        return ["import", "tau-bench", str(path), "--out", str(folder / "imported")]
    if case == "import_tau_batch":
        path.write_text(fill(lambda n: json.dumps([{**shipped[i % len(shipped)], "trial": i} for i in range(n)]), target))
        return ["import", "tau-bench", str(path), "--out", str(folder / "imported")]
    if case == "verify_follow_tau_calls_at_cap":
        trace = json.loads(fill_events(calls, MAX_EVENTS))
        header = {key: value for key, value in trace.items() if key != "events"}
        with path.open("w") as handle:
            handle.write(json.dumps(header) + "\n")
            for event in trace["events"]:
                handle.write(json.dumps(event) + "\n")
        return ["verify", *graph, "--follow", str(path), "--idle-timeout", "1", *replay]
    if case == "check_graph_nodes_at_cap":
        path.write_text(chain(MAX_NODES - len(base["nodes"]) - 1))
        return ["check", "--graph", str(path)]
    if case == "check_graph_nodes":
        path.write_text(fill(chain, target))
        return ["check", "--graph", str(path)]
    if case == "verify_graph_at_cap_tau_calls_at_cap":
        # As many of the longest expressions as the graph's text cap leaves room for (about 127).
        longest = " && ".join(["steps[event.index].calls_in_message <= 1"] * 45)
        used = sum(map(len, base["global_invariants"]))
        extra = [f"{longest} || {index} == 0" for index in range((MAX_EXPRESSION_TEXT - used) // (len(longest) + 12))]
        graph_path = folder / "graph_at_cap.json"
        graph_path.write_text(with_invariants(extra))
        path.write_text(fill_events(calls, MAX_EVENTS))
        return ["verify", "--graph", str(graph_path), "--trace", str(path), *replay]
    if case == "verify_nested_comprehension":
        # One invariant of eight nested comprehensions over ten numbers, read again at every event:
        # about 40 s for one evaluation, in native code; the worker is killed at the step deadline.
        ten = "[0,1,2,3,4,5,6,7,8,9]"
        nested = "event.index >= 0 && " + ten + "".join(f".all(x{depth}, {ten}" for depth in range(7)) + ".all(y, y >= 0)" + ")" * 7
        graph_path = folder / "graph_nested.json"
        graph_path.write_text(with_invariants([nested]))
        path.write_text(json.dumps(trace_data(load_results_list(shipped, folder)[0])))
        return ["verify", "--graph", str(graph_path), "--trace", str(path), *replay]
    if case == "check_graph_invariants":
        path.write_text(fill(lambda count: with_invariants([f"size(steps) >= 0 || {index} == {index}" for index in range(count)]), target))
        return ["check", "--graph", str(path)]
    raise SystemExit(f"unknown case {case!r}")


def load_results_list(shipped: list[dict[str, Any]], folder: Path) -> list[Any]:
    path = folder / "shipped.json"
    path.write_text(json.dumps(shipped))
    trials = list(load_results(str(path)))
    path.unlink()
    return trials


# case -> the name of its input file
CASES = {
    "verify_tau_calls": "calls.json",
    "verify_tau_calls_at_cap": "calls_at_cap.json",
    "verify_tau_long_message": "long.json",
    "verify_tau_batch": "batch.jsonl",
    "verify_tau_batch_at_cap": "batch_at_cap.jsonl",
    "import_tau_calls": "results.json",
    "import_tau_batch": "results_batch.json",
    "verify_follow_tau_calls_at_cap": "follow.jsonl",
    "verify_nested_comprehension": "shipped_trace.json",
    "check_graph_invariants": "graph.json",
    "check_graph_nodes": "graph_nodes.json",
    "check_graph_nodes_at_cap": "graph_nodes_at_cap.json",
    "verify_graph_at_cap_tau_calls_at_cap": "calls_at_cap.json",
}


def run_case(case: str, target: int, shipped: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        arguments = prepare(case, folder, target, shipped)
        path = folder / CASES[case]
        size = path.stat().st_size
        events = events_of(path.read_text()) if path.suffix in (".json", ".jsonl") and case.startswith("verify") and "follow" not in case else None
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        start = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-m", "harness.shield", *arguments], capture_output=True, text=True, timeout=600, env=environment, cwd=ROOT)
            wall, code, out, err = time.perf_counter() - start, done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired:
            wall, code, out, err = time.perf_counter() - start, None, "", "timed out after 600 s"
    stderr = [line for line in err.splitlines() if line.strip()]
    return {
        "mib": round(size / 2**20, 2),
        "events": events,
        "wall_s": round(wall, 2),
        "exit": code,
        "stderr_lines": len(stderr),
        "stderr": stderr[:3],
        "outcome": outcome(out, stderr),
        "within_limit": wall <= LIMIT_S,
    }


def outcome(out: str, stderr: list[str]) -> str:
    """What the command concluded, in a few words: the summary line, the verdict and its kinds, or
    the last stderr line."""
    lines = [line for line in out.splitlines() if line.strip()]
    summary = next((line for line in reversed(lines) if line.startswith("summary:")), None)
    if summary:
        return summary.removeprefix("summary: ")[:160]
    if lines:
        head = lines[0][:80]
        kinds = sorted({line.split("/")[1].split(" ")[0] for line in lines if line.lstrip().startswith("- ") and "/" in line})
        return head + (f" ({', '.join(kinds)})" if kinds else "")
    return stderr[-1][:160] if stderr else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=MAX_BYTES / 2**20 - 0.5, help="size of each input, in MiB (default: just under the cap)")
    parser.add_argument("--only", nargs="*", choices=list(CASES), default=list(CASES))
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "shield_input_size.json"))
    args = parser.parse_args()
    target, shipped = int(args.mib * 2**20), shipped_results()
    cases: dict[str, Any] = {}
    for case in args.only:
        cases[case] = run_case(case, target, shipped)
        figure = cases[case]
        print(f"{case}: {figure['mib']} MiB, {figure['wall_s']} s, exit {figure['exit']}, {figure['stderr_lines']} stderr lines: {figure['outcome']}", flush=True)
    result: dict[str, Any] = {
        **stamp(),
        "mib": args.mib,
        "limit_s": LIMIT_S,
        "load_average": [round(value, 2) for value in os.getloadavg()],
        "cases": cases,
        "slowest_s": max(figure["wall_s"] for figure in cases.values()),
        "all_within_limit": all(figure["within_limit"] for figure in cases.values()),
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
