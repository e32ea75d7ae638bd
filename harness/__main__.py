"""`python -m harness ...`: the Hydra entry point.

Hydra composes the config (and handles --help, --cfg, -m); this module converts it into typed
objects once and calls the plain `run`. User-fixable problems print one line and exit non-zero.
"""

from __future__ import annotations

import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from harness.config import RunConfig, register_configs
from harness.errors import HarnessError

register_configs()


@hydra.main(version_base=None, config_path="pkg://harness.conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from harness.pipeline import run

    try:
        config = OmegaConf.to_object(cfg)
        assert isinstance(config, RunConfig)
        hydra_config = HydraConfig.get()
        if hydra_config.mode == RunMode.MULTIRUN and config.tracking.sweep is None:
            config.tracking.sweep = hydra_config.sweep.dir
        run(config)
    except OmegaConfBaseException as error:
        print(f"error: config: {str(error).splitlines()[0]}", file=sys.stderr)
        sys.exit(2)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)


if __name__ == "__main__":
    main()
