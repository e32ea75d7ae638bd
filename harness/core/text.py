"""Making hostile text safe to place inside a prompt's fences.

Candidates, tool outputs and trace steps are written by the agent being judged. Every layer that puts
such text in front of a model (judge prompts, the shield's step labeller, the solve-first protocol) uses
this one function, so there is one rule for what a fence is.
"""

from __future__ import annotations

import re

_FENCE_RUN = re.compile(r"[<>]{3,}")


def neutralise(text: str, max_chars: int) -> str:
    """Cap `text` and break up fence-like runs (`<<<`, `>>>`) so it cannot escape its fence.

    GSM8K's own `<<48/2=24>>` calculator annotations use two brackets and pass through unchanged.
    """
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[... truncated {len(text) - max_chars} characters]"
    return _FENCE_RUN.sub(lambda match: " ".join(match.group(0)), text)
