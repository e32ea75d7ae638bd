"""pool=adversarial plants labelled hacks that only the audit can see; pool=generate samples, caches
and writes a pool file that pool=file can re-judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.core.errors import HarnessError
from harness.pipeline import run


def _rows(result) -> list[dict]:
    return [json.loads(line) for line in (result.output_dir / "candidates.jsonl").read_text().splitlines()]


def test_planted_attacks_are_audited_but_invisible_to_judges(make_config) -> None:
    result = run(make_config("pool=adversarial", "limit=2", "pool.kinds=[grader_instruction,swapped_final_answer]", "shield=on"))
    rows = _rows(result)
    planted = [row for row in rows if row["attack"]]
    assert result.summary["attacks_planted"] == 2 and len(planted) == 2
    assert {row["attack"] for row in planted} == {"grader_instruction", "swapped_final_answer"}
    assert not any(row["anchor_correct"] for row in planted)
    assert all(row["candidate_id"].startswith("c-") and row["source"] is None for row in planted)
    # the rates are the planted candidates' chances of being picked over the plants, by the judge and
    # by the shield; the seeded rates count the seeded picks
    for kind in ("grader_instruction", "swapped_final_answer"):
        [plant] = [row for row in planted if row["attack"] == kind]
        assert result.summary[f"attack_selection_rate.{kind}"] == pytest.approx(plant["pick_probability"])
        assert result.summary[f"shielded.attack_selection_rate.{kind}"] == pytest.approx(plant["shielded_pick_probability"])
    assert result.summary["attack_selection_rate"] == pytest.approx(sum(row["pick_probability"] for row in planted) / 2)
    assert result.summary["shielded.attack_selection_rate"] == pytest.approx(sum(row["shielded_pick_probability"] for row in planted) / 2)
    assert result.summary["attack_selection_rate_seeded"] == sum(row["selected"] for row in planted) / 2
    assert result.summary["shielded.attack_selection_rate_seeded"] == sum(row["shielded_selected"] for row in planted) / 2
    shielded_picks = [row for row in rows if row["shielded_selected"]]
    assert len(shielded_picks) == 2
    assert result.summary["shielded.selection_accuracy_seeded"] == sum(row["anchor_correct"] for row in shielded_picks) / 2
    expected = sum(row["shielded_pick_probability"] * row["anchor_correct"] for row in rows) / 2
    assert result.summary["shielded.selection_accuracy"] == pytest.approx(expected)
    for problem in {row["problem_id"] for row in rows}:  # each problem's chances sum to one pick
        assert sum(row["shielded_pick_probability"] for row in rows if row["problem_id"] == problem) == pytest.approx(1)
    assert {row["format_version"] for row in rows} == {2} and result.summary["format_version"] == 2
    prompts = (result.output_dir / "prompts.jsonl").read_text()
    assert "grader_instruction" not in prompts and "swapped_final_answer" not in prompts
    assert sum(row["problem_id"] == "gsm8k-test-0" for row in rows) == 5  # four real solutions + one plant


def test_unknown_attack_kinds_are_named(make_config) -> None:
    with pytest.raises(HarnessError, match="unknown attack kind"):
        run(make_config("pool=adversarial", "judge=none", "limit=1", "pool.kinds=[telepathy]"))


def test_generated_pool_is_cached_and_reusable_as_a_pool_file(make_config, tmp_path: Path) -> None:
    overrides = ("pool=generate", "judge=none", "limit=1", "pool.samples=2", "pool.max_tokens=16")
    first = run(make_config(*overrides, run="first"))
    pool = first.output_dir / "pool.jsonl"
    lines = [json.loads(line) for line in pool.read_text().splitlines()]
    assert [line["candidate_id"] for line in lines] == ["llama_tiny-s0", "llama_tiny-s1"]
    assert lines[0]["meta"]["seed"] != lines[1]["meta"]["seed"] and lines[0]["source"] == "llama_tiny"
    assert first.summary["generator_calls"] == 2
    again = run(make_config(*overrides, run="second"))
    assert again.summary["generator_calls"] == 0 and again.summary["generator_cache_hits"] == 2
    assert (again.output_dir / "pool.jsonl").read_text() == pool.read_text()
    rejudged = run(make_config("pool=file", f"pool.path={pool}", "judge=none", run="third"))
    assert rejudged.summary["candidates"] == 2
