"""The stdio transport: bytes in, lines out, and nothing else on stdout.

Reads stdin in chunks, cuts them into lines (bounded: an over-long line is
dropped with an error, never buffered whole), hands each line to
``Server.submit``, and writes each message the server sends as one line.
Protocol bytes go to a private
duplicate of fd 1; fd 1 itself is pointed at stderr, so a stray ``print``
anywhere lands in the log instead of corrupting the stream (see ``prelude``).

Work in flight is bounded, whatever the client does: a line is handed to the
server only while fewer than ``MAX_PENDING`` calls run, their requests add up
to at most one line's limit (``MAX_LINE_BYTES``; one call is always let in),
and fewer than ``OUTPUT_HIGH`` bytes of answers wait for the client to read
them; stdin is read only when every line already read has been handed over.
A client that sends faster than it reads fills its own pipe and waits; every
request is still answered, in the order the server finishes them. (A batch,
in the one revision that has them, is one line and one call here.)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import stat
import sys
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from magnotia_mcp.errors import InvalidRequest
from magnotia_mcp.protocol import jsonrpc
from magnotia_mcp.protocol.server import DEFERRED, Server
from magnotia_mcp.transport.limits import MAX_LINE_BYTES, MAX_PENDING
from magnotia_mcp.transport.stdio.lines import LineSplitter, LineWriter

__all__ = ["OUTPUT_HIGH", "serve"]

_CHUNK = 1 << 16
# Answers waiting for the client to read them: past this, no new work is taken
# (calls in flight still finish and add theirs: at most MAX_PENDING answers more).
OUTPUT_HIGH = 256 * 1024


async def serve(server: Server, stdin_fd: int, stdout_fd: int, leftover: bytes = b"") -> int:
    """Serve until stdin ends, stdout closes or SIGTERM; returns the exit code.

    leftover is input already read from stdin (by ``prelude``) but not yet handled.
    """
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()  # stdin reached EOF and every line was handed over: answer what is in flight, leave
    stop = asyncio.Event()  # SIGTERM or nobody reading stdout: leave now
    out = _Output(loop, stdout_fd, stop)
    intake = _Intake(server, out, ended)
    out.on_drain = intake.admit
    try:
        if leftover:
            intake.on_chunk(leftover)
        intake.valve = await _start_reader(loop, stdin_fd, intake.on_chunk)
        intake.admit()  # with the valve in place: pause it if leftover filled the queue
        if hasattr(signal, "SIGTERM") and sys.platform != "win32":
            loop.add_signal_handler(signal.SIGTERM, stop.set)
        # At EOF: answer what is in flight, and see every answer out, unless told to stop.
        for step in (ended.wait, server.wait_idle, out.flushed.wait):
            if not await _unless_stopped(stop, step()):
                break
    finally:
        intake.close()  # nothing new starts while the calls in flight are cancelled
        await server.close()
        out.close()
    return 0


async def _unless_stopped(stop: asyncio.Event, work: Any) -> bool:
    """Wait for work, or for stop; True if work finished first."""
    loop = asyncio.get_running_loop()
    stopper, task = loop.create_task(stop.wait()), loop.create_task(work)
    try:
        await asyncio.wait({stopper, task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        task.cancel()
    return not stop.is_set()


class _Output:
    """The protocol fd, non-blocking where the loop can watch it: answers never hold up the loop.

    A pipe or socket is written without blocking: what the client has not read yet waits
    in the writer's buffer, the loop writes it as the fd takes it, and ``on_drain`` is
    told each time some went out. Anything else (a terminal, a file, Windows) is written
    blocking, as the prelude does: the loop waits for the client, and reads nothing meanwhile.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, stop: asyncio.Event) -> None:
        self.loop = loop
        self.fd = fd
        self.stop = stop
        self.writer = LineWriter(fd)
        self.flushed = asyncio.Event()  # nothing waits in the buffer
        self.flushed.set()
        self.on_drain: Callable[[], None] = lambda: None
        self._watching = False
        self._nonblocking = _watchable(fd) and _can_watch_writes(loop, fd)
        if self._nonblocking:
            os.set_blocking(fd, False)

    @property
    def closed(self) -> bool:
        return self.writer.closed

    @property
    def full(self) -> bool:
        """Take no new work: the client is not reading (or has gone)."""
        return self.writer.closed or self.writer.buffered >= OUTPUT_HIGH

    def send(self, data: bytes, _reply: object = None) -> None:
        """A ``Server.submit`` send callback: a line, whatever the server says of it (a ``Reply``)."""
        self.writer.send(data)
        if self.writer.closed:
            self.stop.set()
        elif self.writer.buffered and not self._watching:
            self._watching = True
            self.flushed.clear()
            self.loop.add_writer(self.fd, self._writable)

    def _writable(self) -> None:
        self.writer.flush()
        if self.writer.closed:
            self.stop.set()
        if not self.writer.buffered:
            self._stop_watching()
        self.on_drain()

    def _stop_watching(self) -> None:
        if self._watching:
            self._watching = False
            self.loop.remove_writer(self.fd)
        self.flushed.set()

    def close(self) -> None:
        """Stop watching the fd and give it back blocking, as it was."""
        self._stop_watching()
        if self._nonblocking:
            with contextlib.suppress(OSError):
                os.set_blocking(self.fd, True)


class _Valve(Protocol):
    def set_reading(self, on: bool) -> None: ...


class _Eof:
    """The end of stdin, queued behind the lines read before it."""


_EOF = _Eof()


class _Intake:
    """Lines read from stdin and not yet handed to the server, and the gate on reading more.

    A line is handed over only while the server has a free slot (``MAX_PENDING``), the
    requests in flight and this one add up to at most ``MAX_LINE_BYTES`` (or none is in
    flight), and the output is not full; a line the server answers without a task (ping, a
    cancellation, initialize, an error) may also go through when a call could not. Lines are handed
    over strictly in the order they came. stdin is read only while this queue is empty,
    so it never holds more than one chunk: the rest stays in the client's pipe.
    """

    def __init__(self, server: Server, out: _Output, ended: asyncio.Event) -> None:
        self.server = server
        self.out = out
        self.ended = ended
        self.valve: _Valve | None = None
        self.splitter = LineSplitter()
        self.queue: deque[bytes | _Eof | None] = deque()
        self.taken = 0  # bytes of the requests in flight: their parsed form is what a call holds on to
        self.needs_slot: bytes | None = None  # the line at the head, known to need a slot
        self.eof = False

    def on_chunk(self, data: bytes | None) -> None:
        """A chunk of stdin, or None at its end."""
        if self.eof:
            return
        if data is None:
            self.eof = True
            tail = self.splitter.finish()
            if tail is not None:
                self.queue.append(tail)
            self.queue.append(_EOF)
        else:
            self.queue.extend(self.splitter.feed(data))
        self.admit()

    def admit(self) -> None:
        """Hand over as many queued lines as the bounds allow; read stdin again once none is left."""
        queue, server, out = self.queue, self.server, self.out
        while queue and not out.full:
            line = queue[0]
            if isinstance(line, _Eof):
                self.ended.set()
            elif line is None:
                error = InvalidRequest(f"request too large: lines are limited to {MAX_LINE_BYTES} bytes")
                out.send(jsonrpc.encode(jsonrpc.error(None, error)))
            elif server.pending < MAX_PENDING and (not self.taken or self.taken + len(line) <= MAX_LINE_BYTES):
                self.needs_slot = None
                task = server.submit(line, out.send)
                if isinstance(task, asyncio.Future):
                    self.taken += len(line)
                    task.add_done_callback(functools.partial(self._settled, len(line)))
            elif line is self.needs_slot or server.submit(line, out.send, inline_only=True) is DEFERRED:
                self.needs_slot = line  # parsed once: nothing behind it runs first, so it stays a call
                break  # it waits at the head of the queue until a call ends
            queue.popleft()
        if self.valve is not None:
            self.valve.set_reading(not queue and not self.eof)

    def _settled(self, size: int, _task: asyncio.Future[Any]) -> None:
        self.taken -= size
        self.admit()

    def close(self) -> None:
        """Hand over nothing more and read no more."""
        self.eof = True
        self.queue.clear()
        if self.valve is not None:
            self.valve.set_reading(False)


def _watchable(fd: int) -> bool:
    """A pipe or socket, which the loop can watch (what hosts give us), not a terminal or a file."""
    if sys.platform == "win32":
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _can_watch_writes(loop: asyncio.AbstractEventLoop, fd: int) -> bool:
    try:
        loop.add_writer(fd, lambda: None)
    except (OSError, ValueError, NotImplementedError):
        return False
    loop.remove_writer(fd)
    return True


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


class _PipeValve:
    """Reading gated by pausing the loop's transport."""

    def __init__(self, transport: asyncio.ReadTransport) -> None:
        self.transport = transport
        self.reading = True

    def set_reading(self, on: bool) -> None:
        if on != self.reading:
            self.reading = on
            if on:
                self.transport.resume_reading()
            else:
                self.transport.pause_reading()


class _PumpValve:
    """Reading gated for the thread: it reads one chunk, then waits for the loop to take it and ask for more."""

    def __init__(self) -> None:
        self.go = threading.Event()  # the thread may read one chunk
        self.go.set()
        self.reading = True
        self.delivered = False  # a chunk was taken and the thread waits for go

    def set_reading(self, on: bool) -> None:
        self.reading = on
        if on and self.delivered:
            self.delivered = False
            self.go.set()

    def wrap(self, on_chunk: Callable[[bytes | None], None]) -> Callable[[bytes | None], None]:
        def deliver(data: bytes | None) -> None:
            self.delivered = True
            on_chunk(data)  # may pause or resume
            self.set_reading(self.reading)

        return deliver


async def _start_reader(loop: asyncio.AbstractEventLoop, fd: int, on_chunk: Callable[[bytes | None], None]) -> _Valve:
    """Deliver stdin's chunks to on_chunk on the loop (None marks EOF); returns the gate on reading.

    A pipe or socket (what hosts give us) is watched by the event loop itself.
    Anything else (a terminal, a file, Windows) is read by a thread: it works
    everywhere, and never puts a terminal shared with a shell in non-blocking mode.
    """
    if _watchable(fd):
        pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
        try:
            transport, _ = await loop.connect_read_pipe(lambda: _StdinProtocol(on_chunk), pipe)
            return _PipeValve(transport)
        except (OSError, ValueError, NotImplementedError):
            pass  # fall back to the thread

    valve = _PumpValve()
    deliver = valve.wrap(on_chunk)

    def pump() -> None:
        while True:
            valve.go.wait()
            valve.go.clear()
            try:
                data = os.read(fd, _CHUNK)
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(deliver, data or None)
            except RuntimeError:  # the loop has closed
                return
            if not data:
                return

    threading.Thread(target=pump, name="magnotia-mcp-stdin", daemon=True).start()
    return valve
