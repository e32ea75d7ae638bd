"""How many GPUs this machine can give a run, and whether a judge needs one.

Counted from `nvidia-smi -L` (no CUDA import, so asking costs nothing on a laptop), narrowed by
`CUDA_VISIBLE_DEVICES` the way CUDA narrows it. A Ray cluster reports its own GPUs instead; this is
only for runs on this machine (`cluster=inline|local`).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from judges import JudgeConfig


def visible_gpus() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip() in ("", "-1"):
        return 0
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 0
    try:
        listing = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    count = sum(line.startswith("GPU ") for line in listing.stdout.splitlines()) if listing.returncode == 0 else 0
    if visible is not None:
        count = min(count, len([device for device in visible.split(",") if device.strip()]))
    return count


def needs_gpu(judge: JudgeConfig) -> bool:
    return any(member.resources.num_gpus > 0 or member.vllm.tensor_parallel_size > 1 for member in judge.member_configs().values())
