"""A Hugging Face cache entry laid out on disk as `snapshot_download` leaves it, for tests that resolve
pinned models without a hub."""

from __future__ import annotations

from pathlib import Path

# The Qwen judge's pinned revision, as conf/judge_model/qwen.yaml names it.
QWEN = "Qwen/Qwen2.5-7B-Instruct"
QWEN_COMMIT = "a09a35458c702b33eeacc393d103063234e8bc28"

STAGED = ("config.json", "tokenizer.json", "model.safetensors")


def stage_fake_snapshot(cache: Path, repo: str, commit: str, files: tuple[str, ...] = STAGED) -> Path:
    """A cache entry for `repo` at `commit` (refs/main -> commit) holding `files` as empty JSON."""
    root = cache / f"models--{repo.replace('/', '--')}"
    snapshot = root / "snapshots" / commit
    snapshot.mkdir(parents=True)
    for name in files:
        (snapshot / name).write_text("{}")
    (root / "refs").mkdir()
    (root / "refs" / "main").write_text(commit)
    return snapshot
