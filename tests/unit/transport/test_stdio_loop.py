"""transport.stdio.loop: the bounds on work in flight, in process, over real pipes, with a method table of our own.

``serve`` runs on the test's loop; the client's ends of the pipes are non-blocking
and read or written from the same loop. Handlers here never touch a store or a
thread, so "the server has done all it will" is the loop turning with nothing
changing (``settle``), never a wait for time.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from magnotia_mcp.protocol.jsonrpc import JSON
from magnotia_mcp.protocol.requests import Request
from magnotia_mcp.protocol.server import Method, Server
from magnotia_mcp.transport.limits import MAX_LINE_BYTES, MAX_PENDING
from magnotia_mcp.transport.stdio.loop import OUTPUT_HIGH, serve
from tests.unit.wire import frame, never_opened, notification, request

if sys.platform != "win32":
    import fcntl
    import termios

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="serve watches pipes on the loop (add_reader) only where selectors do: not Windows"
)

ANSWER_CHARS = 100_000


def line(message: object) -> bytes:
    return frame(message) + b"\n"


def _always(_revision: str) -> bool:
    return True


class Table:
    """hold: waits for release; big: answers ANSWER_CHARS characters at once; ping: inline."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0  # handlers of hold and big entered

    async def hold(self, _server: Server, request: Request) -> JSON:
        self.started += 1
        await self.release.wait()
        return {"held": request.id}

    async def big(self, _server: Server, _request: Request) -> JSON:
        self.started += 1
        return {"blob": "x" * ANSWER_CHARS}

    def server(self) -> Server:
        methods = {
            "hold": Method(self.hold, _always),
            "big": Method(self.big, _always),
            "ping": Method(lambda _s, _r: {}, _always, inline=True),
        }
        return Server(methods, never_opened)


class Client:
    """The other ends of the server's stdin and stdout."""

    def __init__(self, stdin_fd: int, stdout_r: int) -> None:
        self.stdin_fd, self.stdout_r = stdin_fd, stdout_r
        os.set_blocking(stdout_r, False)
        self._partial = b""

    async def read(self) -> dict[str, Any]:
        """The next message on stdout."""
        while b"\n" not in self._partial:
            ready = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().add_reader(self.stdout_r, ready.set_result, None)
            try:
                await ready
            finally:
                asyncio.get_running_loop().remove_reader(self.stdout_r)
            self._partial += os.read(self.stdout_r, 1 << 20)
        line, _, self._partial = self._partial.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def unread(self) -> int:
        """Bytes the server has written to stdout that nobody has read."""
        size = bytearray(4)
        fcntl.ioctl(self.stdout_r, termios.FIONREAD, size)
        return int.from_bytes(size, "little")


async def settle(*watch: Callable[[], object]) -> None:
    """Turn the loop until it has turned 50 times with none of the watched values changing."""
    quiet, last = 0, [w() for w in watch]
    while quiet < 50:
        await asyncio.sleep(0)
        now = [w() for w in watch]
        quiet, last = (quiet + 1, last) if now == last else (0, now)


async def write_all(fd: int, data: bytes) -> None:
    """Write data to a non-blocking pipe, waiting on the loop for room as often as it takes."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            room = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().add_writer(fd, room.set_result, None)
            try:
                await room
            finally:
                asyncio.get_running_loop().remove_writer(fd)


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


def pipes() -> tuple[int, int, int, int]:
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    return in_r, in_w, out_r, out_w


def test_at_the_limit_only_messages_answered_without_a_task_go_through_in_order() -> None:
    """With MAX_PENDING calls held, a ping and a cancellation at the head are handled, and the next call waits for
    the slot the cancellation frees; a ping behind that call is answered only once it is in."""

    async def scenario() -> None:
        table = Table()
        server = table.server()
        in_r, in_w, out_r, out_w = pipes()
        serving = asyncio.ensure_future(serve(server, in_r, out_w))
        client = Client(in_w, out_r)
        held = b"".join(line(request("hold", id=i)) for i in range(MAX_PENDING))
        os.write(
            in_w,
            held
            + line(request("ping", id="first"))
            + line(notification("notifications/cancelled", {"requestId": 0}))
            + line(request("hold", id="late"))
            + line(request("ping", id="after-late")),
        )
        assert await client.read() == {"jsonrpc": "2.0", "id": "first", "result": {}}
        assert await client.read() == {"jsonrpc": "2.0", "id": "after-late", "result": {}}
        assert server.pending == MAX_PENDING  # 1..MAX_PENDING-1 and "late": 0 was cancelled
        table.release.set()
        ids = {(await client.read())["id"] for _ in range(MAX_PENDING)}
        assert ids == {*range(1, MAX_PENDING), "late"}  # never 0: a cancelled call is not answered
        os.close(in_w)
        assert await serving == 0
        assert client.unread() == 0  # nothing more
        assert os.get_blocking(out_w)  # the protocol fd is given back blocking, as the prelude found it
        for fd in (in_r, out_r, out_w):
            os.close(fd)

    run(scenario)


def test_a_client_that_does_not_read_stops_new_work_and_gets_every_answer_whole_once_it_reads() -> None:
    """Answers of 100,000 characters, nobody reading: calls start only while under OUTPUT_HIGH bytes wait (plus
    what the pipe holds and the calls already in flight), and the loop is not blocked (the test's own reads run on
    it); reading brings every answer, whole."""

    async def scenario() -> None:
        table = Table()
        server = table.server()
        in_r, in_w, out_r, out_w = pipes()
        serving = asyncio.ensure_future(serve(server, in_r, out_w))
        client = Client(in_w, out_r)
        calls = 200
        os.write(in_w, b"".join(line(request("big", id=i)) for i in range(calls)))
        await settle(lambda: table.started, client.unread)
        pipe = client.unread()
        if sys.platform == "linux":
            assert pipe == fcntl.fcntl(out_r, fcntl.F_GETPIPE_SZ)  # the client's pipe is full ...
        answer = ANSWER_CHARS + 100
        assert table.started <= (pipe + OUTPUT_HIGH) // answer + 1 + MAX_PENDING  # ... and new work stopped
        assert table.started < calls
        ids = set()
        for _ in range(calls):
            message = await client.read()
            assert message["result"] == {"blob": "x" * ANSWER_CHARS}
            ids.add(message["id"])
        assert ids == set(range(calls))
        os.close(in_w)
        assert await serving == 0
        for fd in (in_r, out_r, out_w):
            os.close(fd)

    run(scenario)


def test_stdin_that_is_a_file_is_read_one_chunk_at_a_time_while_every_slot_is_taken() -> None:
    """A regular file is read by a thread: with MAX_PENDING calls held it reads no further than its first chunk."""

    async def scenario() -> None:
        table = Table()
        server = table.server()
        with tempfile.TemporaryFile() as stdin:
            lines = b"".join(line(request("hold", id=i)) for i in range(5_000))
            stdin.write(lines)
            stdin.seek(0)
            out_r, out_w = os.pipe()
            serving = asyncio.ensure_future(serve(server, stdin.fileno(), out_w))
            client = Client(-1, out_r)
            while table.started < MAX_PENDING:
                await asyncio.sleep(0)
            await settle(lambda: table.started, lambda: os.lseek(stdin.fileno(), 0, os.SEEK_CUR))
            assert os.lseek(stdin.fileno(), 0, os.SEEK_CUR) == 1 << 16  # one chunk, not the whole 300 KB file
            assert table.started == MAX_PENDING
            table.release.set()
            ids = {(await client.read())["id"] for _ in range(5_000)}
            assert ids == set(range(5_000))
            assert await serving == 0  # the file's end is stdin's end
            assert os.lseek(stdin.fileno(), 0, os.SEEK_CUR) == len(lines)
            os.close(out_r)
            os.close(out_w)

    run(scenario)


def test_sigterm_with_lines_waiting_for_a_slot_starts_none_of_them() -> None:
    """SIGTERM while every slot is taken and more calls wait: the calls in flight are cancelled, and the slots they
    free go to nobody (a call started then would outlive the store)."""

    async def scenario() -> None:
        table = Table()
        server = table.server()
        in_r, in_w, out_r, out_w = pipes()
        serving = asyncio.ensure_future(serve(server, in_r, out_w))
        os.write(in_w, b"".join(line(request("hold", id=i)) for i in range(3 * MAX_PENDING)))
        while table.started < MAX_PENDING:
            await asyncio.sleep(0)
        os.kill(os.getpid(), signal.SIGTERM)  # serve handles it on its loop from the moment it reads stdin
        assert await serving == 0
        assert table.started == MAX_PENDING
        assert server.pending == 0
        for fd in (in_r, in_w, out_r, out_w):
            os.close(fd)

    run(scenario)


def test_large_requests_are_taken_one_at_a_time() -> None:
    """Requests of 60% of the line limit: a second one waits until the first is done (a parsed request is held
    by its call), and so does everything behind it."""

    async def scenario() -> None:
        table = Table()
        server = table.server()
        in_r, in_w, out_r, out_w = pipes()
        os.set_blocking(in_w, False)
        serving = asyncio.ensure_future(serve(server, in_r, out_w))
        client = Client(in_w, out_r)
        pad = "x" * (MAX_LINE_BYTES * 6 // 10)
        big = [line(request("hold", {"pad": pad}, id=i)) for i in range(2)]
        writing = asyncio.ensure_future(write_all(in_w, b"".join(big) + line(request("hold", id=2))))
        while table.started < 1:
            await asyncio.sleep(0)
        await settle(lambda: table.started, lambda: server.pending, writing.done)
        assert table.started == 1
        assert server.pending == 1
        table.release.set()
        assert {(await client.read())["id"] for _ in range(3)} == {0, 1, 2}
        await writing
        os.close(in_w)
        assert await serving == 0
        for fd in (in_r, out_r, out_w):
            os.close(fd)

    run(scenario)
