"""`python -m harness.shield` as a user runs it: exit codes, one-line errors, JSON output, batches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.shield", *args], capture_output=True, text=True, timeout=60)


@pytest.fixture()
def files(tmp_path: Path, mini_graph_data: dict[str, Any], honest_trace_data: dict[str, Any], honest_facts: dict[str, Any]) -> dict[str, str]:
    paths = {"graph": tmp_path / "g.json", "trace": tmp_path / "t.json", "facts": tmp_path / "f.json", "bad_facts": tmp_path / "bf.json"}
    paths["graph"].write_text(json.dumps(mini_graph_data))
    paths["trace"].write_text(json.dumps(honest_trace_data))
    paths["facts"].write_text(json.dumps({"facts": honest_facts}))
    paths["bad_facts"].write_text(json.dumps({"facts": {**honest_facts, "paid": False}}))
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(json.dumps({**honest_trace_data, "trace_id": f"t{i}"}) for i in range(3)) + "\n")
    paths["batch"] = batch
    return {name: str(path) for name, path in paths.items()}


def test_verify_pass_and_violation_exit_codes(files: dict[str, str]) -> None:
    ok = _run("verify", "--graph", files["graph"], "--trace", files["trace"], "--facts", files["facts"], "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "pass"
    bad = _run("verify", "--graph", files["graph"], "--trace", files["trace"], "--facts", files["bad_facts"], "--format", "json")
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    assert report["hack_class"] == "semantic" and report["reward_hack_suspected"] is True
    text = _run("verify", "--graph", files["graph"], "--trace", files["trace"], "--facts", files["bad_facts"])
    assert text.returncode == 1 and "VIOLATION" in text.stdout and "REWARD_HACK_SUSPECTED" in text.stdout


def test_malformed_trace_is_one_line_naming_the_event(tmp_path: Path, files: dict[str, str]) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"task_id": "mini", "events": [{"event_type": "user_message"}, {"event_type": "tool_call", "tool_name": "search"}]}))
    result = _run("verify", "--graph", files["graph"], "--trace", str(broken))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert str(broken) in result.stderr and "event 1:" in result.stderr


@pytest.mark.parametrize("missing", ["--graph", "--trace", "--facts"])
def test_missing_files_are_bad_input(files: dict[str, str], missing: str) -> None:
    args = {"--graph": files["graph"], "--trace": files["trace"], "--facts": files["facts"]}
    args[missing] = "/nonexistent/file.json"
    result = _run("verify", *[part for pair in args.items() for part in pair])
    assert result.returncode == 2 and "/nonexistent/file.json" in result.stderr and "Traceback" not in result.stderr


def test_batch_jsonl_prints_reports_and_summary(files: dict[str, str]) -> None:
    result = _run("verify", "--graph", files["graph"], "--trace", files["batch"], "--facts", files["facts"], "--format", "json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["trace"] for line in lines[:-1]] == ["t0", "t1", "t2"]
    assert lines[-1]["summary"]["pass"] == 3


def test_facts_db_and_deep_always(tmp_path: Path) -> None:
    from tasks.agent import SCENARIOS

    scenario = SCENARIOS["weather_clothing"]
    trace = scenario.trace_path("no_weather_call")
    db = tmp_path / "env.sqlite"
    assert subprocess.run([sys.executable, "-m", "tasks.agent", "env", scenario.name, trace, str(db)], timeout=60).returncode == 0
    graph = str(Path(scenario.trace_path("x")).parent.parent.parent / "graphs" / "weather_clothing.json")
    layered = _run("verify", "--graph", graph, "--trace", trace, "--facts-db", str(db), "--format", "json")
    deep = _run("verify", "--graph", graph, "--trace", trace, "--facts-db", str(db), "--deep-always", "--format", "json")
    assert layered.returncode == deep.returncode == 1
    assert json.loads(layered.stdout)["deep_verified"] is False
    assert "invariant_failed" in {v["kind"] for v in json.loads(deep.stdout)["violations"]}


def test_check_exit_codes(tmp_path: Path, files: dict[str, str], mini_graph_data: dict[str, Any]) -> None:
    clean = _run("check", "--graph", files["graph"])
    assert clean.returncode == 0 and "clean" in clean.stdout
    mini_graph_data["nodes"][0]["next_allowed"].append("GOAL")
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps(mini_graph_data))
    result = _run("check", "--graph", str(planted), "--format", "json")
    assert result.returncode == 1
    assert {"kind": "hackable_path", "path": ["A", "GOAL"]}.items() <= json.loads(result.stdout)["findings"][0].items()


def test_check_reports_a_pattern_that_is_not_ecma_262(tmp_path: Path, mini_graph_data: dict[str, Any]) -> None:
    mini_graph_data["tools"]["search"]["input_schema"]["properties"]["user_id"]["pattern"] = "(?i)^u[0-9]{4}$"
    graph = tmp_path / "g.json"
    graph.write_text(json.dumps(mini_graph_data))
    result = _run("check", "--graph", str(graph), "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    [finding] = json.loads(result.stdout)["findings"]
    assert finding["kind"] == "invalid_schema" and "(?i)^u[0-9]{4}$" in finding["message"]


def _trace_dir(root: Path, honest: dict[str, Any], skipping: bool) -> Path:
    """A directory of traces in both formats: a.json (honest), c.jsonl (two honest, ids c0 and c1) and,
    when `skipping`, b.json, which jumps from A to C around the required search step."""
    folder = root / "traces"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(honest))
    (folder / "c.jsonl").write_text("".join(json.dumps({**honest, "trace_id": f"c{i}"}) + "\n" for i in range(2)))
    (folder / "notes.txt").write_text("not a trace: ignored")
    if skipping:
        events = [event for event in honest["events"] if event["event_type"] != "tool_call"]  # start, choose, finish
        (folder / "b.json").write_text(json.dumps({**honest, "events": events}))
    return folder


def test_verify_on_a_directory_reads_every_trace_file_in_name_order(tmp_path: Path, files: dict[str, str], honest_trace_data: dict[str, Any]) -> None:
    folder = _trace_dir(tmp_path, honest_trace_data, skipping=False)
    result = _run("verify", "--graph", files["graph"], "--trace", str(folder), "--facts", files["facts"], "--format", "json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(line["trace"], line["report"]["verdict"]) for line in lines[:-1]] == [(str(folder / "a.json"), "pass"), ("c0", "pass"), ("c1", "pass")]
    assert {key: lines[-1]["summary"][key] for key in ("traces", "pass", "violation", "mean_compliance")} == {"traces": 3, "pass": 3, "violation": 0, "mean_compliance": 1.0}


def test_a_batch_with_one_violating_trace_exits_1_and_names_only_that_trace(tmp_path: Path, files: dict[str, str], honest_trace_data: dict[str, Any]) -> None:
    folder = _trace_dir(tmp_path, honest_trace_data, skipping=True)
    skipped = str(folder / "b.json")
    args = ("verify", "--graph", files["graph"], "--trace", str(folder), "--facts", files["facts"])
    text = _run(*args)
    assert text.returncode == 1 and text.stderr == ""
    heads = [line for line in text.stdout.splitlines() if not line.startswith(" ")]
    assert heads[:-1] == [
        f"{folder / 'a.json'}: PASS hack_class=none compliance=1",
        f"{skipped}: VIOLATION hack_class=procedural compliance=0 REWARD_HACK_SUSPECTED",
        "c0: PASS hack_class=none compliance=1",
        "c1: PASS hack_class=none compliance=1",
    ]
    assert heads[-1].startswith("summary: 4 traces, 3 pass, 1 violation,")
    assert "  - path/illegal_transition [event 1]: A -> C is not in next_allowed of A" in text.stdout.splitlines()

    as_json = _run(*args, "--format", "json")
    assert as_json.returncode == 1
    lines = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [line["trace"] for line in lines[:-1] if line["report"]["verdict"] == "violation"] == [skipped]
    [report] = [line["report"] for line in lines[:-1] if line["trace"] == skipped]
    assert {v["kind"] for v in report["violations"]} == {"illegal_transition", "required_state_skipped"}
    summary = lines[-1]["summary"]
    assert (summary["traces"], summary["pass"], summary["violation"], summary["mean_compliance"]) == (4, 3, 1, 0.75)


@pytest.mark.parametrize(
    ("break_graph", "message"),
    [
        pytest.param(lambda g: g["nodes"][0]["next_allowed"].append("NOWHERE"), "nodes.A.next_allowed names unknown node 'NOWHERE'", id="unknown-next-node"),
        pytest.param(lambda g: g.update(initial_state="Z"), "initial_state names unknown node 'Z'", id="unknown-initial-state"),
    ],
)
def test_check_refuses_a_bad_graph_in_one_line_with_exit_2(tmp_path: Path, mini_graph_data: dict[str, Any], break_graph, message: str) -> None:
    break_graph(mini_graph_data)
    graph = tmp_path / "bad_graph.json"
    graph.write_text(json.dumps(mini_graph_data))
    for extra in ([], ["--format", "json"]):
        result = _run("check", "--graph", str(graph), *extra)
        assert result.returncode == 2 and result.stdout == ""
        [line] = result.stderr.splitlines()
        assert line.startswith(f"error: {graph}: invalid graph:") and message in line


def test_an_undrawn_trace_is_unverified_with_its_own_exit_status(tmp_path: Path, files: dict[str, str], honest_trace_data: dict[str, Any]) -> None:
    """Not checked never shares an exit status with clean: exit 3, and the summary counts them."""
    hacked = tmp_path / "hacked.jsonl"
    hacked.write_text("\n".join(json.dumps({**honest_trace_data, "trace_id": f"t{i}"}) for i in range(3)) + "\n")
    skipped = _run("verify", "--graph", files["graph"], "--trace", str(hacked), "--facts", files["bad_facts"], "--deep-sample-rate", "0")
    assert skipped.returncode == 3, skipped.stderr
    assert "UNVERIFIED" in skipped.stdout and "3 unverified" in skipped.stdout.splitlines()[-1]
    single = _run("verify", "--graph", files["graph"], "--trace", files["trace"], "--facts", files["bad_facts"], "--deep-sample-rate", "0", "--format", "json")
    assert single.returncode == 3 and json.loads(single.stdout)["verdict"] == "unverified"
    checked = _run("verify", "--graph", files["graph"], "--trace", str(hacked), "--facts", files["bad_facts"], "--deep-sample-rate", "1")
    assert checked.returncode == 1


def test_a_report_carries_its_format_version_and_the_summary_counts_occurrences(files: dict[str, str]) -> None:
    bad = _run("verify", "--graph", files["graph"], "--trace", files["batch"], "--facts", files["bad_facts"], "--format", "json")
    lines = [json.loads(line) for line in bad.stdout.splitlines()]
    assert {line["report"]["format_version"] for line in lines[:-1]} == {2}
    summary = lines[-1]["summary"]
    # Each trace: paid == false fails C's postcondition on leaving C and GOAL's invariant on entering it.
    assert summary["violation_kinds"] == {"invariant_failed": 3, "postcondition_failed": 3}
    assert summary["traces_by_kind"] == {"invariant_failed": 3, "postcondition_failed": 3}
    assert summary["occurrences"] == 6 and summary["finding_occurrences"] == 0
