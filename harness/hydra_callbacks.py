"""The Hydra callback of `python -m harness`: the run config checked before Hydra writes anything.

Hydra creates a run's directory (`outputs/<date>/<time>/` with its `.hydra/` record and
`harness.log`) before it calls the task function, so a bad mode caught there still leaves a run
directory behind that looks like a run. `on_run_start` comes after composition and before that
directory exists: the same `check_config` the pipeline starts with runs there, and a bad value is
one line and exit 2 with nothing written. conf/config.yaml registers it under `hydra.callbacks`.

A multirun's jobs are composed one by one by the launcher, after the sweep directory exists; each
job is checked by the pipeline as it starts.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict, read_write

from harness.config import RunConfig
from harness.core import HarnessError
from harness.validation import check_config


class CheckBeforeRun(Callback):
    """Exits with the first bad field's one line (exit 2) before Hydra creates the run directory.

    It exits rather than raises because Hydra turns an exception in a callback into a warning and
    carries on."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        task = copy.deepcopy(config)
        with read_write(task), open_dict(task):
            del task["hydra"]
            if OmegaConf.is_interpolation(task, "output_dir"):
                task.output_dir = ""  # Hydra's run directory is not known yet, and no check reads it
        typed = OmegaConf.to_object(task)
        assert isinstance(typed, RunConfig)
        try:
            check_config(typed)
        except HarnessError as error:
            print(f"error: {error}", file=sys.stderr)
            sys.exit(error.exit_code)
