"""τ-bench results -> shield traces: events with source_index, refusals, and the CLI end to end."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from functools import cache
from importlib import resources

import pytest

from harness.core.errors import HarnessError
from harness.shield import load_trace
from harness.shield.__main__ import main as shield_main
from tasks.tau_airline.db import read_json_gz
from tasks.tau_airline.importer import TASK_ID, to_trace, trace_data, write_traces
from tasks.tau_airline.trajectory import (
    parse_results,
    parse_trajectory,
    shipped_trajectories,
)


@cache
def raw_results() -> list:
    return read_json_gz("trajectories-gpt-4o.json.gz")


def raw(index: int = 0) -> dict:
    return copy.deepcopy(raw_results()[index])


def test_every_shipped_trajectory_imports_with_one_event_per_call():
    traces = [to_trace(trajectory) for trajectory in shipped_trajectories()]
    assert len(traces) == 200 and len({trace.trace_id for trace in traces}) == 200
    assert sum(event.event_type == "tool_call" for trace in traces for event in trace.events) == 1164
    assert sum(trace.reward == 1.0 for trace in traces) == 84
    assert all(event.source_index is not None for trace in traces for event in trace.events)


def test_hand_checked_events_of_task0_trial0():
    trace = to_trace(shipped_trajectories()[0])
    assert trace.trace_id == "task000-trial0" and trace.task_id == TASK_ID and trace.reward == 0.0
    assert trace.meta == {"source": "tau-bench", "tau_task_id": 0, "trial": 0, "trajectory_index": 0, "user_id": "mia_li_3668"}
    first, second = trace.events[:2]
    assert (first.event_type, first.source_index, first.content) == ("user_message", 1, "Hi! I'm looking to book a flight from New York to Seattle on May 20th.")
    assert (second.event_type, second.source_index) == ("agent_message", 2)
    booking = next(event for event in trace.events if event.tool_name == "book_reservation")
    assert booking.source_index == 20
    assert booking.tool_input["payment_methods"] == [{"payment_id": "certificate_7504069", "amount": 250}, {"payment_id": "credit_card_4421486", "amount": 5}]
    assert booking.tool_output == "Error: payment amount does not add up, total price is 305, but paid 255"
    # The policy (system prompt) is not an event; tool messages are folded into their call.
    assert not any(event.content and event.content.startswith("# Airline Agent Policy") for event in trace.events)


def test_a_reused_call_id_gets_the_answer_that_follows_its_call():
    # task000-trial0's calculate at message 16 reuses the id of the get_user_details call at 6.
    trajectory = shipped_trajectories()[0]
    calls = {call.source_index: call for call in trajectory.calls}
    assert calls[16].call_id == calls[6].call_id
    assert (calls[16].recorded_output, calls[16].output_index) == ("255.0", 17)
    assert calls[6].output_index == 7


def test_an_answer_recorded_before_its_call_answers_nothing():
    data = raw()
    data["traj"][6]["tool_calls"][0]["id"] = data["traj"][7]["tool_call_id"] = "solo"
    data["traj"][6], data["traj"][7] = data["traj"][7], data["traj"][6]  # the tool message now precedes the call
    (call, *_) = parse_trajectory(data, 0).calls
    assert (call.source_index, call.recorded_output, call.output_index) == (7, None, None)


def test_text_beside_a_call_gives_a_message_event_then_the_call_events_at_the_same_index():
    data = raw()
    message = data["traj"][6]
    message["content"] = "Let me look you up."
    message["tool_calls"].append({**message["tool_calls"][0], "id": "second"})
    events = [event for event in trace_data(parse_trajectory(data, 0))["events"] if event["source_index"] == 6]
    assert [event["event_type"] for event in events] == ["agent_message", "tool_call", "tool_call"]
    assert events[2].get("tool_output") is None  # no tool message answers the second call


def test_unknown_extra_keys_are_ignored():
    data = raw()
    data["cost"] = 0.12
    data["traj"][1]["annotations"] = {"x": 1}
    data["traj"][6]["tool_calls"][0]["function"]["strict"] = True
    assert trace_data(parse_trajectory(data, 0)) == trace_data(parse_trajectory(raw(), 0))


def _break(path: str, value: object) -> dict:
    data = raw()
    target = data
    *keys, last = path.split(".")
    for key in keys:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is KeyError:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("traj", KeyError, "trajectory 0: traj: must be a list of messages, got NoneType"),
        ("task_id", [1], "trajectory 0: task_id: must be an integer or a string, got list"),
        ("trial", "first", "trajectory 0: trial: must be an integer, got str"),
        ("reward", 2, "trajectory 0: reward: must be in [0, 1], got 2.0"),
        ("traj.3.role", "moderator", "trajectory 0: traj[3].role: must be one of system, user, assistant, tool, got 'moderator'"),
        ("traj.3.content", 7, "trajectory 0: traj[3].content: must be a string or null, got int"),
        ("traj.6.tool_calls.0.function.arguments", "{user_id:", "trajectory 0: traj[6].tool_calls[0].function.arguments: is not valid JSON"),
        ("traj.6.tool_calls.0.function.arguments", '{"user_id": NaN}', "trajectory 0: traj[6].tool_calls[0].function.arguments: is not accepted JSON: non-finite number NaN"),
        ("traj.6.tool_calls.0.function.arguments", '{"amount": 1e999}', "trajectory 0: traj[6].tool_calls[0].function.arguments: is not accepted JSON"),
        ("traj.6.tool_calls.0.function.arguments", "[1, 2]", "trajectory 0: traj[6].tool_calls[0].function.arguments: must be a JSON object, got list"),
        ("traj.6.tool_calls.0.function.name", None, "trajectory 0: traj[6].tool_calls[0].function.name: must be a string, got NoneType"),
        ("traj.7.tool_call_id", KeyError, "trajectory 0: traj[7].tool_call_id: must be a string, got NoneType"),
        ("traj.7.content", None, "trajectory 0: traj[7].content: must be a string, got NoneType"),
        ("traj.5", "hello", "trajectory 0: traj[5]: must be an object, got str"),
    ],
    ids=["no-traj", "task-id", "trial", "reward-range", "role", "content-type", "arguments-json", "arguments-nan", "arguments-infinite", "arguments-list", "tool-name", "tool-call-id", "tool-content", "message-type"],
)
def test_a_malformed_trajectory_is_refused_naming_index_and_field(path, value, message):
    with pytest.raises(HarnessError) as raised:
        parse_trajectory(_break(path, value), 0)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_repeated_task_and_trial_are_refused_because_their_traces_would_collide():
    with pytest.raises(HarnessError, match=r"^x.json: trajectory 2: trial: task 0 trial 0 repeats trajectory 0$"):
        parse_results([raw(0), raw(1), raw(0)], "x.json")


def test_cli_import_then_verify_carries_source_index_into_violations(tmp_path, capsys):
    results = tmp_path / "results.json"
    results.write_text(json.dumps([raw(0), raw(1)]))
    out = tmp_path / "traces"
    assert shield_main(["import", "tau-bench", str(results), "--out", str(out)]) == 0
    assert sorted(path.name for path in out.iterdir()) == ["task000-trial0.json", "task001-trial0.json"]
    # A graph that declares only `think`: every other tool call is an intake violation at its event.
    graph = tmp_path / "graph.json"
    graph.write_text(
        json.dumps(
            {
                "format_version": 1,
                "task_id": TASK_ID,
                "initial_state": "CHAT",
                "goal_states": ["CHAT"],
                "tools": {"think": {"input_schema": {"type": "object", "required": ["thought"]}}},
                "nodes": [{"node_id": "CHAT", "is_goal": True, "actions": [], "next_allowed": ["CHAT"]}],
            }
        )
    )
    capsys.readouterr()
    assert shield_main(["verify", "--graph", str(graph), "--trace", str(out / "task000-trial0.json"), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    booking = next(v for v in report["violations"] if v["values"] == {"tool_name": "book_reservation"})
    assert (booking["kind"], booking["event_index"], booking["source_index"]) == ("unknown_tool", 15, 20)
    trace = load_trace(str(out / "task000-trial0.json"))
    assert trace.events[15].source_index == 20 and trace.events[15].tool_name == "book_reservation"


def test_cli_refuses_a_malformed_file_with_one_line_and_exit_2(tmp_path):
    results = tmp_path / "results.json"
    results.write_text(json.dumps([raw(0), _break("traj.4.role", "robot")]))
    out = tmp_path / "traces"
    completed = subprocess.run(
        [sys.executable, "-m", "harness.shield", "import", "tau-bench", str(results), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [
        f"error: {results}: trajectory 1: traj[4].role: must be one of system, user, assistant, tool, got 'robot'"
    ]
    assert not out.exists()  # nothing partial is written


@pytest.mark.parametrize(
    ("content", "message"),
    [("{not json", "results.json: the τ-bench results file is not valid JSON"), ('{"task_id": 0}', "a τ-bench results file is a JSON list")],
    ids=["not-json", "not-a-list"],
)
def test_cli_refuses_a_file_that_is_not_a_results_list(tmp_path, capsys, content, message):
    results = tmp_path / "results.json"
    results.write_text(content)
    assert shield_main(["import", "tau-bench", str(results), "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_a_results_file_is_read_strictly_like_every_shield_input(tmp_path, capsys):
    """NaN rewards, FIFOs and devices are refused in one line: the file is user input."""
    nan = tmp_path / "nan.json"
    nan.write_text(json.dumps([raw(0)]).replace('"reward": 0.0', '"reward": NaN', 1))
    assert '"reward": NaN' in nan.read_text()
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)  # opening it for reading would block forever
    device = tmp_path / "zero.json"
    device.symlink_to("/dev/zero")  # reading it would never end
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(b"not gzip at all")
    for path, message in (
        (nan, "the τ-bench results file is not accepted JSON: non-finite number NaN"),
        (fifo, "cannot read the τ-bench results file: not a regular file"),
        (device, "cannot read the τ-bench results file: not a regular file"),
        (bomb, "cannot read the τ-bench results file: not gzip data"),
    ):
        assert shield_main(["import", "tau-bench", str(path), "--out", str(tmp_path / "o")]) == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert line.startswith(f"error: {path}: {message}"), line
    assert not (tmp_path / "o").exists()


def test_written_traces_verify_like_the_in_memory_ones(tmp_path):
    trajectory = shipped_trajectories()[5]
    (path,) = write_traces([trajectory], str(tmp_path))
    assert load_trace(path) == to_trace(trajectory)


def test_the_two_commands_verify_a_results_file_against_each_traces_own_replay(tmp_path, capsys):
    results = tmp_path / "results.json"
    results.write_text(json.dumps([raw(0), raw(1)]))  # task 0 trial 0 (reward 0), task 1 trial 0
    out = tmp_path / "traces"
    assert shield_main(["import", "tau-bench", str(results), "--out", str(out)]) == 0
    graph = str(resources.files("tasks.tau_airline").joinpath("graphs").joinpath("airline.json"))
    capsys.readouterr()
    assert shield_main(["verify", "--graph", graph, "--trace", str(out), "--replay", "tau-bench", "--format", "json"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    reports = {line["trace"]: line["report"] for line in lines if "trace" in line}
    # task000-trial0 books 3 bags for a gold member in economy (3 free) but pays for 1 (message 28).
    fee = [(v["kind"], v["event_index"], v["source_index"]) for v in reports["task000-trial0"]["violations"]]
    assert fee == [("baggage_fee", 20, 28)]
    assert lines[-1]["summary"]["traces"] == 2


def test_a_forged_recorded_output_does_not_change_the_replayed_verdict(tmp_path, capsys):
    out = tmp_path / "traces"
    (path,) = write_traces([shipped_trajectories()[0]], str(out))
    data = json.loads(open(path, encoding="utf-8").read())
    booking = data["events"][20]
    assert booking["tool_name"] == "book_reservation"
    forged = json.loads(booking["tool_output"])
    forged["nonfree_baggages"] = forged["total_baggages"] = 0  # the recording now claims no bags were booked
    booking["tool_output"] = json.dumps(forged)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    graph = str(resources.files("tasks.tau_airline").joinpath("graphs").joinpath("airline.json"))
    capsys.readouterr()
    assert shield_main(["verify", "--graph", graph, "--trace", path, "--replay", "tau-bench", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(v["kind"], v["source_index"]) for v in report["violations"]] == [("baggage_fee", 28)]


def test_replay_is_exclusive_with_given_facts(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        shield_main(["verify", "--graph", "g.json", "--trace", "t", "--replay", "tau-bench", "--facts", "f.json"])
    assert raised.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_a_hostile_task_id_cannot_write_outside_the_output_directory(tmp_path):
    data = raw()
    data["task_id"] = "../../escaped"
    (path,) = write_traces(parse_results([data], "x.json"), str(tmp_path / "out"))
    assert path == str(tmp_path / "out" / "task.._.._escaped-trial0.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_cli_refuses_events_listed_out_of_their_recorded_order(tmp_path, capsys):
    # task000-trial0 with its booking (message 20) listed before the user's answer (message 19).
    data = trace_data(parse_trajectory(raw(0), 0))
    events = data["events"]
    answer = next(i for i, e in enumerate(events) if e["source_index"] == 19)
    booking = next(i for i, e in enumerate(events) if e["source_index"] == 20)
    events[answer], events[booking] = events[booking], events[answer]
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(data))
    graph = resources.files("tasks.tau_airline").joinpath("graphs").joinpath("airline.json")
    capsys.readouterr()
    assert shield_main(["verify", "--graph", str(graph), "--trace", str(path), "--replay", "tau-bench"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: trace task000-trial0 event {booking}: source_index 19 comes after 20; events must be listed in the order of their messages"]


def test_a_trajectory_longer_than_the_shields_event_cap_is_refused_before_it_is_converted(tmp_path, capsys):
    """278,000 one-call messages fit in 64 MiB and took 35 s to convert before the trace's cap
    refused them (bench/shield_input_size.py): the message count is checked first, and a trajectory
    just under it still meets the exact cap on its trace's events."""
    from harness.shield import MAX_EVENTS
    from tasks.tau_airline.trajectory import MAX_MESSAGES

    def calls(count: int, text: str | None = None) -> dict:
        entry = raw(0)
        call = lambda n: {"id": f"c{n}", "type": "function", "function": {"name": "think", "arguments": '{"thought": "x"}'}}  # noqa: E731
        entry["traj"] = entry["traj"][:2] + [message for n in range(count) for message in (
            {"role": "assistant", "content": text, "tool_calls": [call(n)]}, {"role": "tool", "tool_call_id": f"c{n}", "name": "think", "content": ""})]
        return entry

    long = tmp_path / "long.json"
    long.write_text(json.dumps([calls(MAX_MESSAGES // 2)]))
    assert shield_main(["import", "tau-bench", str(long), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"error: {long}: trajectory 0: traj: {MAX_MESSAGES + 2:,} messages, more than the {MAX_MESSAGES:,} a trajectory "
        f"may hold (its trace would pass the shield's {MAX_EVENTS:,} events)\n")
    under = tmp_path / "under.json"
    # 5,202 messages, each call with text beside it: 2 events a message, 5,201 events in all
    under.write_text(json.dumps([calls(MAX_EVENTS // 2 + 100, text="Let me check.")]))
    assert shield_main(["import", "tau-bench", str(under), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"error: {under}: trajectory 0 (task000-trial0): the trace has {MAX_EVENTS + 201:,} events, more than the {MAX_EVENTS:,} one input file may hold "
        "(split it: a directory of files is read one file at a time)\n")
    assert not (tmp_path / "o").exists()
