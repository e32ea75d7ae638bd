"""`python -m harness.shield verify|check` on hostile inputs: each is bad input, so exit 2 with one
line on stderr, no traceback, no hang and no file written anywhere under the test's folder."""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.harness.shield.conftest import HONEST_FACTS, graph_data, honest_events

HONEST_TRACE = {"task_id": "mini", "reward": 0.9, "events": honest_events()}
DEEP = "[" * 50_000 + "]" * 50_000


def _write(path: Path, data: Any) -> str:
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def _graph(root: Path, change: Callable[[dict[str, Any]], Any] | None = None, name: str = "graph.json") -> str:
    data = copy.deepcopy(graph_data())
    if change is not None:
        change(data)
    return _write(root / name, data)


def _trace(root: Path, text: str | bytes, name: str = "hostile.json") -> str:
    return _write(root / name, text)


def _good(root: Path) -> dict[str, str]:
    return {"graph": _graph(root), "trace": _write(root / "trace.json", HONEST_TRACE), "facts": _write(root / "facts.json", {"facts": HONEST_FACTS})}


def _verify(root: Path, **override: str) -> list[str]:
    files = {**_good(root), **override}
    args = ["verify", "--graph", files["graph"], "--trace", files["trace"]]
    if "facts_db" in files:
        return [*args, "--facts-db", files["facts_db"]]
    return [*args, "--facts", files["facts"]]


def _fifo(root: Path, name: str) -> str:
    os.mkfifo(root / name)
    return str(root / name)


def _link(root: Path, name: str, target: str | Path) -> str:
    (root / name).symlink_to(target)
    return str(root / name)


def _db(root: Path, name: str, script: str) -> str:
    connection = sqlite3.connect(root / name)
    connection.executescript(script)
    connection.commit()
    connection.close()
    return str(root / name)


def _db_graph(root: Path, sql: str, shape: str) -> str:
    return _graph(root, lambda data: data.update(facts={"variables": ["results"], "queries": {"paid": {"sql": sql, "shape": shape}}}), "db_graph.json")


def _typed_graph(root: Path, types: dict[str, str], queries: dict[str, Any] | None = None) -> str:
    def change(data: dict[str, Any]) -> None:
        data["facts"]["types"] = types
        if queries is not None:
            data["facts"] = {"variables": ["results"], "types": types, "queries": queries}

    return _graph(root, change, "typed_graph.json")


def _trace_with(text: str) -> str:
    return json.dumps(HONEST_TRACE).replace('"reward": 0.9', text)


def _pattern(pattern: str) -> Callable[[dict[str, Any]], Any]:
    return lambda data: data["tools"]["search"]["input_schema"]["properties"]["user_id"].update(pattern=pattern)


_ROWS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) "
_HEAVY = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < {rows}) SELECT sum(length(replace(printf('%.*c', {width}, 'x'), 'x', 'yy'))) FROM c"

CASES: dict[str, Callable[[Path], list[str]]] = {
    "graph_missing": lambda root: _verify(root, graph=str(root / "nope.json")),
    "graph_fifo": lambda root: _verify(root, graph=_fifo(root, "g.fifo")),
    "graph_dev_zero": lambda root: ["check", "--graph", _link(root, "zero.json", "/dev/zero")],
    "graph_directory": lambda root: ["check", "--graph", str(root)],
    "graph_deep_nesting": lambda root: ["check", "--graph", _write(root / "g.json", '{"task_id": ' + DEEP + "}")],
    "graph_nan": lambda root: ["check", "--graph", _write(root / "g.json", json.dumps(graph_data()).replace('"format_version": 1', '"format_version": NaN'))],
    "graph_invalid_regex": lambda root: _verify(root, graph=_graph(root, _pattern("^(u[0-9]{4}$"), "bad_regex.json")),
    "graph_python_only_regex": lambda root: _verify(root, graph=_graph(root, _pattern("(?i)^u[0-9]{4}$"), "py_regex.json")),
    "graph_remote_ref": lambda root: _verify(root, graph=_graph(root, lambda d: d["tools"]["search"].update(input_schema={"$ref": "http://127.0.0.1:9/x.json"}), "ref.json")),
    "graph_schema_properties_list": lambda root: _verify(root, graph=_graph(root, lambda d: d["tools"]["search"].update(input_schema={"properties": []}), "plist.json")),
    "graph_schema_multiple_of_zero": lambda root: _verify(
        root, graph=_graph(root, lambda d: d["tools"]["search"]["input_schema"]["properties"].update(n={"multipleOf": 0}), "zero.json"),
        trace=_trace(root, json.dumps(HONEST_TRACE).replace('"user_id": "u0001"', '"user_id": "u0001", "n": 3')),
    ),
    "graph_nested_query_names": lambda root: ["check", "--graph", _graph(root, lambda d: d["facts"].update(queries={"a": {"sql": "SELECT 1"}, "a.b": {"sql": "SELECT 2"}}), "nested.json")],
    "trace_nan_reward": lambda root: _verify(root, trace=_trace(root, _trace_with('"reward": NaN'))),
    "trace_infinite_input": lambda root: _verify(root, trace=_trace(root, _trace_with('"reward": 0.5, "meta": {"amount": -Infinity}'))),
    "trace_deep_nesting": lambda root: _verify(root, trace=_trace(root, _trace_with('"reward": 0.5, "meta": {"x": ' + DEEP + "}"))),
    "trace_invalid_utf8": lambda root: _verify(root, trace=_trace(root, _trace_with('"reward": 0.5, "meta": {"x": "XX"}').encode().replace(b"XX", b"\xc3\x28"))),
    "trace_huge_integer": lambda root: _verify(root, trace=_trace(root, _trace_with('"reward": 0.5, "meta": {"x": 1' + "0" * 5000 + "}"))),
    "trace_lone_surrogate": lambda root: _verify(root, trace=_trace(root, _trace_with('"reward": 0.5, "trace_id": "\\udc80"'))),
    "trace_fifo": lambda root: _verify(root, trace=_fifo(root, "fifo.json")),
    "trace_dir_with_loop": lambda root: (_link(root / "traces", "loop.json", root / "traces") and _verify(root, trace=str(root / "traces"))),
    "trace_jsonl_bad_line": lambda root: _verify(root, trace=_trace(root, json.dumps(HONEST_TRACE) + "\n{\n", "batch.jsonl")),
    "facts_nan": lambda root: _verify(root, facts=_write(root / "nan_facts.json", '{"facts": {"paid": NaN}}')),
    "facts_dev_zero": lambda root: _verify(root, facts=_link(root, "zero_facts.json", "/dev/zero")),
    "facts_db_bool_text_behind_hash": lambda root: _verify(
        root,
        graph=_db_graph(root, "SELECT v FROM t", "bool"),
        facts_db=_db(root, "env#1.sqlite", "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('false');"),
    ),
    "facts_db_json_not_json": lambda root: _verify(
        root, graph=_db_graph(root, "SELECT 'nope'", "json"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_not_a_database": lambda root: _verify(root, graph=_db_graph(root, "SELECT 1", "bool"), facts_db=_write(root / "env.sqlite", "plain text")),
    "facts_db_fifo": lambda root: _verify(root, graph=_db_graph(root, "SELECT 1", "bool"), facts_db=_fifo(root, "env.sqlite")),
    "bad_sample_rate": lambda root: [*_verify(root), "--deep-sample-rate", "nan"],
    # The facts database is read, never written (relative paths land in the test's cwd, which is watched).
    "facts_db_attach_creates_a_file": lambda root: _verify(
        root, graph=_db_graph(root, "ATTACH DATABASE 'attached.sqlite' AS s", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_attach_in_a_subquery": lambda root: _verify(
        root, graph=_db_graph(root, "SELECT count(*) FROM pragma_database_list", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_vacuum_into": lambda root: _verify(
        root, graph=_db_graph(root, "VACUUM INTO 'copy.sqlite'", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_pragma_write": lambda root: _verify(
        root, graph=_db_graph(root, "PRAGMA user_version = 7", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_temp_table": lambda root: _verify(
        root, graph=_db_graph(root, "CREATE TEMP TABLE x AS SELECT 1", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_gigabyte_blob": lambda root: _verify(
        root, graph=_db_graph(root, "SELECT length(zeroblob(1000000000)) > 0", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    "facts_db_gigabyte_printf": lambda root: _verify(
        root, graph=_db_graph(root, "SELECT length(printf('%.*c', 1000000000, 'x')) > 0", "bool"), facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);")
    ),
    # Facts have the types the graph declares.
    "facts_json_string_for_a_bool": lambda root: _verify(
        root, graph=_typed_graph(root, {"paid": "bool"}), facts=_write(root / "typed_facts.json", {"facts": {"paid": "true", "results": ["x"]}})
    ),
    "facts_json_bool_for_an_int": lambda root: _verify(
        root, graph=_typed_graph(root, {"results": "list", "paid": "int"}), facts=_write(root / "typed_facts.json", {"facts": {"paid": True, "results": ["x"]}})
    ),
    "facts_db_text_for_an_int": lambda root: _verify(
        root,
        graph=_typed_graph(root, {"paid": "int"}, {"paid": {"sql": "SELECT v FROM t", "shape": "scalar"}}),
        facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('1');"),
    ),
    "graph_types_an_undeclared_fact": lambda root: ["check", "--graph", _typed_graph(root, {"nope": "bool"})],
    "graph_lookahead_pattern": lambda root: _verify(root, graph=_graph(root, _pattern("^(?=u)u[0-9]{4}$"), "lookahead.json")),
    "graph_backreference_pattern": lambda root: _verify(root, graph=_graph(root, _pattern("^(u)\\1[0-9]{4}$"), "backref.json")),
    "graph_too_big_pattern": lambda root: _verify(root, graph=_graph(root, _pattern("(a{1000}){1000}"), "big_regex.json")),
    "graph_long_cel_syntax_error": lambda root: _verify(root, graph=_graph(root, lambda d: d.update(global_invariants=["(" * 5000 + ")" * 5000]), "deep_cel.json")),
    # Heavy facts queries: few VM steps, much work (the red team's query, then one under the value cap).
    "facts_db_megabyte_strings_per_row": lambda root: _verify(
        root,
        graph=_db_graph(root, _HEAVY.format(width="4000000 + x", rows=600), "scalar"),
        facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);"),
    ),
    "facts_db_quadratic_instr_per_row": lambda root: _verify(
        root,
        graph=_db_graph(root, _ROWS + "SELECT sum(instr(printf('%.*c', 200000 + x % 2, 'a'), printf('%.*c', 100000, 'a') || 'b')) FROM c", "scalar"),
        facts_db=_db(root, "env.sqlite", "CREATE TABLE t (v);"),
    ),
}

# What each refusal must name, beside being one line (the rest only needs one line and exit 2).
NAMED = {
    "facts_db_attach_creates_a_file": "facts query 'paid' is refused: it does ATTACH",
    "facts_db_vacuum_into": "facts query 'paid' is refused",
    "facts_db_pragma_write": "facts query 'paid' is refused: it does PRAGMA",
    "facts_db_temp_table": "facts query 'paid' is refused",
    "facts_db_gigabyte_blob": "facts query 'paid' is refused: it does function zeroblob()",
    "facts_json_string_for_a_bool": "typed_facts.json: fact 'paid' must be bool, got string",
    "facts_json_bool_for_an_int": "typed_facts.json: fact 'paid' must be int, got bool",
    "facts_db_text_for_an_int": "env.sqlite: fact 'paid' must be int, got string",
    "graph_types_an_undeclared_fact": "facts.types names 'nope'",
    "graph_lookahead_pattern": "tool search: invalid input_schema: pattern at properties.user_id.pattern is refused",
    "graph_backreference_pattern": "tool search: invalid input_schema: pattern at properties.user_id.pattern is refused",
    "graph_too_big_pattern": "(it is too big: its counted repetitions multiply past the engine's size limit)",
    "graph_long_cel_syntax_error": "CEL syntax error in '((((",
    "facts_db_megabyte_strings_per_row": "facts query 'paid' is refused: the facts queries ran past their deadline of 5 s",
    "facts_db_quadratic_instr_per_row": "facts query 'paid' is refused: the facts queries ran past their deadline of 5 s",
}


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(path): (path.lstat().st_size, path.lstat().st_mtime_ns) for path in root.rglob("*")}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    root = tmp_path / "in"
    (root / "traces").mkdir(parents=True)
    _write(root / "traces" / "ok.json", HONEST_TRACE)
    args = CASES[case](root)
    work = tmp_path / "cwd"
    work.mkdir()
    before = _snapshot(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    result = subprocess.run(
        [sys.executable, "-m", "harness.shield", *args], capture_output=True, text=True, timeout=30, cwd=work, env=env
    )
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode == 2, (result.returncode, result.stdout[-500:], result.stderr[-500:])
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert NAMED.get(case, "") in result.stderr
    assert len(result.stderr) < 1000, result.stderr[:300]  # what the input holds is not repeated back
    assert _snapshot(tmp_path) == before


def _shield(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.shield", *args], input=stdin, capture_output=True, text=True, timeout=120)


def _nested_graph(root: Path) -> str:
    """A graph `check` calls clean plus one invariant of seven nested comprehensions over ten
    numbers, read again at every event (seconds per evaluation, in native code no timer in the
    process can stop)."""
    ten = "[0,1,2,3,4,5,6,7,8,9]"
    nested = "event.index >= 0 && " + ten + "".join(f".all(x{depth}, {ten}" for depth in range(6)) + ".all(y, y >= 0)" + ")" * 6
    return _graph(root, lambda data: data["global_invariants"].append(nested), name="nested.json")


def test_an_evaluation_that_does_not_return_ends_verify_at_the_step_deadline(tmp_path: Path) -> None:
    """The command's worker is killed when one step (here: the only trace) computes past the
    deadline: one line naming the step, exit 2, nothing printed; the same trace on the plain graph
    passes under the same deadline."""
    files = _good(tmp_path)
    fast = _shield("--step-deadline", "1", "verify", "--graph", files["graph"], "--trace", files["trace"], "--facts", files["facts"])
    assert fast.returncode == 0, fast.stderr
    slow = _shield("--step-deadline", "1", "verify", "--graph", _nested_graph(tmp_path), "--trace", files["trace"], "--facts", files["facts"])
    assert (slow.returncode, slow.stdout) == (2, "")
    assert slow.stderr == f"error: {files['trace']}: trace {files['trace']}: ran past 1 s of verification (an invariant's evaluation did not return)\n"


def test_follow_times_each_event_and_never_the_wait_for_the_next(tmp_path: Path) -> None:
    """Under --follow the deadline runs while an event is checked, not while the agent is slow to
    write the next one: a pause of twice the deadline between lines passes; the slow invariant
    ends the command at the event it was on."""
    files = _good(tmp_path)
    header, *events = [json.dumps({"task_id": "mini"}), *(json.dumps(event) for event in honest_events())]
    command = [sys.executable, "-m", "harness.shield", "--step-deadline", "1", "verify", "--graph", files["graph"], "--follow", "-", "--facts", files["facts"]]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdin is not None
        process.stdin.write(header + "\n" + events[0] + "\n")
        process.stdin.flush()
        time.sleep(2.5)
        process.stdin.write("\n".join(events[1:]) + "\n")
        out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert "PASS" in out
    slow = _shield("--step-deadline", "1", "verify", "--graph", _nested_graph(tmp_path), "--follow", "-", "--facts", files["facts"],
                   stdin="\n".join([header, *events]) + "\n")
    assert (slow.returncode, slow.stdout) == (2, "")
    assert slow.stderr == "error: stdin:2: event 0: ran past 1 s of verification (an invariant's evaluation did not return)\n"
