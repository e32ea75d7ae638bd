"""The trusted parent's end of the channel to a jail: two pipes, bounded reading, a deadline.

The parent writes requests on one pipe and reads replies from the other; the jail holds the
opposite ends only, as its stdin and stdout. The reply pipe thus also carries whatever the
candidate prints, so records are framed (`_jail.py`): each starts with RS (0x1e), which no
record holds inside, and ends with "\n"; of each line only what follows its last RS is a record,
and the rest of the bytes are the program's output, counted and dropped (never parsed, never
kept: a line without RS costs one scan of its bytes). Records are parsed by `_wire.loads` one by
one, under caps that no candidate can lift: `MAX_LINE` bytes per record (`MAX_EVENT` per event
record, checked on the bytes with the record's kind before parsing), `stdout_cap` bytes of
output per run (the run's file-size limit), `MAX_OUTPUT` bytes in all, and the run's wall-clock
deadline for every wait. Every step is linear in the bytes read. A malformed record, a record or
run over its cap, output over its cap ("output"), the jail's end closing (it exited or was
killed) or the deadline passing each raise `JailStopped` with the cause, and nothing the jail
sends can raise anything else here. Both descriptors are
non-blocking and every wait is a `poll`, so a jail that neither reads nor writes cannot stall
the parent, and one that floods the pipe cannot starve it.

Event records are kept as plain dicts (`{"kind", "detail", "test_index"}`, text made safe): the
first `MAX_KEPT_EVENTS`, and past that the first of each kind, so a flood of one kind can never
hide another; `event_counts` counts them all. Kinds past the first `MAX_KINDS` count as
`too_many_kinds`, so made-up kinds cannot grow the result without bound. A run may send at most
`MAX_RECORDS` records (an honest one sends one per call and an event per recorded operation: a
HumanEval test makes at most a few thousand calls); past that it stops ("protocol"), so parsing
forged records costs the parent at most about half a second of CPU per run (2.7 million of the
smallest events fit in `MAX_OUTPUT` and took 10 s).
"""

from __future__ import annotations

import errno
import os
import select
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal

from tasks.code.sandbox._wire import MAX_LINE, WireError, dumps, loads, safe_text

MAX_OUTPUT = 64 * 1024 * 1024
MAX_KEPT_EVENTS = 200
MAX_KINDS = 64
MAX_RECORDS = 100_000
TOO_MANY_KINDS = "too_many_kinds"
_CHUNK = 1 << 16
# The hook writes RS + `["event",kind,detail[:300],call]` in one write: at most ~3.7 KB even with
# every character a 12-byte escaped surrogate pair, under PIPE_BUF (atomic). A longer line that
# starts like an event is the candidate's, refused before parsing.
MAX_EVENT = 4096
_EVENT = b'["event",'
RS = 0x1E  # starts every record the jail writes (`_jail.py`)
_TAGS = (_EVENT, b'["isolation",', b'["ready"]', b'["abort",', b'["return",', b'["raised",')

StopKind = Literal["timeout", "exited", "protocol", "output"]
DEFAULT_STDOUT_CAP = 16 * 1024 * 1024


class JailStopped(Exception):
    """The jail can answer no more: `kind` says why ("timeout", "exited", "protocol", "output")."""

    def __init__(self, kind: StopKind, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class Channel:
    """Send requests and receive replies, with every wait bounded by `deadline` (monotonic s)."""

    def __init__(
        self,
        request_fd: int,
        reply_fd: int,
        deadline: float,
        case_of_call: Callable[[int], int | None],
        stdout_cap: int = DEFAULT_STDOUT_CAP,
    ) -> None:
        self.request_fd, self.reply_fd, self.deadline = request_fd, reply_fd, deadline
        os.set_blocking(request_fd, False)
        os.set_blocking(reply_fd, False)
        self._case_of_call = case_of_call
        self._buffer = bytearray()  # the current line after its last RS
        self._in_record = False  # the current line has had an RS
        self.stdout_cap = stdout_cap
        self.output_bytes = 0  # the program's own bytes on its stdout (everything not a record)
        self._records: list[list[Any]] = []
        self._taken = 0
        self._read_total = 0
        self._closed = False
        self.events: list[dict[str, Any]] = []
        self.event_counts: Counter[str] = Counter()

    def send(self, record: list[Any]) -> None:
        """Write one request, reading replies meanwhile so that neither side can block the other."""
        data = memoryview(dumps(record))
        while data:
            ready = self._poll(want_write=True)
            if self.request_fd in ready:
                try:
                    written = os.write(self.request_fd, data)
                except BrokenPipeError:
                    raise JailStopped("exited", "the jail closed its request pipe") from None
                except BlockingIOError:
                    continue
                data = data[written:]
            if self.reply_fd in ready:
                self._read()

    def receive(self) -> list[Any]:
        """The next record that is not an event."""
        while not self._records:
            if self._closed:
                raise JailStopped("exited", "the jail closed its reply pipe")
            self._poll(want_write=False)
            self._read()
        return self._records.pop(0)

    def _poll(self, want_write: bool) -> set[int]:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise JailStopped("timeout", "wall-clock limit")
        poller = select.poll()
        if not self._closed:
            poller.register(self.reply_fd, select.POLLIN)
        if want_write:
            poller.register(self.request_fd, select.POLLOUT)
        ready = poller.poll(max(1, int(remaining * 1000) + 1))
        if not ready and time.monotonic() >= self.deadline:
            raise JailStopped("timeout", "wall-clock limit")
        for fd, mask in ready:
            if fd == self.request_fd and mask & (select.POLLERR | select.POLLHUP):
                raise JailStopped("exited", "the jail closed its request pipe")
        return {fd for fd, _ in ready}

    def _read(self) -> None:
        try:
            chunk = os.read(self.reply_fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError as error:
            if error.errno != errno.EAGAIN:
                self._closed = True
            return
        if not chunk:
            self._closed = True
            return
        self._read_total += len(chunk)
        if self._read_total > MAX_OUTPUT:
            raise JailStopped("protocol", f"the jail wrote more than {MAX_OUTPUT} bytes")
        self._split(chunk)
        if self.output_bytes > self.stdout_cap:
            raise JailStopped("output", f"the program wrote more than {self.stdout_cap} bytes to its stdout")

    def _split(self, chunk: bytes) -> None:
        """Records out of `chunk`, the rest counted as the program's output. One pass, with one
        Python step per record (a line holding an RS), never per line of output: a line without
        RS is skipped by the search for the next RS, and of a line with one only what follows its
        last RS is kept (`rfind` up to the line's end)."""
        position, size = 0, len(chunk)
        while position < size:
            if not self._in_record:
                separator = chunk.find(RS, position)
                if separator < 0:
                    self.output_bytes += size - position
                    return
                self.output_bytes += separator - position
                self._in_record, position = True, separator + 1
                self._buffer.clear()
                continue
            newline = chunk.find(b"\n", position)
            end = size if newline < 0 else newline
            separator = chunk.rfind(RS, position, end)
            if separator >= 0:  # a later RS on the same line: what preceded it was the program's
                self.output_bytes += len(self._buffer) + separator - position
                self._buffer[:] = chunk[separator + 1 : end]
            else:
                self._buffer += chunk[position:end]
            if len(self._buffer) > MAX_LINE:
                raise JailStopped("protocol", f"a record longer than {MAX_LINE} bytes")
            if newline < 0:
                return
            line = bytes(self._buffer)
            self._buffer.clear()
            self._in_record, position = False, newline + 1
            self._take(line)

    def _take(self, line: bytes) -> None:
        # Shape first, on the bytes: the jail's writers put the kind first, unescaped and unspaced,
        # so any other start (an escaped kind, a bare array) and any oversized event is refused
        # before a single object is built for it.
        if not line.startswith(_TAGS):
            # Not a record: the program's own output that holds an RS (a JSON text sequence, RFC
            # 7464, or a join on "\x1e": red team sandbox6 `h2`, `h3`), counted as output.
            self.output_bytes += len(line) + 1
            return
        self._taken += 1
        if self._taken > MAX_RECORDS:
            raise JailStopped("protocol", f"more than {MAX_RECORDS} records in one run")
        is_event = line.startswith(_EVENT)
        if is_event and len(line) > MAX_EVENT:
            raise JailStopped("protocol", f"an event record longer than {MAX_EVENT} bytes")
        try:
            record = loads(line)
        except WireError as error:
            raise JailStopped("protocol", str(error)) from None
        if not is_event:
            self._records.append(record)
            return
        if len(record) != 4 or type(record[1]) is not str or type(record[2]) is not str or not (record[3] is None or type(record[3]) is int):
            raise JailStopped("protocol", "malformed event record")
        call = record[3]
        kind = safe_text(record[1], 40)
        if kind not in self.event_counts and len(self.event_counts) >= MAX_KINDS:
            kind = TOO_MANY_KINDS  # the jail writes on this pipe too: kinds may be made up
        self.event_counts[kind] += 1
        if len(self.events) < MAX_KEPT_EVENTS or self.event_counts[kind] == 1:
            test_index = self._case_of_call(call) if call is not None else None
            self.events.append({"kind": kind, "detail": safe_text(record[2]), "test_index": test_index})

    def record_event(self, kind: str, detail: str, test_index: int | None) -> None:
        """An event the parent observed itself (the jail's exit, a kernel refusal)."""
        self.event_counts[kind] += 1
        self.events.append({"kind": kind, "detail": safe_text(detail), "test_index": test_index})

    def close(self) -> None:
        for fd in (self.request_fd, self.reply_fd):
            try:
                os.close(fd)
            except OSError:
                pass  # already closed
