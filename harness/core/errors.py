"""The one user-facing error type.

Anything a user can fix (a bad override, a malformed pool line, a missing model file) raises
`HarnessError` with a message that says what to fix; the entry points print it as one line and
exit non-zero. Programming errors stay ordinary exceptions so they keep their tracebacks.
"""

from __future__ import annotations


class HarnessError(Exception):
    """A problem with the user's input or environment, reported as one line without a traceback."""

    exit_code: int = 2

    def __init__(self, message: str, *, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
