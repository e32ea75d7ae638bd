"""`verify --follow`: a growing file or stdin, violations printed as decided, the batch verdict at the end."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]
GRAPH = str(ROOT / "tasks" / "agent" / "graphs" / "trip_planning.json")
HACK = ROOT / "tasks" / "agent" / "traces" / "trip_planning" / "skipped_itinerary.json"


def _lines(path: Path) -> list[str]:
    trace = json.loads(path.read_text())
    events = trace.pop("events")
    return [json.dumps(trace), *(json.dumps(event) for event in events)]


def _shield(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.shield", *args], input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def facts_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = tmp_path_factory.mktemp("env") / "env.sqlite"
    subprocess.run([sys.executable, "-m", "tasks.agent", "env", "trip_planning", str(HACK), str(db)], check=True, timeout=60)
    return str(db)


def test_follow_a_file_prints_each_violation_then_the_batch_report(tmp_path: Path, facts_db: str) -> None:
    stream = tmp_path / "trace.jsonl"
    stream.write_text("\n".join(_lines(HACK)) + "\n")
    followed = _shield("verify", "--graph", GRAPH, "--follow", str(stream), "--facts-db", facts_db, "--format", "json")
    batch = _shield("verify", "--graph", GRAPH, "--trace", str(HACK), "--facts-db", facts_db, "--format", "json")
    assert followed.returncode == batch.returncode == 1, followed.stderr
    *decided, final = [json.loads(line) for line in followed.stdout.splitlines()]
    assert [(item["decided_at"], item["violation"]["kind"]) for item in decided] == [
        (3, "illegal_transition"), (3, "required_state_skipped"), (None, "invariant_failed")]
    untimed = [{k: v for k, v in report.items() if k != "timings_ms"} for report in (final["report"], json.loads(batch.stdout))]
    assert untimed[0] == untimed[1]


def test_stdin_stop_on_first_exits_at_the_first_violation(facts_db: str) -> None:
    result = _shield("verify", "--graph", GRAPH, "--follow", "-", "--facts-db", facts_db, "--stop-on-first", stdin="\n".join(_lines(HACK)))
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["event 3: path/illegal_transition: HOTEL_BOOKED -> SUMMARY_SHOWN is not in next_allowed of HOTEL_BOOKED"]
    assert result.stderr == "stdin: stopped at event 3\n"


def test_a_growing_file_is_verified_before_it_is_complete(tmp_path: Path, facts_db: str) -> None:
    lines = _lines(HACK)
    stream = tmp_path / "growing.jsonl"
    stream.write_text("\n".join(lines[:5]) + "\n")  # the header and events 0-3
    command = [sys.executable, "-m", "harness.shield", "verify", "--graph", GRAPH, "--follow", str(stream),
               "--facts-db", facts_db, "--idle-timeout", "2"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        first = process.stdout.readline()  # decided while events 4 on are not written yet
        assert first.startswith("event 3: path/illegal_transition")
        with stream.open("a") as handle:
            for line in lines[5:]:
                handle.write(line + "\n")
                handle.flush()
                time.sleep(0.1)
        rest, _ = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "trip_planning/skipped_itinerary: VIOLATION" in rest


def test_tau_bench_replay_at_the_end_matches_batch(tmp_path: Path) -> None:
    traces = tmp_path / "tau"
    assert _shield("import", "tau-bench", str(ROOT / "tasks" / "tau_airline" / "data" / "trajectories-gpt-4o.json.gz"), "--out", str(traces)).returncode == 0
    graph = str(ROOT / "tasks" / "tau_airline" / "graphs" / "airline.json")
    trace = traces / "task002-trial2.json"  # a reward-1 change without a "yes" (docs/tau-bench.md)
    stream = tmp_path / "t.jsonl"
    stream.write_text("\n".join(_lines(trace)) + "\n")
    followed = _shield("verify", "--graph", graph, "--follow", str(stream), "--replay", "tau-bench")
    batch = _shield("verify", "--graph", graph, "--trace", str(trace), "--replay", "tau-bench")
    assert followed.returncode == batch.returncode == 1
    assert "unconfirmed_write" in followed.stdout and "unconfirmed_write" in batch.stdout


BAD: dict[str, tuple[list[str], list[str], str]] = {
    "bad-event": (['{"event_type": "nope"}'], [], "stdin:1: invalid event 0: field 'event_type' \"nope\" is not one of"),
    "header-with-events": (['{"task_id": "trip_planning", "events": []}'], [], "stdin:1: the header line carries"),
    "not-an-object": (["[1, 2]"], [], "stdin:1: expected a JSON object"),
    "not-json": (['{"event_type": "user_message"}', "{oops"], [], "stdin:2:"),
    "other-task": (['{"task_id": "travel_booking"}'], [], "trace is for task 'travel_booking'"),
    "stop-without-follow": ([], ["--trace", str(HACK), "--stop-on-first"], "apply to --follow"),
    "idle-zero": ([], ["--follow", "-", "--idle-timeout", "0"], "--idle-timeout must be a number of seconds above 0"),
    "idle-nan": ([], ["--follow", "-", "--idle-timeout", "nan"], "--idle-timeout must be a number of seconds above 0"),
    "idle-1e20": ([], ["--follow", "-", "--idle-timeout", "1e20"], "and at most 86,400"),
    "follow-directory": ([], ["--follow", str(ROOT / "tasks")], "cannot follow a directory"),
    "sampled": ([], ["--follow", "-", "--deep-sample-rate", "0.5"], "verifies every trace deeply"),
}


@pytest.mark.parametrize("case", sorted(BAD), ids=sorted(BAD))
def test_bad_input_is_one_line_and_exit_2(case: str, facts_db: str) -> None:
    lines, extra, message = BAD[case]
    args = [*(extra or ["--follow", "-"]), "--facts-db", facts_db]
    result = _shield("verify", "--graph", GRAPH, *args, stdin="\n".join(lines) + "\n")
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_graph_with_facts_needs_a_source() -> None:
    result = _shield("verify", "--graph", GRAPH, "--follow", "-", stdin='{"event_type": "user_message"}\n')
    assert result.returncode == 2 and "declares facts" in result.stderr and result.stdout == ""


def test_empty_input_is_an_empty_trace(facts_db: str) -> None:
    result = _shield("verify", "--graph", GRAPH, "--follow", "-", "--facts-db", facts_db, stdin="")
    assert result.returncode == 1 and "goal_not_reached" in result.stdout




def test_a_followed_trace_past_the_event_cap_is_refused_at_that_line(tmp_path: Path, facts_db: str) -> None:
    """The monitor holds a trace to the batch's cap: an agent that writes events without end gets
    exit 2 at the line of the first event past it, not minutes of checking (bench/shield_input_size.py)."""
    from harness.shield.trace import MAX_EVENTS

    header, *events = _lines(HACK)
    stream = tmp_path / "endless.jsonl"
    stream.write_text("\n".join([header, *[events[0]] * (MAX_EVENTS + 1)]) + "\n")
    result = _shield("verify", "--graph", GRAPH, "--follow", str(stream), "--facts-db", facts_db)
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {stream}:{MAX_EVENTS + 2}: event {MAX_EVENTS:,} is past the {MAX_EVENTS:,} events one trace may hold (split the run into traces)\n")
