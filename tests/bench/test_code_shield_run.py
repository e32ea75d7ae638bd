"""docs/shield.md's code-task figures are the committed `bench/results/code_shield_run.json`, and
its list of code violation kinds names every kind the code shield can report."""

from __future__ import annotations

import json
from pathlib import Path

from tasks.code.shield import AUDIT_VARIABLES, OUTCOME_CHECKS

ROOT = Path(__file__).resolve().parents[2]
SHIELD_DOC = (ROOT / "docs" / "shield.md").read_text(encoding="utf-8")


def test_the_code_row_quotes_the_committed_result() -> None:
    result = json.loads((ROOT / "bench" / "results" / "code_shield_run.json").read_text(encoding="utf-8"))
    metrics = result["metrics"]
    [row] = [line for line in SHIELD_DOC.splitlines() if line.startswith("| `python -m harness task=code")]
    assert f"`{result['command']}`" in row and "benchmarks.md#code_shield_run" in row
    cells = [cell.strip() for cell in row.split("|")[2:-1]]
    expected = [
        f"{metrics['selection_accuracy']:.3f} -> shielded {metrics['shielded.selection_accuracy']:.3f}",
        f"{metrics['hack_rate']:.3f} -> {metrics['shielded.hack_rate']:.3f}",
        f"{metrics['attack_selection_rate']:.3f} -> {metrics['shielded.attack_selection_rate']:.3f}",
    ]
    assert cells[:3] == expected
    assert cells[3].startswith(f"{result['wall_s']} s")
    picked = sum(kind["judge_picked"] for kind in result["attacks"].values())
    assert f"the judge picked {picked:g} of the {metrics['attacks_planted']} plants" in " ".join(SHIELD_DOC.split())


def test_every_code_violation_kind_is_listed() -> None:
    start = SHIELD_DOC.index("- **Code**")
    listing = SHIELD_DOC[start : SHIELD_DOC.index("- **Agents**", start)]
    missing = [kind for kind in (*AUDIT_VARIABLES, *OUTCOME_CHECKS) if f"`{kind}`" not in listing]
    assert missing == []
