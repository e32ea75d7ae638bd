"""`python -m harness ...`: the Hydra entry point.

Hydra composes the config (and handles --help, --cfg, -m); this module converts it into typed
objects once and calls the plain `run`. User-fixable problems print one line and exit non-zero: 2 for a bad value, Hydra's refusals included;
a refused run leaves no run directory behind (`harness.hydra_callbacks.discard_run_dir`).
SIGUSR1, SIGUSR2 or SIGTERM during judging stops the run cleanly with exit status 75 (`harness.preemption`).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import hydra
from hydra import compose
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException, MissingConfigException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from harness.cluster.gpus import needs_gpu, visible_gpus
from harness.config import RunConfig, register_configs
from harness.core import HarnessError, Stopped
from harness.hydra_callbacks import discard_run_dir
from harness.preemption import stop_on_signals
from judges import JudgeConfig

register_configs()
log = logging.getLogger("harness")


@hydra.main(version_base=None, config_path="pkg://harness.conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from harness.pipeline import run

    stop = None
    try:
        hydra_config = HydraConfig.get()
        config = _typed(cfg)
        if config.cluster.kind != "ray" and needs_gpu(config.judge) and not visible_gpus():
            config = _typed(_cpu_fallback(config.judge, list(hydra_config.overrides.task)))
        if hydra_config.mode == RunMode.MULTIRUN and config.tracking.sweep is None:
            config.tracking.sweep = hydra_config.sweep.dir
        with stop_on_signals() as stop:
            run(config, stop)
    except OmegaConfBaseException as error:
        print(f"error: config: {one_line(error)}", file=sys.stderr)
        _leave_nothing_behind()
        sys.exit(2)
    except Stopped as stopped:  # a scheduler's warning or preemption: exit 75 so the job is requeued
        print(f"stopped: {stopped}", file=sys.stderr)
        if stop is not None:
            stop.forward()  # e.g. submitit's requeue, which exits itself
        sys.exit(stopped.exit_code)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        _leave_nothing_behind()
        sys.exit(error.exit_code)


def _leave_nothing_behind() -> None:
    """A refused run leaves no directory that looks like a run: Hydra's, made before the run
    started, goes if it holds only Hydra's record and the log (`discard_run_dir`)."""
    discard_run_dir(Path(HydraConfig.get().runtime.output_dir), Path.cwd())


def _typed(cfg: DictConfig) -> RunConfig:
    config = OmegaConf.to_object(cfg)
    assert isinstance(config, RunConfig)
    return config


def _cpu_fallback(judge: JudgeConfig, overrides: list[str]) -> DictConfig:
    """The config recomposed with the judge's CPU fallback, for machines without a GPU.

    Overrides aimed at the GPU judge's members do not apply to the fallback's and are dropped (logged).
    """
    if not judge.cpu_fallback:
        raise HarnessError(f"judge={judge.name} needs a GPU and this machine has none (no CPU fallback for it; try judge=llama_tiny)")
    kept = [o for o in overrides if not o.lstrip("+~").startswith(("judge=", "judge.members."))]
    dropped = [o for o in overrides if o not in kept and not o.startswith("judge=")]
    log.warning(
        "no GPU visible: judge=%s falls back to judge=%s (CPU judges)%s; choose judge=%s explicitly to silence this",
        judge.name,
        judge.cpu_fallback,
        f", ignoring {' '.join(dropped)}" if dropped else "",
        judge.cpu_fallback,
    )
    return compose(config_name="config", overrides=[*kept, f"judge={judge.cpu_fallback}"])


def cli() -> None:
    """`main`, with Hydra's own refusals (an unknown option, a key that does not exist, a wrong type,
    a malformed override) said in one line with exit 2, like every other bad value.

    Hydra prints those over many lines (the available options, a hint, its config search path) and
    exits 1. With HYDRA_FULL_ERROR=1 it raises them instead, so it is set while `main` runs; whoever
    set HYDRA_FULL_ERROR=1 themselves still gets Hydra's full traceback.
    """
    if os.environ.get("HYDRA_FULL_ERROR") == "1":
        main()
        return
    before = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        main()
    except (HydraException, OmegaConfBaseException) as error:
        print(f"error: config: {one_line(error)}", file=sys.stderr)
        sys.exit(2)
    finally:
        if before is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = before


def one_line(error: Exception) -> str:
    """Hydra's or OmegaConf's message in one line: its first line with the OmegaConf error under it,
    then Hydra's hints (`+key=value`); an unknown option lists the group's options."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    head = lines[0].rstrip(".") if lines else type(error).__name__
    if isinstance(error, OmegaConfBaseException):
        return head  # the lines under it are full_key and object_type: the key is in the first
    if isinstance(error.__cause__, OmegaConfBaseException):
        head += f": {one_line(error.__cause__)}"
    if isinstance(error, MissingConfigException) and error.options:
        return f"{head}; available: {', '.join(error.options)}"
    return "; ".join([head, *(line for line in lines[1:] if not line.startswith("See https://"))])


if __name__ == "__main__":
    cli()
