"""Loading graphs, traces and facts: valid files load, invalid ones fail with one line naming the spot."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError
from harness.shield import FactQuery, SqliteFacts, iter_traces, load_facts_json, load_graph, load_trace, parse_graph


def _write(path: Path, data: Any) -> str:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


BAD_TRACES = [
    ("not_json", "{", "is not valid JSON"),
    ("missing_task", {"events": []}, "'top level' must contain ['task_id']"),
    ("bad_event_type", {"task_id": "t", "events": [{"event_type": "chat"}, {"event_type": "teleport"}]}, "event 0: field 'events[0].event_type'"),
    ("tool_call_without_tool", {"task_id": "t", "events": [{"event_type": "user_message"}, {"event_type": "tool_call"}]}, "event 1:"),
    ("reward_out_of_range", {"task_id": "t", "events": [], "reward": 3}, "'reward' must be smaller than or equal to 1"),
]


@pytest.mark.parametrize(("data", "message"), [case[1:] for case in BAD_TRACES], ids=[case[0] for case in BAD_TRACES])
def test_bad_trace_names_file_event_and_field(tmp_path: Path, data: Any, message: str) -> None:
    path = _write(tmp_path / "t.json", data)
    with pytest.raises(HarnessError) as error:
        load_trace(path)
    assert path in str(error.value) and message in str(error.value)
    assert "\n" not in str(error.value)


BAD_GRAPHS = [
    ("unknown_next", lambda data: data["nodes"][0]["next_allowed"].append("NOWHERE"), "names unknown node 'NOWHERE'"),
    ("duplicate_node", lambda data: data["nodes"].append({"node_id": "A"}), "duplicate node_id 'A'"),
    ("bad_shape", lambda data: data["facts"].update(queries={"x": {"sql": "select 1", "shape": "cube"}}), "'facts.queries.x.shape'"),
    ("undeclared_tool_in_action_map", lambda data: data["action_map"].update(ghost="start"), "tool 'ghost'"),
]


@pytest.mark.parametrize(("change", "message"), [case[1:] for case in BAD_GRAPHS], ids=[case[0] for case in BAD_GRAPHS])
def test_bad_graph(tmp_path: Path, mini_graph_data: dict[str, Any], change, message: str) -> None:
    change(mini_graph_data)
    with pytest.raises(HarnessError, match="invalid graph") as error:
        load_graph(_write(tmp_path / "g.json", mini_graph_data))
    assert message in str(error.value)


def test_graph_cel_syntax_error_is_reported_when_verifying(mini_graph_data: dict[str, Any]) -> None:
    from harness.shield import parse_trace, verify

    mini_graph_data["nodes"][1]["invariant"] = "size(results > "
    graph = parse_graph(mini_graph_data, "g.json")
    with pytest.raises(HarnessError, match="CEL syntax error"):
        verify(graph, parse_trace({"task_id": "mini", "events": []}, "t"), {})


def test_facts_json_roundtrip_and_validation(tmp_path: Path) -> None:
    assert load_facts_json(_write(tmp_path / "f.json", {"facts": {"paid": True}})).facts() == {"paid": True}
    with pytest.raises(HarnessError, match="invalid facts"):
        load_facts_json(_write(tmp_path / "bad.json", {"facts": {"not-an-identifier": 1}}))


def test_sqlite_facts_shapes(tmp_path: Path) -> None:
    db = tmp_path / "env.sqlite"
    with sqlite3.connect(db) as connection:
        connection.executescript("CREATE TABLE t (k TEXT, v INTEGER); INSERT INTO t VALUES ('a', 1), ('b', 2);")
    queries = {
        "n": FactQuery(sql="SELECT COUNT(*) FROM t", shape="scalar"),
        "any": FactQuery(sql="SELECT COUNT(*) FROM t", shape="bool"),
        "keys": FactQuery(sql="SELECT k FROM t ORDER BY k", shape="column"),
        "first": FactQuery(sql="SELECT k, v FROM t ORDER BY k LIMIT 1", shape="row"),
        "all": FactQuery(sql="SELECT k, v FROM t ORDER BY k", shape="rows"),
        "as_map": FactQuery(sql="SELECT json_group_object(k, v) FROM t", shape="json"),
        "record.exists": FactQuery(sql="SELECT COUNT(*) FROM t WHERE k = 'z'", shape="bool"),
    }
    assert SqliteFacts(str(db), queries).facts() == {
        "n": 2,
        "any": True,
        "keys": ["a", "b"],
        "first": {"k": "a", "v": 1},
        "all": [{"k": "a", "v": 1}, {"k": "b", "v": 2}],
        "as_map": {"a": 1, "b": 2},
        "record": {"exists": False},
    }
    with pytest.raises(HarnessError, match="facts query 'bad' failed"):
        SqliteFacts(str(db), {"bad": FactQuery(sql="SELECT nope FROM t")}).facts()


def test_iter_traces_reads_jsonl_and_directories(tmp_path: Path) -> None:
    trace = {"task_id": "t", "events": []}
    (tmp_path / "batch.jsonl").write_text(json.dumps(trace) + "\n\n" + json.dumps({**trace, "trace_id": "named"}) + "\n")
    _write(tmp_path / "one.json", trace)
    names = [name for name, _ in iter_traces(str(tmp_path))]
    assert names == [f"{tmp_path}/batch.jsonl:1", "named", f"{tmp_path}/one.json"]
    (tmp_path / "broken.jsonl").write_text(json.dumps(trace) + "\n" + json.dumps({"task_id": "t", "events": [{"event_type": "x"}]}))
    with pytest.raises(HarnessError, match=r"broken.jsonl:2: invalid trace: event 0"):
        list(iter_traces(str(tmp_path / "broken.jsonl")))
