"""MBPP (Austin et al. 2021, "Program Synthesis with Large Language Models") in HumanEval's shape.

MBPP rows carry a description (`text`, or `prompt` in the sanitized config), a reference program
(`code`) and assert lines (`test_list`, plus `challenge_test_list` and `test_setup_code`). To reuse
the HumanEval path unchanged (assembly, the sandbox's instrumented `check(candidate)`, the code
shield's visible examples), each row becomes a function stub whose docstring is the description
and the FIRST test as a doctest example (the visible test, as HumanEval's docstring examples are);
the hidden anchor is every test, rewritten to call `candidate` instead of the function's name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

from harness.core import HarnessError


def is_mbpp(row: Mapping[str, Any]) -> bool:
    return "test_list" in row and "code" in row


def _entry_point(tests: list[str], origin: str) -> str:
    for test in tests:
        for node in ast.walk(ast.parse(test)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                return node.func.id
    raise HarnessError(f"{origin}: no function call in the tests to name the entry point")


def _signature(code: str, entry_point: str, origin: str) -> str:
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == entry_point:
            return f"def {entry_point}({ast.unparse(node.args)}):"
    raise HarnessError(f"{origin}: the reference code does not define {entry_point}()")


def _doctest(test: str) -> str:
    """`assert f(x) == y` as a doctest example; other assert shapes as the call alone."""
    statement = ast.parse(test).body[0]
    if isinstance(statement, ast.Assert) and isinstance(statement.test, ast.Compare) and isinstance(statement.test.ops[0], ast.Eq):
        return f">>> {ast.unparse(statement.test.left)}\n    {ast.unparse(statement.test.comparators[0])}"
    return f">>> {ast.unparse(statement)}"


def _check(tests: list[str], entry_point: str, setup: str) -> str:
    lines = [setup.strip(), "", "def check(candidate):"] if setup.strip() else ["def check(candidate):"]
    for test in tests:
        tree = ast.parse(test)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == entry_point:
                node.id = "candidate"
        lines.append("    " + ast.unparse(tree))
    return "\n".join(lines) + "\n"


def humaneval_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MBPP rows as HumanEval rows (`task_id` `MBPP/<id>`, prompt stub, canonical code, check, entry point)."""
    converted = []
    for row in rows:
        origin = f"MBPP task {row.get('task_id')}"
        tests = list(row["test_list"]) + list(row.get("challenge_test_list") or [])
        if not tests:
            raise HarnessError(f"{origin}: no tests")
        entry_point = _entry_point(tests, origin)
        description = str(row.get("text") or row.get("prompt") or "").strip().replace('"""', "'''")
        stub = f'{_signature(row["code"], entry_point, origin)}\n    """{description}\n    {_doctest(tests[0])}\n    """\n'
        converted.append(
            {
                "task_id": f"MBPP/{row['task_id']}",
                "prompt": stub,
                "canonical_solution": row["code"],
                "test": _check(tests, entry_point, str(row.get("test_setup_code") or "")),
                "entry_point": entry_point,
            }
        )
    return converted
