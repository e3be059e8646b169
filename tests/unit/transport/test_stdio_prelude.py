"""transport.stdio.prelude: stdout kept for the protocol, and the first lines answered before the event loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from magnotia_mcp.protocol.methods import new_server
from magnotia_mcp.transport.stdio.prelude import answer_first_messages
from tests.unit.wire import frame, never_opened, notification, request


def test_a_stray_print_after_claiming_stdout_goes_to_stderr() -> None:
    """Once stdout is claimed, print() and writes to fd 1 land on stderr; only the protocol fd reaches stdout."""
    code = (
        "import os, sys\n"
        "from magnotia_mcp.transport.stdio.prelude import claim_stdout\n"
        "fd = claim_stdout()\n"
        "print('stray print')\n"
        "sys.stdout.write('stray write\\n'); sys.stdout.flush()\n"
        "os.write(1, b'stray fd write\\n')\n"
        'os.write(fd, b\'{"jsonrpc":"2.0","id":1,"result":{}}\\n\')\n'
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30, check=True)
    assert done.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    for stray in (b"stray print", b"stray write", b"stray fd write"):
        assert stray in done.stderr


class Pipes:
    """stdin and stdout of a server as two pipes the test writes and reads."""

    def __init__(self) -> None:
        self.stdin_r, self.stdin_w = os.pipe()
        self.stdout_r, self.stdout_w = os.pipe()

    def feed(self, *messages: object, end: bool = False) -> None:
        os.write(self.stdin_w, b"".join(frame(m) + b"\n" for m in messages))
        if end:
            os.close(self.stdin_w)
            self.stdin_w = -1

    def replies(self) -> list[object]:
        os.close(self.stdout_w)
        self.stdout_w = -1
        data = b""
        while chunk := os.read(self.stdout_r, 1 << 16):
            data += chunk
        return [json.loads(line) for line in data.splitlines()]

    def close(self) -> None:
        for fd in (self.stdin_r, self.stdin_w, self.stdout_r, self.stdout_w):
            if fd != -1:
                os.close(fd)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    p = Pipes()
    yield p
    p.close()


def test_the_leading_inline_lines_are_answered_and_the_rest_is_left_in_order(pipes: Pipes) -> None:
    """initialize and ping are answered at once; from the first line that needs the loop, everything is left."""
    call = request("tools/call", {"name": "list_transcripts"}, id=3)
    pipes.feed(
        request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, id=1),
        notification("notifications/initialized"),
        request("ping", id=2),
        call,
        request("ping", id=4),
    )
    left = answer_first_messages(new_server(never_opened), pipes.stdin_r, pipes.stdout_w)
    assert left == frame(call) + b"\n" + frame(request("ping", id=4)) + b"\n"
    replies = pipes.replies()
    assert [r["id"] for r in replies if isinstance(r, dict)] == [1, 2]


def test_an_unfinished_last_line_is_left_for_the_loop(pipes: Pipes) -> None:
    """Bytes after the last newline are handed on untouched."""
    pipes.feed(request("ping", id=1))
    os.write(pipes.stdin_w, b'{"jsonrpc":"2.0","id":2,')
    left = answer_first_messages(new_server(never_opened), pipes.stdin_r, pipes.stdout_w)
    assert left == b'{"jsonrpc":"2.0","id":2,'
    assert len(pipes.replies()) == 1


def test_eof_before_any_input_leaves_nothing_to_do(pipes: Pipes) -> None:
    """An empty stdin returns None, so the caller can skip the event loop entirely."""
    pipes.feed(end=True)
    assert answer_first_messages(new_server(never_opened), pipes.stdin_r, pipes.stdout_w) is None
    assert pipes.replies() == []


def test_a_stdout_nobody_reads_stops_the_prelude(pipes: Pipes) -> None:
    """With the reading end of stdout gone, the prelude returns None instead of answering into the void."""
    os.close(pipes.stdout_r)
    pipes.stdout_r = -1
    pipes.feed(request("ping", id=1), request("ping", id=2))
    assert answer_first_messages(new_server(never_opened), pipes.stdin_r, pipes.stdout_w) is None
