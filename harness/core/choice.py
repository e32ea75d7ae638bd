"""A closed set of config values (a mode) that stays its plain string everywhere it is written.

OmegaConf's structured configs check `Enum` fields at composition (it cannot check `Literal`s), so a
mode typed as a `Choice` fails on a typo before any work starts, naming the allowed values. A member
is a `str`: it compares equal to its value, hashes like it, and `str()`, f-strings and `json.dumps`
give the value, so run params, summaries and cache keys read the same as with bare strings.
Members are named as their values (OmegaConf parses a YAML or command-line value by member name).
"""

from __future__ import annotations

from enum import Enum


class Choice(str, Enum):
    """Base of every mode enum: `class Backend(Choice): cpu = "cpu"`."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        """The allowed values, in declaration order (for messages)."""
        return tuple(member.value for member in cls)
