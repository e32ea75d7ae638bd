"""The reproducibility manifest: what a run was, so it can be traced and replayed.

Every run writes `manifest.json` and logs the same facts as MLflow tags (flattened, `code.git_commit`,
`packages.torch`, `model.<member>.sha256`, ...). Four parts identify what determines the numbers and
are what `python -m harness.replay` checks before re-running: `code` (a hash of the harness's source),
`data` (the task's data hash, the pool file's), `model` (each judge's identity, the key of the call
cache) and `templates`. The rest (package versions, hardware, Slurm job, command line, seeds) says
where and how the run happened.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from harness import provenance
from harness.config import GENERATOR, RunConfig
from harness.core import HarnessError, file_sha256

FILENAME = "manifest.json"
FORMAT = 1
# What replay compares, in the order it reports differences.
IDENTITY_PARTS = ("code", "data", "model", "templates")
_TAG_LIMIT = 5000  # MLflow's tag values are bounded; a longer value is cut, the file keeps it whole


class Manifest(BaseModel):
    """The manifest as written and read back; unknown keys are refused so a typo cannot pass."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int
    run_uid: str
    created: str
    command: dict[str, Any]
    code: dict[str, Any]
    data: dict[str, Any]
    model: dict[str, dict[str, str]]
    templates: dict[str, str]
    seeds: dict[str, Any]
    packages: dict[str, str]
    hardware: dict[str, Any]
    slurm: dict[str, Any]
    config: dict[str, Any]


def _command() -> dict[str, Any]:
    """The exact command line, and the Hydra overrides of this job (one point of a sweep)."""
    argv = list(getattr(sys, "orig_argv", sys.argv))
    overrides = None
    try:
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized():
            overrides = [str(item) for item in HydraConfig.get().overrides.task]
    except ImportError:
        overrides = None
    return {"argv": argv, "line": shlex.join(argv), "overrides": overrides, "cwd": os.getcwd()}


def model_identities(config: RunConfig) -> dict[str, dict[str, str]]:
    """Each judge member's identity (the call cache's model key) and provenance; the generator's too."""
    from judges import engine_spec

    members = dict(config.judge.member_configs())
    if config.pool.kind == "generate" and config.pool.generator is not None:
        members[GENERATOR] = config.pool.generator
    found = {}
    for key, member in members.items():
        spec = engine_spec(member)
        found[key] = {"identity": spec.identity, **{name: str(value) for name, value in spec.provenance.items()}}
    return found


def data_identity(config: RunConfig, task_data_hash: str) -> dict[str, Any]:
    """The task's data hash, and the pool file's when candidates are read from one."""
    reads_file = config.pool.kind == "file" or (config.pool.kind == "adversarial" and config.pool.base == "file")
    pool_path = Path(config.pool.path) if reads_file and config.pool.path else None
    return {
        "task": config.task.name,
        "source": config.task.source,
        "sha256": task_data_hash,
        "pool_file": str(pool_path.resolve()) if pool_path else None,
        "pool_sha256": file_sha256(pool_path) if pool_path and pool_path.is_file() else None,
    }


def identity(config: RunConfig, task_data_hash: str, template_hash: str) -> dict[str, Any]:
    """The parts of a manifest that determine a run's numbers (see `IDENTITY_PARTS`)."""
    return {
        "code": {
            "source_sha256": provenance.source_sha256(),
            "git_commit": provenance.git_commit(),
            "git_dirty": provenance.git_dirty(),
        },
        "data": data_identity(config, task_data_hash),
        "model": model_identities(config),
        "templates": {"protocol": template_hash},
    }


def build(config: RunConfig, run_uid: str, task_data_hash: str, template_hash: str) -> Manifest:
    return Manifest(
        format=FORMAT,
        run_uid=run_uid,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        command=_command(),
        **identity(config, task_data_hash, template_hash),
        seeds={"seed": config.seed, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED")},
        packages=provenance.package_versions(),
        hardware=provenance.hardware(),
        slurm=provenance.slurm(),
        config=dataclasses.asdict(config),
    )


def write(manifest: Manifest, output_dir: Path) -> Path:
    path = output_dir / FILENAME
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    partial.replace(path)
    return path


def read(run_dir: Path) -> Manifest:
    path = run_dir / FILENAME
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise HarnessError(f"{path}: no manifest (is {run_dir} a run directory?)") from error
    except (OSError, json.JSONDecodeError) as error:
        raise HarnessError(f"{path}: not a readable manifest: {error}") from error
    try:
        return Manifest.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise HarnessError(f"{path}: field {field}: {first['msg']}") from error


def unfinished_uid(output_dir: Path, config: RunConfig) -> str | None:
    """The `run_uid` of an earlier attempt of this same run in `output_dir` that never wrote its
    summary (a preempted job requeued into its directory, a crash rerun), so the new attempt carries
    on in the same MLflow run. A different config, or a finished run, starts a new one."""
    if (output_dir / "summary.json").exists() or not (output_dir / FILENAME).exists():
        return None
    try:
        earlier = read(output_dir)
    except HarnessError:
        return None
    same = json.loads(json.dumps(dataclasses.asdict(config))) == earlier.config
    return earlier.run_uid if same else None


def tags(manifest: Manifest) -> dict[str, str]:
    """The manifest as MLflow tags: flattened keys, JSON for lists, everything but the config
    (which is the run's params already)."""
    flat: dict[str, str] = {}

    def walk(value: Any, name: str) -> None:
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                walk(inner, f"{name}.{key}" if name else str(key))
            return
        if value is None:
            flat[name] = provenance.ABSENT
            return
        text = json.dumps(value) if isinstance(value, (list, dict)) else str(value)
        flat[name] = text if len(text) <= _TAG_LIMIT else text[: _TAG_LIMIT - 3] + "..."

    walk(manifest.model_dump(mode="json", exclude={"config"}), "")
    return flat


def differences(recorded: Manifest, current: dict[str, Any]) -> list[str]:
    """What differs between a manifest's identity and the current one, as `part.key (was -> now)`.

    The code is compared by its source hash only: a commit with the same source is the same code.
    """
    found = []
    for part in IDENTITY_PARTS:
        before, now = getattr(recorded, part), current[part]
        keys = ["source_sha256"] if part == "code" else sorted(set(before) | set(now))
        for key in keys:
            if before.get(key) != now.get(key):
                found.append(f"{part}.{key} ({_short(before.get(key))} -> {_short(now.get(key))})")
    return found


def _short(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("identity", json.dumps(value, sort_keys=True))
    text = "absent" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."
