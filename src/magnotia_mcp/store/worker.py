"""Handing an open sqlite3 connection to an aiosqlite worker thread: the one use of aiosqlite's constructor.

aiosqlite's public ``connect()`` opens the connection on its worker thread. When that
open fails, aiosqlite does not wait for the thread to end, and the thread then reports
back to an event loop that may be gone (a traceback on stderr at exit). So the store
opens and checks a connection on a pool thread first (``opening.open_readonly``) and
hands aiosqlite the open connection: its thread then has nothing left that can fail.
``connect()`` only takes what ``sqlite3.connect`` takes, so that needs
``aiosqlite.Connection(connector, iter_chunk_size)``, which aiosqlite does not
document: pyproject.toml bounds aiosqlite below its next minor version, and
tests/unit/store/test_worker.py checks what this relies on (awaiting the connection
starts its thread, runs the connector there once, and yields the connection).
"""

from __future__ import annotations

import sqlite3

import aiosqlite

# Rows fetched per trip by aiosqlite's cursor iteration (connect()'s default).
_ITER_CHUNK_SIZE = 64


async def on_worker_thread(conn: sqlite3.Connection) -> aiosqlite.Connection:
    """conn, open and checked (with check_same_thread=False), served from its own aiosqlite thread."""
    return await aiosqlite.Connection(lambda: conn, _ITER_CHUNK_SIZE)
