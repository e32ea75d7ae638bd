"""Static check (`harness.shield.check_graph`) on graphs that path enumeration could not finish.

Reachability (dominators plus one shortest-path search per bypass) replaced the enumeration of simple
paths, which is exponential: a 12-node clique has about 10 million simple paths from one node to
another. Graphs measured:
- `clique_12`: every node leads to every other; ten required states, all skippable;
- `layered_300`: 30 layers of 10 nodes, each node leading to the whole next layer, a required gate in
  the middle and a guard before the goal; clean, then with one planted edge around the gate;
- `chain_1000`: a 1,000-node chain with a postcondition on every node (1,000 guards, all dominating);
- `ladder_500`: a 500-node chain of guards where every guard can be stepped over by an edge around
  it: 498 bypasses, each asking for a counterexample search unless an earlier path already avoids it;
- `wide_2000`: one start fanning out to 2,000 nodes that each reach the goal, half of them guards
  (1,000 bypassable guards, so 1,000 counterexample searches are asked for);
- `goal_chain_10000`: a 10,000-node chain in which every node after the first is a goal with a
  postcondition (a dominator set per goal, or a search per goal, is quadratic here: it died of
  MemoryError); clean, then with one edge from the start to the last goal around every guard (then
  each guard's search is a walk down the chain, and the shared budget ends it in `analysis_incomplete`).
Target: each well under a second on one core. Writes `bench/results/static_check.json`.
Run: `python bench/static_check.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

from provenance import stamp

from harness.shield import check_graph, parse_graph


def _graph(edges: dict[str, list[str]], goal: str, required: list[str], guards: set[str]) -> Any:
    nodes = [{"node_id": n, "next_allowed": t, **({"postcondition": "true"} if n in guards else {})} for n, t in edges.items()]
    data = {"task_id": "bench", "initial_state": next(iter(edges)), "goal_states": [goal], "required_states": required, "nodes": nodes}
    return parse_graph(data, "bench")


def clique(size: int) -> Any:
    names = [f"N{i}" for i in range(size)]
    return _graph({n: [m for m in names if m != n] for n in names}, names[-1], names[1:-1], set())


def layered(layers: int, width: int, planted: bool) -> Any:
    rows = [[f"L{layer}_{i}" for i in range(width)] for layer in range(layers)]
    edges: dict[str, list[str]] = {"INIT": rows[0]}
    middle = layers // 2
    for index, row in enumerate(rows):
        for node in row:
            edges[node] = ["GATE"] if index == middle - 1 else (rows[index + 1] if index + 1 < layers else ["GUARD"])
    edges["GATE"] = rows[middle]
    edges["GUARD"] = ["GOAL"]
    edges["GOAL"] = []
    if planted:
        edges["L1_0"] = [*edges["L1_0"], rows[middle + 2][0]]
    return _graph(edges, "GOAL", ["GATE"], {"GUARD"})


def chain(length: int) -> Any:
    names = [f"C{i}" for i in range(length)]
    edges = {name: [names[i + 1]] if i + 1 < length else [] for i, name in enumerate(names)}
    return _graph(edges, names[-1], names[1:-1], set(names[:-1]))


def ladder(length: int) -> Any:
    names = [f"C{i}" for i in range(length)]
    edges = {name: names[i + 1 : i + 3] for i, name in enumerate(names)}
    return _graph(edges, names[-1], [], set(names[1:-1]))


def wide(fan: int) -> Any:
    names = [f"W{i}" for i in range(fan)]
    edges: dict[str, list[str]] = {"INIT": names, **{name: ["GOAL"] for name in names}, "GOAL": []}
    return _graph(edges, "GOAL", [], set(names[::2]))


def goal_chain(length: int, planted: bool) -> Any:
    names = [f"G{i}" for i in range(length)]
    edges = {name: [names[i + 1]] if i + 1 < length else [] for i, name in enumerate(names)}
    if planted:
        edges["G0"].append(names[-1])
    nodes = [{"node_id": n, "is_goal": i > 0, "next_allowed": edges[n], **({"postcondition": "true"} if i > 0 else {})} for i, n in enumerate(names)]
    return parse_graph({"task_id": "bench", "initial_state": "G0", "goal_states": [names[-1]], "nodes": nodes}, "bench")


def _time(graph: Any, repeat: int) -> tuple[float, list[Any]]:
    best = float("inf")
    findings: list[Any] = []
    for _ in range(repeat):
        start = time.perf_counter()
        findings = check_graph(graph)
        best = min(best, time.perf_counter() - start)
    return best, findings


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (("target (ms, each)", "target_ms"), ("best of", "repeat")),
    "tables": (
        {
            "over": "graphs",
            "columns": (
                ("graph", "graph"),
                ("nodes", "nodes"),
                ("edges", "edges"),
                ("best ms", "best_ms"),
                ("hackable paths found", "findings.hackable_path"),
            ),
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "static_check.json"))
    args = parser.parse_args()
    cases = {
        "clique_12": clique(12),
        "layered_300_clean": layered(30, 10, planted=False),
        "layered_300_planted": layered(30, 10, planted=True),
        "chain_1000": chain(1000),
        "ladder_500": ladder(500),
        "wide_2000": wide(2000),
        "goal_chain_10000_clean": goal_chain(10_000, planted=False),
        "goal_chain_10000_planted": goal_chain(10_000, planted=True),
    }
    rows = []
    for name, graph in cases.items():
        seconds, findings = _time(graph, args.repeat)
        kinds: dict[str, int] = {}
        for finding in findings:
            kinds[finding.kind] = kinds.get(finding.kind, 0) + 1
        edges = sum(len(node.next_allowed) for node in graph.nodes)
        rows.append({"graph": name, "nodes": len(graph.nodes), "edges": edges, "best_ms": round(seconds * 1e3, 2), "findings": kinds})
        print(f"{name:22s} {len(graph.nodes):5d} nodes {edges:6d} edges  {seconds * 1e3:8.2f} ms  {kinds}")
    result = {
        **stamp(),
        "target_ms": 1000,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "note": "best of `repeat` runs of check_graph on one core of a shared machine",
        "graphs": rows,
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")


if __name__ == "__main__":
    main()
