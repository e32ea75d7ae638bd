"""The shield's bundled labelled steps are exactly what the recorded agent traces give, so re-recording
a trace without `python -m tasks.agent labelled` fails here instead of measuring labellers on stale data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.shield.step_labels import load_labelled_steps
from tasks.agent.labelled import harvest_labelled_steps


def test_the_bundled_labelled_steps_are_the_harvest_of_the_recorded_traces() -> None:
    assert tuple(harvest_labelled_steps()) == load_labelled_steps()


def test_the_labelled_command_writes_a_file_the_shield_reads(tmp_path: Path) -> None:
    out = tmp_path / "steps.json"
    completed = subprocess.run([sys.executable, "-m", "tasks.agent", "labelled", "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert load_labelled_steps(str(out)) == tuple(harvest_labelled_steps())
    assert json.loads(out.read_text())["generated_by"] == "python -m tasks.agent labelled"
