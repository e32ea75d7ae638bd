"""`python -m harness cluster=local judge=ensemble_min_tiny`: on a local Ray cluster each ensemble
member is its own replica pool, and the members are judged at the same time.

What shows it, read from the run from outside: `replicas.jsonl` names one replica per member, each
its own process; and the run's progress output (stderr and stdout in one unbuffered stream, so in
the order things happened) shows each member's progress bar open while the other's is still
counting. Judged one after another, as `cluster=inline` does, the second member's bar would open
only once the first member's bar had closed. No clock is read: only the order of events.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.runs import harness_cli, rows

MEMBERS = ("llama_tiny", "gemma_tiny")
RUN = ("judge=ensemble_min_tiny", "limit=1", "n=2", "tracking.enabled=false", *(f"judge.members.{m}.batch_size=1" for m in MEMBERS))


def _bar_span(output: str, member: str) -> tuple[int, int]:
    """Where in the output `member`'s progress bar is first and last drawn."""
    positions = [match.start() for match in re.finditer(re.escape(f"judging [{member}]"), output)]
    assert positions, f"no progress bar for {member} in the run's output"
    return positions[0], positions[-1]


def _judge(root: Path, cluster: str, cache: Path) -> tuple[str, Path]:
    out = root / cluster
    completed = harness_cli(root, *RUN, f"cluster={cluster}", f"output_dir={out}", cache=cache, merged=True)
    assert completed.returncode == 0, completed.stdout[-3000:]
    return completed.stdout, out


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The Ray run's output and output directory; its call cache is `calls.sqlite` beside them."""
    root = tmp_path_factory.mktemp("local-ensemble")
    return _judge(root, "local", root / "calls.sqlite")


def test_members_are_judged_at_the_same_time_each_on_its_own_replica(local: tuple[str, Path]) -> None:
    output, out = local
    (llama_first, llama_last), (gemma_first, gemma_last) = (_bar_span(output, member) for member in MEMBERS)
    assert gemma_first < llama_last and llama_first < gemma_last, "one member's judging ended before the other's began"

    started = [event for event in map(json.loads, (out / "replicas.jsonl").read_text().splitlines()) if event["event"] == "started"]
    assert sorted(event["judge"] for event in started) == sorted(MEMBERS)
    assert len({event["pid"] for event in started}) == 2  # two replica processes, one per member
    summary = json.loads((out / "summary.json").read_text())
    assert summary["judge_calls"] == 4 and summary["cache_hits"] == 0  # 2 candidates x 2 members, each judged for real
    for row in rows(out):
        assert set(row["scores"]) == set(MEMBERS) and row["ensemble_score"] == min(row["scores"].values())


def test_inline_the_same_observation_shows_the_members_taking_turns(local: tuple[str, Path]) -> None:
    """The control: the observation above can fail, and does when members take turns (here from the
    cache the Ray run filled, so it loads no model)."""
    root = local[1].parent
    output, out = _judge(root, "inline", root / "calls.sqlite")
    (llama_first, llama_last), (gemma_first, gemma_last) = (_bar_span(output, member) for member in MEMBERS)
    assert llama_last < gemma_first or gemma_last < llama_first
    assert json.loads((out / "summary.json").read_text())["cache_hits"] == 4
    assert not (out / "replicas.jsonl").exists()
