"""Shield throughput on one core, and the CEL library comparison behind `harness.shield.expressions`.

1. Traces of 20 events over a 10-node graph (two events per node, a tool call with a schema-checked
   input in each node, a node invariant per node and a global invariant):
   - path legality only (stages 1-2: intake with parameter domains, derived states, path checks),
     `deep_sample_rate=0`; target >= 5,000 traces/s;
   - with invariants (stages 1-4 against facts); target >= 1,000 traces/s.
   Traces are parsed once up front; a separate figure includes JSON parsing and schema validation.
2. CEL: `common-expression-language` (`cel`) vs `cel-python` (`celpy`) on a representative invariant
   set: mean microseconds per evaluation against bound variables, and whether each result is right.

With `--baseline DIR` the same figures are measured, in the same run and on the same core, for the
checkout at DIR (another commit's `harness`, this script's traces), each side in its own process,
the two sides taking turns `--rounds` times (best round kept), and the result records their ratios.
Writes `bench/results/shield.json` and prints a table.
Run: `python bench/shield.py [--baseline /path/to/checkout]`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from provenance import ROOT, stamp

from harness.shield import VerifyOptions, parse_graph, parse_trace, verify
from harness.shield.expressions import cel

NODES = 10
EVENTS_PER_NODE = 2


def graph_data() -> dict[str, Any]:
    nodes = []
    for index in range(NODES):
        nodes.append(
            {
                "node_id": f"N{index}",
                "is_goal": index == NODES - 1,
                "invariant": f"size(results) > {index % 3} && choice in results && counts.n{index} >= 0",
                "actions": [f"act{index}"],
                "next_allowed": [f"N{index + 1}"] if index < NODES - 1 else [],
            }
        )
    return {
        "task_id": "bench",
        "initial_state": "N0",
        "goal_states": [f"N{NODES - 1}"],
        "required_states": [f"N{index}" for index in range(1, NODES)],
        "global_invariants": ["history.max_repeat <= 3", "config_modified == false"],
        "context_variables": ["choice"],
        "tools": {
            f"tool{index}": {
                "input_schema": {"type": "object", "required": ["q"], "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}}}
            }
            for index in range(NODES)
        },
        "action_map": {f"tool{index}": f"act{index}" for index in range(NODES)},
        "facts": {"variables": ["results", "counts", "config_modified"]},
        "nodes": nodes,
    }


def trace_data(number: int) -> dict[str, Any]:
    events = []
    for index in range(NODES):
        for repeat in range(EVENTS_PER_NODE):
            event: dict[str, Any] = {
                "event_type": "tool_call",
                "tool_name": f"tool{index}",
                "tool_input": {"q": "abc"[: 1 + (number + repeat) % 3] + "x" * repeat},
                "tool_output": {"ok": True},
            }
            if repeat == 0:
                event["context"] = {"choice": f"r{index % 4}"}
            events.append(event)
    return {"task_id": "bench", "trace_id": f"t{number}", "reward": 0.9, "events": events}


FACTS = {"results": ["r0", "r1", "r2", "r3"], "counts": {f"n{i}": i for i in range(NODES)}, "config_modified": False}


def _throughput(graph, traces, options: VerifyOptions, seconds: float) -> tuple[float, str]:
    done, start, verdicts = 0, time.perf_counter(), set()
    while time.perf_counter() - start < seconds:
        for trace in traces:
            verdicts.add(verify(graph, trace, FACTS, options).verdict)
        done += len(traces)
    return done / (time.perf_counter() - start), ",".join(sorted(verdicts))


def _parse_throughput(raw: list[str], seconds: float) -> float:
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for text in raw:
            parse_trace(json.loads(text), "bench")
        done += len(raw)
    return done / (time.perf_counter() - start)


INVARIANTS: list[tuple[str, dict[str, Any], bool]] = [
    ("selected in results", {"selected": "F2", "results": ["F1", "F2", "F3"]}, True),
    ("size(results) > 0 && size(name) == 3", {"results": [], "name": "abc"}, False),
    ("booking.exists == true && booking.flight_id == 'F2'", {"booking": {"exists": True, "flight_id": "F2"}}, True),
    ("'k' in m && m['k'] >= 2", {"m": {"k": 3}}, True),
    ("items.all(i, i.price < 100)", {"items": [{"price": 10}, {"price": 120}]}, False),
    ("metrics.exists(m, m.startsWith('rev'))", {"metrics": ["signups", "revenue"]}, True),
    ("name.contains('ob') && name.endsWith('b') && name.matches('^b.*')", {"name": "bob"}, True),
    ("size(report.filter(k, report[k] == week[k])) >= 3", {"report": {"a": 1, "b": 2, "c": 3}, "week": {"a": 1, "b": 2, "c": 3}}, True),
    ("history.max_repeat <= 2", {"history": {"max_repeat": 10}}, False),
    ("status == 'success'", {"status": None}, False),
]
SYNTAX_ERROR = "size(results > "
TYPE_ERROR = ("count > 'a'", {"count": 1})


def _bench_cel(repeat: int) -> dict[str, Any]:
    correct, total_us = 0, 0.0
    for source, variables, expected in INVARIANTS:
        program = cel.compile(source)
        context = cel.Context()
        context.update(variables)
        correct += program.execute(context) is expected
        start = time.perf_counter()
        for _ in range(repeat):
            program.execute(context)
        total_us += (time.perf_counter() - start) / repeat * 1e6
    try:
        cel.compile(SYNTAX_ERROR)
        syntax = "accepted"
    except ValueError as error:
        syntax = str(error).splitlines()[0][:160]
    try:
        cel.evaluate(TYPE_ERROR[0], TYPE_ERROR[1])
        type_error = "no error"
    except TypeError as error:
        type_error = str(error)[:160]
    return {"package": "common-expression-language", "correct": f"{correct}/{len(INVARIANTS)}",
            "mean_us_per_eval": round(total_us / len(INVARIANTS), 2), "syntax_error": syntax, "type_error": type_error}


def _bench_celpy(repeat: int) -> dict[str, Any]:
    try:
        import celpy
    except ImportError:
        return {"package": "cel-python", "error": "not installed (pip install cel-python)"}
    env = celpy.Environment()
    correct, total_us = 0, 0.0
    for source, variables, expected in INVARIANTS:
        program = env.program(env.compile(source))
        activation = {name: celpy.json_to_cel(value) for name, value in variables.items()}
        try:
            correct += bool(program.evaluate(activation)) is expected
        except celpy.CELEvalError:
            pass
        start = time.perf_counter()
        for _ in range(repeat):
            try:
                program.evaluate(activation)
            except celpy.CELEvalError:
                pass
        total_us += (time.perf_counter() - start) / repeat * 1e6
    try:
        env.compile(SYNTAX_ERROR)
        syntax = "accepted"
    except celpy.CELParseError as error:
        syntax = " ".join(str(error).split())[:160]
    program = env.program(env.compile(TYPE_ERROR[0]))
    try:
        result = program.evaluate({"count": celpy.json_to_cel(1)})
        type_error = f"returned {type(result).__name__}: {str(result)[:120]}"
    except celpy.CELEvalError as error:
        type_error = str(error)[:160]
    return {"package": "cel-python", "correct": f"{correct}/{len(INVARIANTS)}",
            "mean_us_per_eval": round(total_us / len(INVARIANTS), 2), "syntax_error": syntax, "type_error": type_error}


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (
        ("path legality only: traces/s", "{path_only_traces_per_s} (target {targets.path_only})"),
        ("with invariants: traces/s", "{with_invariants_traces_per_s} (target {targets.with_invariants})"),
        ("JSON parse and validation: traces/s", "parse_and_validate_traces_per_s"),
        ("events per trace", "events_per_trace"),
        ("CEL library chosen", "chosen_cel"),
        ("baseline commit (same run, same core)", "against_baseline.baseline_commit"),
        ("path legality only: x baseline", "against_baseline.ratio.path_only_traces_per_s"),
        ("with invariants: x baseline", "against_baseline.ratio.with_invariants_traces_per_s"),
        ("JSON parse and validation: x baseline", "against_baseline.ratio.parse_and_validate_traces_per_s"),
    ),
    "tables": ({"over": "cel", "columns": (("CEL package", "package"), ("correct", "correct"), ("us per evaluation", "mean_us_per_eval"))},),
}


THROUGHPUT = ("path_only_traces_per_s", "with_invariants_traces_per_s", "parse_and_validate_traces_per_s")


def measure(seconds: float) -> dict[str, Any]:
    """The three throughput figures for the `harness` on `sys.path`."""
    graph = parse_graph(graph_data(), "bench")
    raw = [json.dumps(trace_data(number)) for number in range(200)]
    traces = [parse_trace(json.loads(text), "bench") for text in raw]
    path_only, path_verdicts = _throughput(graph, traces, VerifyOptions(deep_sample_rate=0.0), seconds)
    deep, deep_verdicts = _throughput(graph, traces, VerifyOptions(), seconds)
    parsing = _parse_throughput(raw, seconds)
    return {
        "path_only_traces_per_s": round(path_only),
        "with_invariants_traces_per_s": round(deep),
        "parse_and_validate_traces_per_s": round(parsing),
        "verdicts": {"path_only": path_verdicts, "with_invariants": deep_verdicts},
    }


def _measure_in(checkout: Path, seconds: float, core: int) -> dict[str, Any]:
    """`measure` in a child process that imports the `harness` of `checkout`, pinned to `core`."""
    code = (
        f"import os, json, sys; os.sched_setaffinity(0, {{{core}}}); sys.path.insert(0, {str(ROOT / 'bench')!r}); "
        f"import shield as b; print(json.dumps(b.measure({seconds})))"
    )
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _compare(baseline: Path, seconds: float, rounds: int, core: int) -> dict[str, Any]:
    """Both checkouts, alternating, best of `rounds` each; ratios are this checkout over the baseline."""
    best: dict[str, dict[str, Any]] = {"this": {}, "baseline": {}}
    for _ in range(rounds):
        for side, checkout in (("baseline", baseline), ("this", ROOT)):
            figures = _measure_in(checkout, seconds, core)
            for name in THROUGHPUT:
                best[side][name] = max(best[side].get(name, 0), figures[name])
            best[side]["verdicts"] = figures["verdicts"]
    commit = subprocess.run(["git", "-C", str(baseline), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    ratios = {name: round(best["this"][name] / best["baseline"][name], 3) for name in THROUGHPUT}
    return {"baseline_commit": commit, "rounds": rounds, "baseline": best["baseline"], "ratio": ratios,
            "min_ratio": min(ratios.values()), "target_min_ratio": 0.9, "this": best["this"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this one, in the same run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "shield.json"))
    args = parser.parse_args()
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # one core, as the target says
    comparison = _compare(args.baseline.resolve(), args.seconds, args.rounds, core) if args.baseline else None
    figures = comparison["this"] if comparison else measure(args.seconds)
    results = {
        **stamp(),
        "events_per_trace": NODES * EVENTS_PER_NODE,
        **{name: figures[name] for name in THROUGHPUT},
        "targets": {"path_only": 5000, "with_invariants": 1000},
        "verdicts": figures["verdicts"],
        "cel": [_bench_cel(2000), _bench_celpy(20)],
        "chosen_cel": "common-expression-language",
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
    }
    if comparison:
        results["against_baseline"] = {key: value for key, value in comparison.items() if key != "this"}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=2)
        handle.write("\n")
    print(f"{'measure':<36}{'traces/s':>10}{'target':>8}{'x baseline':>12}")
    ratio = comparison["ratio"] if comparison else {}
    for label, name, target in (("path legality only", THROUGHPUT[0], 5000), ("with invariants (stages 1-4)", THROUGHPUT[1], 1000),
                                ("JSON parse + schema + model", THROUGHPUT[2], "")):
        print(f"{label:<36}{results[name]:>10}{target:>8}{ratio.get(name, ''):>12}")
    for row in results["cel"]:
        print(f"CEL {row['package']}: {row.get('correct')} correct, {row.get('mean_us_per_eval')} us/eval {row.get('error', '')}")


if __name__ == "__main__":
    main()
