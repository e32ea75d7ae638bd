"""Math-Verify alone against this project's MATH anchor on the answer-forms table of docs/tasks.md.

The rows are `FORMS` of tests/tasks/math/test_answer_forms.py (each a candidate on a real MATH-500
problem and the outcome this project gives it). For each row, Math-Verify is run the way
lm-eval's `minerva_math` `math_verify` metric runs it: `verify(parse(gold), parse(candidate))` on
the whole candidate text, library defaults (its `float_rounding=6`, its own extraction); next to
it, this project's outcome. The docs table's Math-Verify column is this result.

Writes `bench/results/math_answer_forms.json`. Run: `python bench/math_answer_forms.py`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import runpy
from pathlib import Path

from provenance import stamp

from tasks.math import CheckPool, check_answer
from tasks.math.checker import MathAnchor

HEADLINE = {
    "values": (
        ("rows", "n"),
        ("rows where Math-Verify alone errs (counts right as wrong or wrong as right)", "math_verify_errs"),
        ("rows where this project matches the table", "project_matches"),
    ),
}
TABLE = Path(__file__).resolve().parents[1] / "tests" / "tasks" / "math" / "test_answer_forms.py"


def main() -> None:
    from math_verify import parse, verify

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "math_answer_forms.json"))
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    table = runpy.run_path(str(TABLE))
    rows = table["ROWS"]
    results = []
    with CheckPool(workers=2, timeout_s=5.0) as pool:
        for name, index, text, expected in table["FORMS"]:
            gold = rows[index]["answer"]
            math_verify = bool(verify(parse(f"${gold}$"), parse(text)))
            outcome = check_answer(MathAnchor(gold, rows[index]["problem"]), text, pool).outcome
            results.append({"row": name, "math_verify": math_verify, "project": outcome, "expected": expected})
    errs = sum(row["math_verify"] != (row["expected"] == "correct") for row in results)
    matches = sum(row["project"] == row["expected"] for row in results)
    output = {**stamp(), "n": len(results), "math_verify_errs": errs, "project_matches": matches, "rows": results}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(output, handle, indent=2)
        handle.write("\n")
    print(f"{len(results)} rows: Math-Verify alone errs on {errs}; this project matches {matches}")


if __name__ == "__main__":
    main()
