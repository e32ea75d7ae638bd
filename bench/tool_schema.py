"""Tool input schemas: the shipped engine against another checkout's, on correctness, speed and hostile strings.

Measured on the JSON-Schema-Test-Suite files the shield relies on for agent-written values (draft 7:
`pattern`, `patternProperties`, `optional/ecmascript-regex`, `optional/format/{date,date-time,email,
hostname,ipv4,regex,time,uri}`; 446 tests, copied into `tests/harness/shield/data/`): how many tests
each engine gets right, gets wrong, or cannot run because it refuses the schema; the microseconds one
validation of a typical tool input takes; and the milliseconds `a` and n dots (no `@`) take to be
rejected as an email, for growing n (a backtracking matcher grows quadratically; a linear one stays flat).
Each engine is `harness.shield.json_schema.compile_tool_schema` of its checkout, run in its own
process on one core. Writes `bench/results/tool_schema.json`.
Run: `python bench/tool_schema.py --baseline /path/to/other/checkout` (e.g. a `git worktree` of the
commit before the switch to jsonschema-rs).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from provenance import ROOT, stamp

SUITE = ROOT / "tests" / "harness" / "shield" / "data" / "json-schema-test-suite" / "draft7"
FILES = [
    "pattern.json",
    "patternProperties.json",
    "optional/ecmascript-regex.json",
    *(f"optional/format/{name}.json" for name in ("date", "date-time", "email", "hostname", "ipv4", "regex", "time", "uri")),
]
TOOL_SCHEMA = {
    "type": "object",
    "required": ["user_id", "email", "date"],
    "properties": {
        "user_id": {"type": "string", "pattern": "^u[0-9]{4}$"},
        "email": {"type": "string", "format": "email"},
        "date": {"type": "string", "format": "date"},
        "count": {"type": "integer", "minimum": 0},
    },
}
TOOL_INPUT = {"user_id": "u0001", "email": "joe@example.com", "date": "2024-05-01", "count": 3}
DOTS = (2_000, 8_000, 32_000)
DOTS_TIMEOUT_S = 60


def measure() -> dict[str, Any]:
    """The figures for the checkout on `sys.path` (run in a child process)."""
    from harness.core import HarnessError
    from harness.shield.json_schema import compile_tool_schema

    def accepts(validate: Any, value: Any) -> bool:
        try:
            validate(value)
        except HarnessError:
            raise
        except Exception:  # each engine raises its own validation error type
            return False
        return True

    per_file: dict[str, dict[str, int]] = {}
    for name in FILES:
        counts = {"right": 0, "wrong": 0, "refused": 0}
        for group in json.loads((SUITE / name).read_text(encoding="utf-8")):
            schema = group["schema"] if isinstance(group["schema"], dict) else {"allOf": [group["schema"]]}
            try:
                validate = compile_tool_schema(schema, "tool t")
            except HarnessError:
                counts["refused"] += len(group["tests"])
                continue
            for test in group["tests"]:
                try:
                    right = accepts(validate, test["data"]) is test["valid"]
                except HarnessError:
                    counts["refused"] += 1
                    continue
                counts["right" if right else "wrong"] += 1
        per_file[name] = counts
    validate = compile_tool_schema(TOOL_SCHEMA, "tool t")
    repeat = 20_000
    start = time.perf_counter()
    for _ in range(repeat):
        validate(TOOL_INPUT)
    per_validation_us = (time.perf_counter() - start) / repeat * 1e6
    email = compile_tool_schema({"type": "string", "format": "email"}, "tool t")
    totals = {key: sum(counts[key] for counts in per_file.values()) for key in ("right", "wrong", "refused")}
    return {"suite": totals, "suite_by_file": per_file, "us_per_validation": round(per_validation_us, 2), "email_validator": email}


def dots_ms(dots: int) -> float:
    from harness.shield.json_schema import compile_tool_schema

    email = compile_tool_schema({"type": "string", "format": "email"}, "tool t")
    start = time.perf_counter()
    try:
        email("a" + "." * dots)  # no "@": a backtracking email regex retries every ".." against the rest
    except Exception:  # rejected, as it should be; only the time matters here
        pass
    return round((time.perf_counter() - start) * 1e3, 3)


def _child(checkout: str, code: str, timeout: float) -> Any:
    env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{ROOT / 'bench'}"}
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, cwd=checkout, capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def engine(checkout: str, label: str) -> dict[str, Any]:
    setup = "import os, json, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); sys.path.insert(0, %r); import tool_schema as b;" % str(ROOT / "bench")
    figures = _child(checkout, setup + "r = b.measure(); r.pop('email_validator'); print(json.dumps(r))", 600)
    commit = subprocess.run(["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dots = {}
    for n in DOTS:
        dots[str(n)] = _child(checkout, setup + f"print(json.dumps(b.dots_ms({n})))", DOTS_TIMEOUT_S)
    dots["200000"] = _child(checkout, setup + "print(json.dumps(b.dots_ms(200000)))", DOTS_TIMEOUT_S)
    return {"engine": label, "checkout_commit": commit, **figures, "email_of_n_dots_ms": dots}


# The tables docs/benchmarks.md shows of this result (bench/benchmarks_doc.py reads the literal, never imports this file)
HEADLINE = {
    "values": (("suite tests", "suite_tests"), ("chosen", "chosen")),
    "tables": (
        {
            "over": "engines",
            "columns": (
                ("engine", "engine"),
                ("commit", "checkout_commit"),
                ("right", "suite.right"),
                ("wrong", "suite.wrong"),
                ("refused", "suite.refused"),
                ("us per validation", "us_per_validation"),
                ("email of 32,000 dots: ms", "email_of_n_dots_ms.32000"),
                ("email of 200,000 dots: ms (null: over 60 s)", "email_of_n_dots_ms.200000"),
            ),
        },
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="another checkout to measure beside this one")
    parser.add_argument("--baseline-label", default="fastjsonschema + ECMA-262 translator")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "tool_schema.json"))
    args = parser.parse_args()
    engines = [engine(str(ROOT), "jsonschema-rs (RegexOptions)")]
    if args.baseline:
        engines.append(engine(str(Path(args.baseline).resolve()), args.baseline_label))
    result = {**stamp(), "suite_tests": 446, "chosen": engines[0]["engine"], "engines": engines}
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    for row in engines:
        print(f"{row['engine']:40s} {row['suite']} {row['us_per_validation']} us/validation  dots ms {row['email_of_n_dots_ms']}")


if __name__ == "__main__":
    main()
