"""`python -m harness pool=generate cluster=local`: the policy model samples on a Ray replica, the
way the judges run, not in the driver.

What shows it, read from outside the run: `replicas.jsonl` records a replica of the `generator`
pool started, in a process that is not the driver's (a replica starts only when the pool is handed
batches the cache could not answer), next to the judge's own replica, and the run counts the
samples as answered by the engine, not the cache. Before the generator and the judges shared one
wiring, generation ran inline and no generator replica ever appeared.

Whether the two samples differ is the model's business (at temperature 0.7 and 16 tokens a build
with other instruction-set flags may draw the same text twice): what the harness guarantees is one
judge call per distinct candidate text, the repeats answered without one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.generation import GENERATOR
from tests.support.runs import harness_command, harness_environment

RUN = ("pool=generate", "pool.samples=2", "pool.max_tokens=16", "judge=llama_tiny", "limit=1", "tracking.enabled=false")


def test_pool_generate_samples_on_a_ray_replica_then_judges_on_another(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = harness_command([*RUN, "cluster=local", f"output_dir={out}"], tmp_path / "calls.sqlite", bootstrap_samples=0)
    driver = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=harness_environment())
    output, _ = driver.communicate(timeout=600)
    assert driver.returncode == 0, output[-3000:]

    events = [json.loads(line) for line in (out / "replicas.jsonl").read_text().splitlines()]
    started = {event["judge"]: event for event in events if event["event"] == "started"}
    assert sorted(started) == sorted([GENERATOR, "llama_tiny"])
    assert started[GENERATOR]["pid"] != driver.pid  # the samples were drawn in a replica actor
    assert started[GENERATOR]["pid"] != started["llama_tiny"]["pid"]  # released before the judge's replica started
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["generator_calls"], summary["generator_cache_hits"]) == (2, 0)
    pool = [json.loads(line) for line in (out / "pool.jsonl").read_text().splitlines()]
    assert [line["candidate_id"] for line in pool] == ["llama_tiny-s0", "llama_tiny-s1"]
    assert all(line["text"].strip() for line in pool)
    prompts = [json.loads(line)["prompt"] for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert len(prompts) == len(pool) and len(set(prompts)) == len({line["text"] for line in pool})
    distinct = len(set(prompts))
    assert (summary["judge_calls"], summary["cache_hits"]) == (distinct, len(pool) - distinct)
