"""The Hydra callback of `python -m harness`: the run config checked before Hydra writes anything,
and the run directory Hydra makes being the run's `output_dir`.

Hydra creates a run's directory (`outputs/<date>/<time>/` with its `.hydra/` record and
`harness.log`) before it calls the task function, so a bad mode caught there still leaves a run
directory behind that looks like a run. `on_run_start` comes after composition and before that
directory exists: the same `check_config` the pipeline starts with runs there, and a bad value is
one line and exit 2 with nothing written. conf/config.yaml registers it under `hydra.callbacks`.

With `output_dir=` given, the run's outputs go there, so Hydra's run directory (and with it
`harness.log` and `.hydra/`) is set to the same directory here, after it is checked writable.

Bad input found later, once the directory exists (a bad pool file, an unknown problem id), is
refused by `__main__`, which then calls `discard_run_dir`: a directory holding nothing but Hydra's
record and the log goes, with the empty folders above it up to the working directory.

A multirun's jobs are composed one by one by the launcher, after the sweep directory exists; each
job is checked by the pipeline as it starts.
"""

from __future__ import annotations

import copy
import logging
import shutil
import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from harness.config import RunConfig
from harness.core import HarnessError
from harness.validation import check_config

HYDRA_RECORD = ".hydra"
HYDRA_FILES = frozenset({"config.yaml", "hydra.yaml", "overrides.yaml"})
LOG_FILE = "harness.log"


class CheckBeforeRun(Callback):
    """Exits with the first bad field's one line (exit 2) before Hydra creates the run directory.

    It exits rather than raises because Hydra turns an exception in a callback into a warning and
    carries on."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        task = copy.deepcopy(config)
        given = not OmegaConf.is_interpolation(config, "output_dir")
        with read_write(task), open_dict(task):
            del task["hydra"]
            if not given:
                task.output_dir = ""  # Hydra's run directory is not known yet, and no check reads it
        typed = OmegaConf.to_object(task)
        assert isinstance(typed, RunConfig)
        try:
            check_config(typed)
            if given:
                from harness.pipeline import prepare_output_dir  # the run imports it next anyway

                prepare_output_dir(Path(typed.output_dir))
        except HarnessError as error:
            print(f"error: {error}", file=sys.stderr)
            sys.exit(error.exit_code)
        if given:
            with read_write(config):
                config.hydra.run.dir = typed.output_dir


def discard_run_dir(run_dir: Path, root: Path) -> bool:
    """Remove `run_dir` when it holds nothing but Hydra's record (`.hydra/`) and `harness.log`, then
    the folders above it that are left empty, up to (not including) `root`. Returns whether it went.

    For a run refused for bad input after Hydra made its directory: what is left is no result, and
    anything else in the directory (a previous run's files) keeps it."""
    run_dir, root = run_dir.resolve(), root.resolve()
    if not run_dir.is_dir() or run_dir == root:
        return False
    entries = {entry.name: entry for entry in run_dir.iterdir()}
    if not set(entries) <= {HYDRA_RECORD, LOG_FILE}:
        return False
    record = entries.get(HYDRA_RECORD)
    if record is not None and not (record.is_dir() and {entry.name for entry in record.iterdir()} <= HYDRA_FILES):
        return False
    _close_log_handlers(run_dir)
    shutil.rmtree(run_dir)
    for parent in run_dir.parents:
        if parent == root or root not in parent.parents or any(parent.iterdir()):
            break
        parent.rmdir()
    return True


def _close_log_handlers(run_dir: Path) -> None:
    """Close the root logger's file handlers writing into `run_dir` (Hydra's, to harness.log)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, logging.FileHandler) and Path(handler.baseFilename).resolve().is_relative_to(run_dir):
            root.removeHandler(handler)
            handler.close()
