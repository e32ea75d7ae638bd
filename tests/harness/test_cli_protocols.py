"""The two protocols that generate before judging, `recompute` and `solve_first`, through
`python -m harness` with the tiny CPU judge (generation capped at 16 tokens to keep it cheap)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from omegaconf import OmegaConf

from tests.support.runs import harness_cli, rows

BASE = ("judge=llama_tiny", "limit=1", "n=2", "tracking.enabled=false")
OVERRIDES = {"recompute": "protocol.max_tokens=16", "solve_first": "protocol.solve_max_tokens=16"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """protocol -> (output dir, console output) of one run each, on a cache of their own."""
    root = tmp_path_factory.mktemp("protocols")
    done = {}
    for protocol, override in OVERRIDES.items():
        completed = harness_cli(root, *BASE, f"protocol={protocol}", override, f"output_dir={root / protocol}", cache=root / "calls.sqlite")
        assert completed.returncode == 0, completed.stderr[-3000:]
        done[protocol] = (root / protocol, completed.stdout)
    return done


def _prompts(output_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (output_dir / "prompts.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("protocol", list(OVERRIDES))
def test_the_run_completes_and_names_its_protocol_everywhere(runs: dict[str, tuple[Path, str]], protocol: str) -> None:
    output_dir, console = runs[protocol]
    assert f"gsm8k best-of-N audit | judge=llama_tiny | protocol={protocol}" in console
    assert OmegaConf.load(output_dir / "resolved_config.yaml").protocol.name == protocol
    summary = json.loads((output_dir / "summary.json").read_text())
    assert (summary["problems"], summary["candidates"]) == (1, 2)
    table = rows(output_dir)
    scored = [row for row in table if row["ensemble_score"] is not None]
    assert summary["parse_failure_rate"] == pytest.approx(1 - len(scored) / len(table))
    assert all(0 <= row["ensemble_score"] <= 1 for row in scored)
    if scored:  # the pick is a best-scored candidate; the accuracy is the right share of the tied best
        [picked] = [row for row in table if row["selected"]]
        best = max(row["ensemble_score"] for row in scored)
        assert picked["ensemble_score"] == best
        assert summary["selection_accuracy_seeded"] == float(picked["anchor_correct"])
        tied = [row for row in scored if row["ensemble_score"] == best]
        assert summary["selection_accuracy"] == pytest.approx(sum(row["anchor_correct"] for row in tied) / len(tied))
        assert [row["pick_probability"] for row in table] == [1 / len(tied) if row in tied else 0.0 for row in table]
    assert {prompt["protocol"] for prompt in _prompts(output_dir)} == {protocol}
    # with output_dir= given, Hydra's record and the log are in it, and no outputs/ directory is made
    assert (output_dir / "harness.log").read_text() and (output_dir / ".hydra" / "overrides.yaml").exists()
    assert not (output_dir.parent / "outputs").exists()


def test_recompute_writes_its_recomputation_before_the_verdict(runs: dict[str, tuple[Path, str]]) -> None:
    output_dir, _ = runs["recompute"]
    summary = json.loads((output_dir / "summary.json").read_text())
    assert summary["judge_calls"] == 2  # one generation-then-verdict call per candidate
    prompts = _prompts(output_dir)
    assert all("recompute every calculation" in prompt["prompt"] for prompt in prompts)
    assert all(prompt["output"].strip() for prompt in prompts)  # the generated recomputation is kept


def test_solve_first_solves_each_problem_once_and_shows_that_solution_with_every_candidate(runs: dict[str, tuple[Path, str]]) -> None:
    output_dir, _ = runs["solve_first"]
    summary = json.loads((output_dir / "summary.json").read_text())
    assert summary["judge_calls"] == 3  # one solution for the problem, then one verdict per candidate
    prompts = _prompts(output_dir)
    own = [re.search(r"Your own solution:\n<<<YOURS\n(.*)\nYOURS>>>", prompt["prompt"], re.S) for prompt in prompts]
    assert all(own) and len({match.group(1) for match in own if match}) == 1
    assert own[0] is not None and own[0].group(1).strip()
    # the candidate shown is each one's own text, after the judge's solution
    assert len({prompt["candidate_id"] for prompt in prompts}) == 2
    # each protocol stamps its verdicts with its own template's hash
    assert len({prompt["template_hash"] for directory, _ in runs.values() for prompt in _prompts(directory)}) == 2
