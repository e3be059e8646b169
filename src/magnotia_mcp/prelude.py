"""Answer the host's first messages before the event loop exists.

A host spawns the server and waits for the ``initialize`` answer, so every
millisecond before it is felt. Importing asyncio (and with it sqlite3,
aiosqlite, ssl...) costs several times what the rest of start-up does, so
the first chunk of stdin is read with a plain blocking read, and requests
that need no store (initialize, ping, tools/list...) are answered right
away by the same dispatcher. Anything else, and everything after, goes to
the asyncio loop in ``stdio``, in order.
"""

from __future__ import annotations

import os
import sys

from magnotia_mcp.dispatch import Server, decode, encode

# Methods whose handlers never await: running them without a loop is safe.
STATIC_METHODS = frozenset(
    {"initialize", "ping", "tools/list", "prompts/list", "resources/templates/list", "server/discover"}
)
_FIRST_READ = 1 << 16


def claim_stdout() -> int:
    """Keep fd 1 for the protocol on a private fd and point fd 1 (and sys.stdout) at stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return fd


def answer_first_messages(server: Server, stdin_fd: int, stdout_fd: int) -> bytes | None:
    """Handle the leading static requests of stdin's first chunk; return what is left.

    Returns None at EOF with nothing left, so the caller can skip the loop entirely.
    """
    data = b""
    while b"\n" not in data:
        chunk = os.read(stdin_fd, _FIRST_READ)
        if not chunk:
            return data or None
        data += chunk
        if len(data) > _FIRST_READ:
            return data  # something large: leave it to the loop's bounded reader
    while b"\n" in data:
        line, _, rest = data.partition(b"\n")
        if line.strip():
            response = _try_static(server, line)
            if response is _LOOP:
                break  # needs the loop: it and everything after are handled there, in order
            if isinstance(response, bytes):
                try:
                    os.write(stdout_fd, response + b"\n")
                except OSError:
                    return None
        data = rest
    return data


_LOOP = object()  # "the loop must handle this line"


def _try_static(server: Server, line: bytes) -> object:
    """The encoded response, None for no response, or _LOOP if the loop must handle it."""
    try:
        message = decode(line)
    except Exception:
        return _LOOP  # let the loop produce the parse error, so all errors come from one place
    if not isinstance(message, dict) or message.get("method") not in STATIC_METHODS:
        return _LOOP
    coro = server.handle_message(message)
    try:
        coro.send(None)
    except StopIteration as done:
        return None if done.value is None else encode(done.value)
    coro.close()  # it wanted to wait for something after all: hand it to the loop
    return _LOOP
