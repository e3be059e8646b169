"""Newline-delimited framing, shared by both halves of the stdio transport.

No asyncio here: ``prelude`` writes with it before the event loop exists.
"""

from __future__ import annotations

import itertools
import os
from collections import deque

from magnotia_mcp.transport.limits import MAX_LINE_BYTES


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
    what the fd does not take at once waits, behind what already waited, until ``flush``
    writes it: ``buffered`` bytes, held as the messages themselves (no copy). The caller
    watches the fd and bounds the buffer by taking no more work. Bytes are never dropped
    or reordered, only given up when the reader has gone.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False
        self._parts: deque[memoryview] = deque()  # what the fd has not taken yet, in order
        self.buffered = 0  # bytes in _parts

    def send(self, data: bytes, _reply: object = None) -> None:
        """data and a newline, all of it (a pipe may take a large line in several writes).

        A ``Server.submit`` send callback: what the server says of the message (a ``Reply``)
        makes no difference to a line.
        """
        if self.closed:
            return
        if self._parts:  # behind what already waits: the caller flushes when the fd can take more
            if data:  # an empty part would be a write of nothing
                self._parts.append(memoryview(data))
            self._parts.append(_NEWLINE)
            self.buffered += len(data) + 1
            return
        line = data + b"\n"
        try:
            written = os.write(self.fd, line)
        except BlockingIOError:
            written = 0
        except OSError:  # EPIPE, ECONNRESET...: nobody reads any more
            self.closed = True
            return
        if written < len(line):  # the pipe is full: keep the rest, then write on (a blocking fd) or return
            self._parts.append(memoryview(line)[written:])
            self.buffered = len(line) - written
            self.flush()

    def flush(self) -> None:
        """Write as much of what waits as the fd takes now (all of it on a blocking fd)."""
        parts = self._parts
        try:
            while parts:
                if _writev is not None:
                    written = _writev(self.fd, list(itertools.islice(parts, _MAX_PARTS)))
                else:
                    written = os.write(self.fd, parts[0])
                self.buffered -= written
                while written:
                    head = parts[0]
                    if written < len(head):
                        parts[0] = head[written:]
                        break
                    written -= len(head)
                    parts.popleft()
        except BlockingIOError:
            pass
        except OSError:  # EPIPE, ECONNRESET...: nobody reads any more
            self.closed = True
            parts.clear()
            self.buffered = 0


_NEWLINE = memoryview(b"\n")
_MAX_PARTS = 64  # per writev call; POSIX promises at least 16 (IOV_MAX), Linux and macOS allow 1024
_writev = getattr(os, "writev", None)  # not on Windows: one part per write there
