"""Loading graphs, traces and facts: valid files load, invalid ones fail with one line naming the spot."""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harness.core.errors import HarnessError
from harness.shield import FactQuery, SqliteFacts, iter_traces, load_facts_json, load_graph, load_trace, parse_graph


def _write(path: Path, data: Any) -> str:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


BAD_TRACES = [
    ("not_json", "{", "is not valid JSON"),
    ("missing_task", {"events": []}, "field 'top level' \"task_id\" is a required property"),
    ("bad_event_type", {"task_id": "t", "events": [{"event_type": "chat"}, {"event_type": "teleport"}]}, "event 0: field 'event_type' \"chat\" is not one of"),
    ("tool_call_without_tool", {"task_id": "t", "events": [{"event_type": "user_message"}, {"event_type": "tool_call"}]}, "event 1:"),
    ("reward_out_of_range", {"task_id": "t", "events": [], "reward": 3}, "field 'reward' 3 is greater than the maximum of 1"),
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


DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE_JSON = [
    ("nan", b'{"task_id": "t", "events": [], "reward": NaN}', "non-finite number NaN"),
    ("infinity", b'{"task_id": "t", "events": [], "reward": Infinity}', "non-finite number Infinity"),
    ("minus_infinity", b'{"task_id": "t", "events": [], "meta": {"x": -Infinity}}', "non-finite number -Infinity"),
    ("overflowing_float", b'{"task_id": "t", "events": [], "meta": {"x": 1e999}}', "out of range"),
    ("deep_nesting", ('{"task_id": "t", "events": [], "meta": {"x": ' + DEEP + "}}").encode(), "nested deeper than 64"),
    ("moderate_nesting", ('{"task_id": "t", "events": [], "meta": {"x": ' + "[" * 70 + "]" * 70 + "}}").encode(), "nested deeper than 64"),
    ("invalid_utf8", b'{"task_id": "t\xff", "events": []}', "not UTF-8 (invalid byte at offset 14)"),
    ("huge_integer", b'{"task_id": "t", "events": [], "meta": {"x": 1' + b"0" * 5000 + b"}}", "does not fit in 64 bits"),
    ("wide_integer", b'{"task_id": "t", "events": [], "meta": {"x": 1180591620717411303424}}', "does not fit in 64 bits"),
    ("lone_surrogate", b'{"task_id": "t\\ud800", "events": []}', "lone UTF-16 surrogate"),
    ("lone_surrogate_key", b'{"task_id": "t", "events": [], "meta": {"\\udfff": 1}}', "lone UTF-16 surrogate"),
]


@pytest.mark.parametrize(("data", "message"), [case[1:] for case in HOSTILE_JSON], ids=[case[0] for case in HOSTILE_JSON])
def test_hostile_json_is_one_line_naming_the_file(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "t.json"
    path.write_bytes(data)
    for load in (load_trace, lambda p: list(iter_traces(p))):
        with pytest.raises(HarnessError) as error:
            load(str(path))
        assert str(path) in str(error.value) and message in str(error.value) and "\n" not in str(error.value)
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_bytes(b'{"task_id": "t", "events": []}\n' + data.replace(b"\n", b" ") + b"\n")
    with pytest.raises(HarnessError, match=rf"t\.jsonl(:2)?: .*{re.escape(message)}"):
        list(iter_traces(str(jsonl)))


def test_nan_in_facts_and_graphs_is_refused(tmp_path: Path, mini_graph_data: dict[str, Any]) -> None:
    with pytest.raises(HarnessError, match="non-finite number NaN"):
        load_facts_json(_write(tmp_path / "f.json", '{"facts": {"amount": NaN}}'))
    text = json.dumps(mini_graph_data).replace('"task_id": "mini"', '"task_id": "mini", "description": 1.0e999')
    with pytest.raises(HarnessError, match="out of range"):
        load_graph(_write(tmp_path / "g.json", text))


def _special_files(tmp_path: Path) -> dict[str, str]:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    folder = tmp_path / "folder.json"
    folder.mkdir()
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    return {"fifo": str(fifo), "dev_zero": str(zero), "directory": str(folder), "symlink_loop": str(loop)}


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory", "symlink_loop"])
def test_only_regular_files_are_read(tmp_path: Path, kind: str) -> None:
    path = _special_files(tmp_path)[kind]
    for load in (load_trace, load_graph, load_facts_json):
        with pytest.raises(HarnessError) as error:
            load(path)
        assert path in str(error.value) and "\n" not in str(error.value)


def test_a_trace_directory_does_not_recurse(tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text(json.dumps({"task_id": "t", "events": []}))
    (tmp_path / "self.json").symlink_to(tmp_path)  # a loop that recursion would follow forever
    with pytest.raises(HarnessError, match="self.json: cannot read trace: not a regular file"):
        list(iter_traces(str(tmp_path)))


def test_a_jsonl_line_holding_u2028_is_one_trace(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"task_id": "t", "trace_id": "a\u2028b", "events": []}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert [name for name, _ in iter_traces(str(path))] == ["a\u2028b"]


def _db(tmp_path: Path, script: str, name: str = "env.sqlite") -> Path:
    db = tmp_path / name
    with sqlite3.connect(db) as connection:
        connection.executescript(script)
    connection.close()
    return db


BAD_FACT_ROWS = [
    ("bool_from_text_false", "SELECT v FROM t WHERE k = 'text_false'", "bool", "shape bool) returned TEXT 'false'"),
    ("bool_from_text_true", "SELECT v FROM t WHERE k = 'text_true'", "bool", "shape bool) returned TEXT 'true'"),
    ("bool_from_null", "SELECT NULL", "bool", "returned NULL"),
    ("json_not_json", "SELECT 'not json'", "json", "is not valid JSON"),
    ("json_not_text", "SELECT 42", "json", "returned INTEGER, not JSON text"),
    ("json_nan", "SELECT '{\"x\": NaN}'", "json", "non-finite number NaN"),
    ("infinite_real", "SELECT 9e999", "scalar", "non-finite number inf"),
    ("blob", "SELECT x'00ff'", "scalar", "bytes is not a JSON value"),
]


@pytest.mark.parametrize(("sql", "shape", "message"), [case[1:] for case in BAD_FACT_ROWS], ids=[case[0] for case in BAD_FACT_ROWS])
def test_facts_are_typed(tmp_path: Path, sql: str, shape: str, message: str) -> None:
    db = _db(tmp_path, "CREATE TABLE t (k TEXT, v); INSERT INTO t VALUES ('text_false', 'false'), ('text_true', 'true');")
    with pytest.raises(HarnessError) as error:
        SqliteFacts(str(db), {"x": FactQuery(sql=sql, shape=shape)}).facts()
    assert str(db) in str(error.value) and message in str(error.value) and "\n" not in str(error.value)


def test_bool_facts_from_integers_and_no_rows(tmp_path: Path) -> None:
    db = _db(tmp_path, "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (0);")
    queries = {"zero": FactQuery(sql="SELECT v FROM t", shape="bool"), "none": FactQuery(sql="SELECT v FROM t WHERE v = 5", shape="bool")}
    assert SqliteFacts(str(db), queries).facts() == {"zero": False, "none": False}


def test_facts_db_path_with_a_hash_is_opened_read_only(tmp_path: Path) -> None:
    db = _db(tmp_path, "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (7);", name="env#1.sqlite")
    before = sorted(os.listdir(tmp_path))
    assert SqliteFacts(str(db), {"n": FactQuery(sql="SELECT v FROM t", shape="scalar")}).facts() == {"n": 7}
    with pytest.raises(HarnessError, match="is refused: it does INSERT 't'"):
        SqliteFacts(str(db), {"n": FactQuery(sql="INSERT INTO t VALUES (8) RETURNING v", shape="scalar")}).facts()
    assert sorted(os.listdir(tmp_path)) == before  # `file:.../env#1.sqlite?mode=ro` created `env`


def test_a_runaway_facts_query_is_stopped(tmp_path: Path) -> None:
    db = _db(tmp_path, "CREATE TABLE t (v INTEGER);")
    forever = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c"
    with pytest.raises(HarnessError, match="facts query 'n' is refused: the facts queries used up their budget of 100000 SQLite VM steps"):
        SqliteFacts(str(db), {"n": FactQuery(sql=forever, shape="scalar")}, max_steps=100_000).facts()


_ROWS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {rows}) "
# Queries that do much work in few VM steps: each row builds or scans a long string, so the step
# budget alone never stops them (the red team's 385-byte query ran 57-64 s within 50M steps).
HEAVY_QUERIES = [
    ("printf_replace_megabytes", _ROWS.format(rows=600) + "SELECT sum(length(replace(printf('%.*c', 4000000 + x, 'x'), 'x', 'yy'))) FROM c",
     "ran past their deadline of 0.5 s"),
    ("printf_replace_under_the_cap", _ROWS.format(rows=10**6) + "SELECT sum(length(replace(printf('%.*c', 100000 + x % 2, 'x'), 'x', 'yy'))) FROM c",
     "ran past their deadline of 0.5 s"),
    ("instr_quadratic_per_row", _ROWS.format(rows=10**6) + "SELECT sum(instr(printf('%.*c', 200000 + x % 2, 'a'), printf('%.*c', 100000, 'a') || 'b')) FROM c",
     "ran past their deadline of 0.5 s"),
    ("like_pattern_too_long", "SELECT printf('%.*c', 200000, 'a') LIKE '%' || printf('%.*c', 5000, 'a') || 'b'", "LIKE or GLOB pattern too complex"),
]


@pytest.mark.parametrize(("sql", "message"), [case[1:] for case in HEAVY_QUERIES], ids=[case[0] for case in HEAVY_QUERIES])
def test_heavy_facts_queries_are_bad_input(tmp_path: Path, sql: str, message: str) -> None:
    db = _db(tmp_path, "CREATE TABLE t (v INTEGER);")
    with pytest.raises(HarnessError) as error:
        SqliteFacts(str(db), {"s": FactQuery(sql=sql, shape="scalar")}, deadline_s=0.5).facts()
    assert "facts query 's'" in str(error.value) and message in str(error.value) and "\n" not in str(error.value)


def test_nested_query_names_are_refused_when_the_graph_loads(tmp_path: Path, mini_graph_data: dict[str, Any]) -> None:
    mini_graph_data["facts"]["queries"] = {"a": {"sql": "SELECT 1"}, "a.b": {"sql": "SELECT 2"}}
    with pytest.raises(HarnessError, match="facts query 'a.b' nests under query 'a'"):
        load_graph(_write(tmp_path / "g.json", mini_graph_data))


def test_files_over_the_size_cap_are_refused_before_reading(tmp_path: Path) -> None:
    from harness.shield.json_input import MAX_BYTES, read_bytes

    sparse = tmp_path / "huge.jsonl"
    with open(sparse, "wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: costs no disk, and must cost no memory
    with pytest.raises(HarnessError, match=f"huge.jsonl: traces is larger than {MAX_BYTES} bytes"):
        list(iter_traces(str(sparse)))
    small = _write(tmp_path / "small.json", "x" * 17)
    assert read_bytes(small, "trace", limit=17) == b"x" * 17
    with pytest.raises(HarnessError, match="larger than 16 bytes"):
        read_bytes(small, "trace", limit=16)


def _events(count: int) -> list[dict[str, Any]]:
    return [{"event_type": "agent_message", "content": "."}] * count


def test_a_trace_of_more_events_than_one_input_may_hold_is_refused_before_it_is_checked(tmp_path: Path) -> None:
    """Verification costs about a millisecond per event on a real graph (every invariant at every
    event), so 64 MiB of one-line events would be minutes: an input's events are capped, and a
    trace over the cap is refused with its count, before its schema is even walked."""
    from harness.shield.trace import MAX_EVENTS

    at_cap = _write(tmp_path / "at_cap.json", {"task_id": "t", "events": _events(MAX_EVENTS)})
    assert len(load_trace(at_cap).events) == MAX_EVENTS
    over = _write(tmp_path / "over.json", {"task_id": "t", "events": _events(MAX_EVENTS + 1)})
    with pytest.raises(HarnessError) as error:
        load_trace(over)
    assert str(error.value) == (
        f"{over}: the trace has {MAX_EVENTS + 1:,} events, more than the {MAX_EVENTS:,} one input file may hold "
        "(split it: a directory of files is read one file at a time)"
    )


def test_a_jsonl_batch_is_capped_by_its_events_in_all_not_per_line(tmp_path: Path) -> None:
    """Many traces under the cap each still add up: the cap is on the file's events, and the line
    that crosses it is named, before any trace of the file is verified."""
    from harness.shield.trace import MAX_EVENTS

    half = json.dumps({"task_id": "t", "events": _events(MAX_EVENTS // 2)})
    fits = _write(tmp_path / "fits.jsonl", f"{half}\n{half}\n")
    assert sum(len(trace.events) for _, trace in iter_traces(fits)) == MAX_EVENTS
    over = _write(tmp_path / "over.jsonl", f"{half}\n{half}\n" + json.dumps({"task_id": "t", "events": _events(1)}) + "\n")
    with pytest.raises(HarnessError) as error:
        next(iter(iter_traces(over)))
    assert str(error.value).startswith(f"{over}:3: the file's traces have {MAX_EVENTS + 1:,} events by this line, more than the {MAX_EVENTS:,}")


def test_a_graph_of_more_expressions_than_can_be_checked_is_refused(tmp_path: Path, mini_graph_data: dict[str, Any]) -> None:
    """1.8 million one-line invariants fit in 64 MiB and took `check` 112 s to compile: a graph
    holds at most `MAX_EXPRESSIONS`, counted over nodes and global invariants alike."""
    from harness.shield.graph import MAX_EXPRESSIONS

    def count(value: str | list[str]) -> int:
        return 1 if isinstance(value, str) else len(value)

    used = len(mini_graph_data["global_invariants"]) + sum(
        count(node.get(key, [])) for node in mini_graph_data["nodes"] for key in ("invariant", "precondition", "postcondition"))
    mini_graph_data["global_invariants"] = list(mini_graph_data.get("global_invariants", [])) + ["true"] * (MAX_EXPRESSIONS - used)
    assert load_graph(_write(tmp_path / "at_cap.json", mini_graph_data)).task_id == "mini"
    mini_graph_data["nodes"][0]["invariant"] = [*mini_graph_data["nodes"][0].get("invariant", []), "true"]
    with pytest.raises(HarnessError) as error:
        load_graph(_write(tmp_path / "over.json", mini_graph_data))
    assert str(error.value).endswith(f"over.json: invalid graph: {MAX_EXPRESSIONS + 1:,} CEL expressions, more than the {MAX_EXPRESSIONS:,} a graph may have")



def test_a_graph_whose_expressions_are_too_long_in_all_is_refused(tmp_path: Path, mini_graph_data: dict[str, Any]) -> None:
    """Compiling is quadratic in a chain's length: 1,000 invariants of 8 KB took `verify` 27 s to
    compile. Each expression is capped (`MAX_EXPRESSION_CHARS`) and so are all of them together."""
    from harness.shield.graph import MAX_EXPRESSION_TEXT

    long = "+".join(["1"] * 1_000) + " > 0"
    mini_graph_data["global_invariants"] = [long] * (MAX_EXPRESSION_TEXT // len(long) + 1)
    with pytest.raises(HarnessError, match=f"over.json: invalid graph: its CEL expressions have [0-9,]+ characters, more than the {MAX_EXPRESSION_TEXT:,}"):
        load_graph(_write(tmp_path / "over.json", mini_graph_data))


def test_a_graph_of_more_nodes_than_can_be_checked_is_refused(tmp_path: Path, mini_graph_data: dict[str, Any]) -> None:
    from harness.shield.graph import MAX_NODES

    mini_graph_data["nodes"] += [{"node_id": f"N{index}"} for index in range(MAX_NODES - len(mini_graph_data["nodes"]) + 1)]
    with pytest.raises(HarnessError) as error:
        load_graph(_write(tmp_path / "over.json", mini_graph_data))
    assert str(error.value).endswith(f"over.json: invalid graph: {MAX_NODES + 1:,} nodes, more than the {MAX_NODES:,} a graph may have")
