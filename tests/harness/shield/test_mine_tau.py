"""A graph mined from τ-bench airline's reward-1 trajectories of tasks 0-24 flags a hand-checked set
of violations on tasks 25-49 (bench/mine_tau.py measures the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.shield import Trace, parse_graph, verify
from harness.shield.accept import accept_filter
from harness.shield.mine import mine

RESULTS = Path(__file__).parents[3] / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz"

# Each checked by reading the trajectory: (kind, event index, the node or field) and what it is.
HAND_CHECKED = {
    # Cancels 3RK2T9 after reading only the reservation: the user was never looked up. The policy
    # asks to authenticate the user first; the hand-written airline rules do not check it.
    "task041-trial0": [("precondition_failed", 8, "call_cancel_reservation")],
    # The same on H8Q05L: get_reservation_details, then cancel_reservation, no get_user_details.
    "task039-trial2": [("precondition_failed", 9, "call_cancel_reservation")],
    # A cancellation straight after a `think` call, and a lookup after the cancellation: no
    # successful trajectory of tasks 0-24 moved so (a new path, not a rule: --dynamic's business).
    "task027-trial1": [("illegal_transition", 8, "call_cancel_reservation"), ("illegal_transition", 11, "call_get_reservation_details")],
    # An overfit domain: every accepted booking flew to SEA (two trials of one task), so the draft's
    # enum refuses PHL. A person widens it; the test pins that the draft says so.
    "task032-trial0": [("parameter_domain", 14, None), ("parameter_domain", 17, None), ("parameter_domain", 21, None)],
}


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    from tasks.tau_airline.importer import to_trace
    from tasks.tau_airline.trajectory import load_results

    return {trajectory.name: to_trace(trajectory) for trajectory in load_results(str(RESULTS))}


def test_mined_graph_flags_the_hand_checked_violations(traces: dict[str, Trace]) -> None:
    report = mine(list(traces.items()), accept_filter("reward >= 1 && meta.tau_task_id < 25"))
    assert len(report.accepted) == 31 and report.coverage == 1.0 and report.findings == ()
    graph = parse_graph(report.draft.graph, "mined")
    for name, expected in HAND_CHECKED.items():
        found = verify(graph, traces[name], trace_id=name).violations
        picked = [(v.kind, v.event_index, v.node) for v in found if v.kind in {kind for kind, _, _ in expected}]
        assert picked == expected, name
    # The first two name what the draft reads: the user lookup before a cancellation.
    assert '"get_user_details" in history.tool_counts' in next(
        node["precondition"] for node in report.draft.graph["nodes"] if node["node_id"] == "call_cancel_reservation"
    )
