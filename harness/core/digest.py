"""Naming a file by its content: the identity that model files, pools and offline records share.

Judges name a model by its file's hash, the manifest names a pool by its file's hash, and the offline
tracking records are checked by theirs; one function so the three can never disagree on what "the
same file" means.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """A file's SHA-256, read now (no cache: a file edited since must show a new hash)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
