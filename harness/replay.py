"""`python -m harness.replay <run_dir>`: re-run a finished run from its manifest and check its summary.

The run's `manifest.json` holds its full resolved config; the replay runs that config again (in the
directory the run was started from, so relative cache and pool paths mean what they meant), with
the same call cache, into `<run_dir>-replay` (`--output`), and compares the new `summary.json` with
the recorded one value by value. The counters of work done (`judge_calls`, `cache_hits`, the
generator's, and the MLflow traces logged with the seconds spent on them) are reported, not
compared: a replay served from the cache makes no model calls by design, logs no traces, and no two
runs take the same time.

Before running, the code, data, models and templates are compared with the manifest; when any
differs the replay is refused with one line naming what differs (exit 2), because the same numbers
would prove nothing and different ones would be expected. `--force` replays anyway.
Exit status: 0 reproduced exactly, 1 the summary differs, 2 refused or bad input.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from harness import manifest
from harness.config import RunConfig
from harness.core import HarnessError
from harness.metrics import format_version

COUNTERS = ("judge_calls", "cache_hits", "generator_calls", "generator_cache_hits", "traces.logged", "traces.not_logged", "traces.seconds")
log = logging.getLogger(__name__)


def recorded_config(recorded: manifest.Manifest, run_dir: Path) -> RunConfig:
    try:
        merged = OmegaConf.merge(OmegaConf.structured(RunConfig), recorded.config)
        config = OmegaConf.to_object(merged)
    except OmegaConfBaseException as error:
        raise HarnessError(f"{run_dir / manifest.FILENAME}: field config: {str(error).splitlines()[0]}") from error
    assert isinstance(config, RunConfig)
    return config


def current_identity(config: RunConfig) -> dict[str, Any]:
    """The code, data, model and template identity the config has on this machine now."""
    from judges import load_protocol
    from tasks import load_task

    return manifest.identity(config, load_task(config.task).data_hash, load_protocol(config.protocol).template_hash)


def _summary(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise HarnessError(f"{path}: missing (the run did not finish; nothing to reproduce)") from error
    except (OSError, json.JSONDecodeError) as error:
        raise HarnessError(f"{path}: not readable: {error}") from error


def summary_differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """Every value that differs, compared as canonical JSON (so NaN equals NaN and 1 differs from 1.0)."""
    keys = sorted((set(recorded) | set(replayed)) - set(COUNTERS))
    found = []
    for key in keys:
        before, after = json.dumps(recorded.get(key), sort_keys=True), json.dumps(replayed.get(key), sort_keys=True)
        if key not in recorded or key not in replayed or before != after:
            found.append(f"{key} ({before[:40]} -> {after[:40]})")
    return found


def replay(run_dir: Path, output: Path | None, force: bool, track: bool) -> int:
    from harness.pipeline import run

    run_dir = run_dir.resolve()
    recorded = manifest.read(run_dir)
    original = _summary(run_dir / "summary.json")
    output = (output or run_dir.with_name(run_dir.name + "-replay")).resolve()
    config = recorded_config(recorded, run_dir)
    cwd = Path(recorded.command.get("cwd") or ".")
    if cwd.is_dir():
        os.chdir(cwd)
    else:
        log.warning("the run's working directory %s is gone; relative paths resolve against %s", cwd, Path.cwd())
    differs = manifest.differences(recorded, current_identity(config))
    if differs and not force:
        raise HarnessError(f"replay refused: {run_dir} was run with different {'; '.join(differs)} (--force replays anyway)")
    if differs:
        log.warning("replaying despite differences from the manifest: %s", "; ".join(differs))
    config.output_dir = str(output)
    config.tracking.enabled = track
    config.tracking.sweep = None
    result = run(config)
    replayed = _summary(output / "summary.json")
    changed = summary_differences(original, replayed)
    if format_version(original) != format_version(replayed):
        log.warning(
            "%s was written in format_version %d and the replay in %d: selection metrics that depend on the tie-break "
            "changed meaning (docs/outputs-and-metrics.md, Format versions), so they may differ",
            run_dir, format_version(original), format_version(replayed),
        )  # fmt: skip
    counters = ", ".join(f"{key} {result.summary[key]}" for key in COUNTERS if key in result.summary)
    if changed:
        print(f"replay: summary.json differs in {len(changed)} values: {'; '.join(changed)} ({output})")
        return 1
    print(f"replay: summary.json reproduced exactly ({len(original) - len(set(COUNTERS) & set(original))} values; {counters}) in {output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.replay", description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a finished run's directory (holding manifest.json and summary.json)")
    parser.add_argument("--output", type=Path, help="where the replay writes (default: <run_dir>-replay)")
    parser.add_argument("--force", action="store_true", help="replay even when code, data, a model or a template differ from the manifest")
    parser.add_argument("--track", action="store_true", help="log the replay to MLflow as the run's tracking config says (default: not logged)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return replay(args.run_dir, args.output, args.force, args.track)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code


if __name__ == "__main__":
    sys.exit(main())
