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
    """Writes whole lines to the protocol fd, in order; remembers when the reader has gone.

    On a blocking fd (the prelude's, before the event loop exists) ``send`` returns once
    the line is written. On a non-blocking fd (``stdio`` sets one up for a pipe or socket)
    what the fd does not take at once waits in ``buffered`` bytes, after what was already
    waiting, until ``flush`` writes it; the caller watches the fd and bounds the buffer by
    not taking more work. Bytes are never dropped or reordered, only lost with the reader.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False
        self._pending = bytearray()  # written to nobody yet: always whole lines' tails, in order

    @property
    def buffered(self) -> int:
        """Bytes accepted by ``send`` but not yet taken by the fd."""
        return len(self._pending)

    def send(self, data: bytes) -> None:
        """data and a newline, all of it (a pipe may take a large line in several writes)."""
        if self.closed:
            return
        if self._pending:  # behind what already waits: never overtake it
            self._pending += data
            self._pending += b"\n"
            return
        view = memoryview(data + b"\n")
        try:
            while view:
                written = os.write(self.fd, view)
                view = view[written:]
        except BlockingIOError:
            self._pending += view
        except OSError:  # EPIPE, ECONNRESET...: nobody reads any more
            self._close()

    def flush(self) -> None:
        """Write as much of what waits as the fd takes now."""
        try:
            while self._pending:
                written = os.write(self.fd, self._pending)
                del self._pending[:written]
        except BlockingIOError:
            pass
        except OSError:
            self._close()

    def _close(self) -> None:
        self.closed = True
        self._pending = bytearray()  # nobody will read it
