"""The shield: formal verification of traces against a task's state graph and invariants.

Reward hacking, formally: a trace that breaks the task's declared transitions or invariants yet gets
a high reward. `verify` runs four layered stages (intake and parameter domains, path legality,
CEL invariants against environment facts, reward consistency) and returns a `ShieldReport` whose
`compliance` multiplies the judge's score. `check_graph` finds hackable paths before any run.

    graph = load_graph("graph.json")
    report = verify(graph, load_trace("trace.json"), facts=load_facts_json("facts.json"))
    report.model_dump(mode="json")   # the `shield` field of a candidates.jsonl line

While the agent runs, `Monitor(graph, header, facts).push(event)` returns each violation as soon as
it is decidable; `mine` drafts a graph from accepted traces; `verify_dynamic` turns an unforeseen but
clean move into a review finding with a patch.
"""

from harness.shield.accept import accept_filter
from harness.shield.batch import summarise, verify_path
from harness.shield.dynamic import DynamicResult, UnexpectedTransition, verify_dynamic
from harness.shield.expressions import ExpressionError, compile_expression
from harness.shield.facts import FactsProvider, SqliteFacts, StaticFacts, load_facts_json, sqlite_facts
from harness.shield.graph import FactQuery, FactsSpec, Node, StateGraph, ToolSpec, load_graph, parse_graph
from harness.shield.intake import inadmissible_events
from harness.shield.json_input import MAX_BYTES, decode, loads, read_bytes, read_json
from harness.shield.json_values import canonical_json, same_value
from harness.shield.mine import MiningReport, mine
from harness.shield.monitor import Monitor, MonitorResult
from harness.shield.report import Finding, HackClass, ShieldReport, Stage, VerifyOptions, Violation, ViolationKind
from harness.shield.static import check_graph
from harness.shield.step_labels import BUNDLED_LABELLED_STEPS, LabelledStep, graph_actions
from harness.shield.trace import MAX_EVENTS, Trace, TraceEvent, iter_traces, load_trace, parse_trace
from harness.shield.verification import verify

__all__ = [
    "MAX_BYTES",
    "MAX_EVENTS",
    "BUNDLED_LABELLED_STEPS",
    "DynamicResult",
    "ExpressionError",
    "FactQuery",
    "FactsProvider",
    "FactsSpec",
    "Finding",
    "HackClass",
    "LabelledStep",
    "MiningReport",
    "Monitor",
    "MonitorResult",
    "Node",
    "ShieldReport",
    "SqliteFacts",
    "Stage",
    "StateGraph",
    "StaticFacts",
    "ToolSpec",
    "Trace",
    "TraceEvent",
    "UnexpectedTransition",
    "VerifyOptions",
    "Violation",
    "ViolationKind",
    "accept_filter",
    "canonical_json",
    "check_graph",
    "compile_expression",
    "decode",
    "graph_actions",
    "inadmissible_events",
    "iter_traces",
    "load_facts_json",
    "load_graph",
    "load_trace",
    "loads",
    "mine",
    "parse_graph",
    "parse_trace",
    "read_bytes",
    "read_json",
    "same_value",
    "sqlite_facts",
    "summarise",
    "verify",
    "verify_dynamic",
    "verify_path",
]
