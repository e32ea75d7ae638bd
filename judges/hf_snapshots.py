"""Hugging Face model directories for the vLLM backend: staged hub snapshots and local directories.

Weights are never downloaded at run time. `python -m harness.prefetch` stages a hub model (pinned by
revision) into the Hugging Face cache beforehand, typically on a login node with network access;
a run then resolves it from the cache only (`local_files_only`), and a miss is one error line that
names the prefetch command to run. A model's identity for caches and MLflow is the snapshot's
commit (`hf:<repo>@<commit>`), or for a local directory a hash of its small files and of the names
and sizes of its weight files (hashing gigabytes of weights on every run would cost minutes).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from harness.core import HarnessError

# What a vLLM judge needs from a hub repository: configs, tokenizer, safetensors weights (no .bin/.pt twins).
ALLOW_PATTERNS = ["*.json", "*.safetensors", "tokenizer*", "*.model", "*.txt", "*.jinja"]
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_SMALL_FILES = ("*.json", "tokenizer*", "*.model", "*.jinja", "*.txt")


def is_hub_id(model: str) -> bool:
    """Whether `model` names a hub repository (`org/name`) rather than a local directory or a GGUF file."""
    return bool(_HUB_ID.match(model)) and not Path(model).expanduser().exists()


def prefetch_command(repo_id: str, revision: str | None, cache_dir: str | None) -> str:
    command = f"python -m harness.prefetch --model {repo_id}"
    if revision:
        command += f" --revision {revision}"
    if cache_dir:
        command += f" --cache-dir {cache_dir}"
    return command


def missing_files(model_dir: Path) -> list[str]:
    """What a model directory lacks for vLLM: config.json, a tokenizer, and every weight shard."""
    missing = [] if (model_dir / "config.json").is_file() else ["config.json"]
    if not any((model_dir / name).is_file() for name in ("tokenizer.json", "tokenizer.model", "tokenizer_config.json")):
        missing.append("tokenizer files")
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        try:
            shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
        except (OSError, ValueError, KeyError) as error:
            return missing + [f"a readable {index.name} ({error})"]
        missing += [shard for shard in shards if not (model_dir / shard).is_file()]
    elif not any(model_dir.glob("*.safetensors")):
        missing.append("*.safetensors weights")
    return missing


def staged_snapshot(repo_id: str, revision: str | None, cache_dir: str | None) -> Path:
    """The complete local snapshot of `repo_id` at `revision`, from the cache only, or a HarnessError."""
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    where = cache_dir or "the Hugging Face cache"
    hint = f"run: {prefetch_command(repo_id, revision, cache_dir)}"
    try:
        path = Path(
            huggingface_hub.snapshot_download(
                repo_id, revision=revision, cache_dir=cache_dir, allow_patterns=ALLOW_PATTERNS, local_files_only=True
            )
        )
    except (LocalEntryNotFoundError, FileNotFoundError) as error:
        raise HarnessError(f"model {repo_id}@{revision or 'main'} is not staged in {where}; {hint}") from error
    missing = missing_files(path)
    if missing:
        raise HarnessError(f"model {repo_id}@{revision or 'main'} is staged incompletely in {path} (missing {', '.join(missing)}); {hint}")
    return path


def directory_digest(model_dir: Path) -> str:
    """SHA-256 over a model directory's small files (contents) and its weight files (names and sizes)."""
    digest = hashlib.sha256()
    small = sorted({path for pattern in _SMALL_FILES for path in model_dir.glob(pattern) if path.is_file()})
    for path in small:
        digest.update(f"{path.name}\0".encode())
        digest.update(path.read_bytes())
    for path in sorted(model_dir.glob("*.safetensors")):
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
    return digest.hexdigest()
