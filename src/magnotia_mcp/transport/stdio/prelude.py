"""Answer the host's first messages before the event loop exists.

A host spawns the server and waits for the ``initialize`` answer, so every
millisecond before it is felt. Importing asyncio (and with it sqlite3,
aiosqlite, ssl...) costs several times what the rest of start-up does, so
the first chunk of stdin is read with a plain blocking read and its lines
go to ``Server.submit`` with ``inline_only``: whatever needs no store
(initialize, ping, the static lists, notifications, errors) is answered at
once. The first line that needs the loop, and everything after it, goes to
``stdio``, in order.
"""

from __future__ import annotations

import os
import sys

from magnotia_mcp.protocol.server import DEFERRED, Server
from magnotia_mcp.transport.stdio.lines import LineWriter

_FIRST_READ = 1 << 16


def claim_stdout() -> int:
    """Keep fd 1 for the protocol on a private fd and point fd 1 (and sys.stdout) at stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return fd


def answer_first_messages(server: Server, stdin_fd: int, stdout_fd: int) -> bytes | None:
    """Handle the leading inline-answerable lines of stdin's first chunk; return what is left.

    Returns None at EOF with nothing left, or when nobody reads stdout any more,
    so the caller can skip the loop entirely.
    """
    data = b""
    while b"\n" not in data:
        chunk = os.read(stdin_fd, _FIRST_READ)
        if not chunk:
            return data or None
        data += chunk
        if len(data) > _FIRST_READ:
            return data  # something large: leave it to the loop's bounded reader
    out = LineWriter(stdout_fd)
    while b"\n" in data:
        line, _, rest = data.partition(b"\n")
        if server.submit(line, out.send, inline_only=True) is DEFERRED:
            break  # needs the loop: it and everything after are handled there, in order
        if out.closed:
            return None
        data = rest
    return data
