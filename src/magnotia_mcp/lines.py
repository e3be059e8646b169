"""Newline-delimited framing, shared by both halves of the stdio transport.

No asyncio here: ``prelude`` writes with it before the event loop exists.
"""

from __future__ import annotations

import os

MAX_LINE_BYTES = 8 * 1024 * 1024


class LineSplitter:
    """Cuts a byte stream into lines; a line longer than the limit comes out as None."""

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._skipping = False  # inside an over-long line: drop bytes until its newline

    def feed(self, data: bytes) -> list[bytes | None]:
        out: list[bytes | None] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl == -1:
                break
            if self._skipping:
                self._skipping = False
            elif len(self._buf) + nl - start > self.limit:
                out.append(None)
                self._buf.clear()
            else:
                self._buf += data[start:nl]
                out.append(bytes(self._buf))
                self._buf.clear()
            start = nl + 1
        rest = len(data) - start
        if rest and not self._skipping:
            if len(self._buf) + rest > self.limit:
                out.append(None)
                self._buf.clear()
                self._skipping = True
            else:
                self._buf += data[start:]
        return out

    def finish(self) -> bytes | None:
        """The last line if the stream ended without a newline."""
        tail = bytes(self._buf)
        self._buf.clear()
        return tail if tail.strip() and not self._skipping else None


class LineWriter:
    """Writes whole lines to the protocol fd; remembers when the reader has gone."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False

    def send(self, data: bytes) -> None:
        """data and a newline, all of it (a pipe may take a large line in several writes)."""
        if self.closed:
            return
        view = memoryview(data + b"\n")
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.closed = True
