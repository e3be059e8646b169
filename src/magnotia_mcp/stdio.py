"""The stdio transport: bytes in, lines out, and nothing else on stdout.

Reads stdin in chunks, cuts them into lines (bounded: an over-long line is
dropped with an error, never buffered whole), hands each line to
``Server.submit``, and writes each message the server sends as one line,
flushed at once. Protocol bytes go to a private
duplicate of fd 1; fd 1 itself is pointed at stderr, so a stray ``print``
anywhere lands in the log instead of corrupting the stream (see ``prelude``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable

from magnotia_mcp import jsonrpc
from magnotia_mcp.errors import InvalidRequest
from magnotia_mcp.lines import MAX_LINE_BYTES, LineSplitter, LineWriter
from magnotia_mcp.server import Server

__all__ = ["MAX_LINE_BYTES", "serve"]

_CHUNK = 1 << 16


async def serve(server: Server, stdin_fd: int, stdout_fd: int, leftover: bytes = b"") -> int:
    """Serve until stdin ends, stdout closes or SIGTERM; returns the exit code.

    leftover is input already read from stdin (by ``prelude``) but not yet handled.
    """
    loop = asyncio.get_running_loop()
    out = LineWriter(stdout_fd)
    splitter = LineSplitter()
    ended = asyncio.Event()  # stdin reached EOF: answer what is in flight, then leave
    stop = asyncio.Event()  # SIGTERM or nobody reading stdout: leave now

    def send(data: bytes) -> None:
        out.send(data)
        if out.closed:
            stop.set()

    def on_chunk(data: bytes | None) -> None:
        if ended.is_set():
            return
        lines: list[bytes | None] = splitter.feed(data) if data is not None else []
        if data is None:
            tail = splitter.finish()
            if tail is not None:
                lines.append(tail)
        for line in lines:
            if line is None:
                error = InvalidRequest(f"request too large: lines are limited to {MAX_LINE_BYTES} bytes")
                send(jsonrpc.encode(jsonrpc.error(None, error)))
            else:
                server.submit(line, send)
        if data is None:
            ended.set()

    if leftover:
        on_chunk(leftover)
    await _start_reader(loop, stdin_fd, on_chunk)
    if hasattr(signal, "SIGTERM") and sys.platform != "win32":
        loop.add_signal_handler(signal.SIGTERM, stop.set)
    stopper = loop.create_task(stop.wait())
    try:
        await asyncio.wait({stopper, loop.create_task(ended.wait())}, return_when=asyncio.FIRST_COMPLETED)
        if not stop.is_set():
            await asyncio.wait({stopper, loop.create_task(server.wait_idle())}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        await server.close()
    return 0


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, on_chunk: Callable[[bytes | None], None]) -> None:
        self.on_chunk = on_chunk

    def data_received(self, data: bytes) -> None:
        self.on_chunk(data)

    def eof_received(self) -> bool:
        self.on_chunk(None)
        return False

    def connection_lost(self, _exc: Exception | None) -> None:
        self.on_chunk(None)


async def _start_reader(loop: asyncio.AbstractEventLoop, fd: int, on_chunk: Callable[[bytes | None], None]) -> None:
    """Deliver stdin's chunks to on_chunk on the loop; None marks EOF.

    A pipe or socket (what hosts give us) is watched by the event loop itself.
    Anything else (a terminal, a file, Windows) is read by a thread: it works
    everywhere, and never puts a terminal shared with a shell in non-blocking mode.
    """
    mode = os.fstat(fd).st_mode
    if sys.platform != "win32" and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        try:
            await loop.connect_read_pipe(lambda: _StdinProtocol(on_chunk), pipe)
            return
        except (OSError, ValueError, NotImplementedError):
            pass  # fall back to the thread

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, _CHUNK)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(on_chunk, data or None)
            except RuntimeError:  # the loop has closed
                return
            if not data:
                return

    threading.Thread(target=pump, name="magnotia-mcp-stdin", daemon=True).start()
