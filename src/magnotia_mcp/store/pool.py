"""A small pool of read-only connections, each on its own aiosqlite worker thread.

Connections open on first use and are re-checked each time they are lent:
one that failed, was interrupted, or no longer reads the file at the store's
path (replaced, removed, or changed under an immutable open) is closed, and
the next call opens a fresh one. See ``opening`` for how a connection opens,
and ``reader`` for how a lent one follows changes to the store.

A ``mode=ro`` connection that stays open stops the app from tidying up when it
quits: SQLite's last connection to close checkpoints the WAL and deletes
``-wal``/``-shm``, and a reader that is still open makes the app's connection
not the last (and a read-only connection can do neither). So once no call has
run for ``IDLE_CLOSE`` seconds, ``mode=ro`` connections are closed; immutable
ones take no locks, hold nothing up and stay.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from magnotia_mcp import log
from magnotia_mcp.store.opening import open_readonly, stamp
from magnotia_mcp.store.reader import Generation, Reader
from magnotia_mcp.store.worker import on_worker_thread

__all__ = ["IDLE_CLOSE", "Store"]

# Seconds without a call after which mode=ro connections are closed (see the module docstring):
# calls of one exchange with a model come closer than this; reopening costs about a millisecond.
IDLE_CLOSE = 2.0


class Store:
    """Lends at most ``readers`` connections at a time; a call waits for a free one."""

    def __init__(
        self, path: Path, *, readers: int = 2, busy_timeout: float = 2.0, idle_close: float = IDLE_CLOSE
    ) -> None:
        self.path = path
        self._max = readers
        self._busy_timeout = busy_timeout
        self._idle_close = idle_close
        self._idle_timer: asyncio.TimerHandle | None = None
        self._lent = 0
        self._idle: list[Reader] = []
        self._open = 0
        self._freed = asyncio.Condition()
        self._closing: set[asyncio.Task[None]] = set()
        self._generation = Generation()

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[Reader]:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        self._lent += 1
        try:
            reader = await self._acquire()
            try:
                yield reader
            finally:
                await self._release(reader)
        finally:
            self._lent -= 1
            if self._lent == 0:
                self._idle_timer = asyncio.get_running_loop().call_later(self._idle_close, self._on_idle)

    def _on_idle(self) -> None:
        self._idle_timer = None
        if any(reader.info.fingerprint is None for reader in self._idle):
            self._in_background(self.close_idle())

    async def close_idle(self) -> None:
        """Close the idle ``mode=ro`` connections, so that the app may tidy up if it quits now."""
        async with self._freed:
            drop = [reader for reader in self._idle if reader.info.fingerprint is None]
            self._idle = [reader for reader in self._idle if reader.info.fingerprint is not None]
            self._open -= len(drop)
            self._freed.notify(len(drop))
        for reader in drop:
            await reader.close()
        if drop:  # "0 open": nothing of this server holds the store now (tests wait for it)
            log.debug(f"closed {len(drop)} idle connection(s) to {self.path}; {self._open} open")

    async def _acquire(self) -> Reader:
        while True:
            reader = await self._take()
            if reader is None:  # a slot is reserved for a new connection
                break
            try:
                if await reader.current():
                    return reader
            except BaseException:  # cancelled while checking: the connection is not the caller's
                reader.retired = True
                await self._release(reader)
                raise
            reader.retired = True
            await self._release(reader)
        try:
            return await self._new_reader()
        except BaseException:
            async with self._freed:
                self._open -= 1
                self._freed.notify()
            raise

    async def _take(self) -> Reader | None:
        """An idle reader (still to be checked), or None once a slot for a new one is reserved."""
        async with self._freed:
            while True:
                if self._idle:
                    return self._idle.pop()
                if self._open < self._max:
                    self._open += 1
                    return None
                await self._freed.wait()

    async def _new_reader(self) -> Reader:
        opening = asyncio.ensure_future(self._open_reader())
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            # The open goes on in its worker thread: close what it opens, so that no
            # thread outlives the store (and the event loop it reports back to).
            self._in_background(self._close_when_open(opening))
            raise

    async def _open_reader(self) -> Reader:
        # Open and check on a pool thread first, then hand the open connection to its
        # own aiosqlite thread (see ``worker`` for why).
        loop = asyncio.get_running_loop()
        before = stamp(self.path)
        conn, info = await loop.run_in_executor(None, open_readonly, self.path, self._busy_timeout)
        conn.row_factory = sqlite3.Row
        # No connection may have been open to see what changed: compare the files.
        self._generation.opened(before, stamp(self.path))
        return Reader(await on_worker_thread(conn), info, self.path, self._generation)

    @staticmethod
    async def _close_when_open(opening: asyncio.Future[Reader]) -> None:
        with suppress(Exception):  # a failed open has already ended its thread
            reader = await opening
            await reader.close()

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run work without a caller waiting for it; close() waits for it."""
        task = asyncio.get_running_loop().create_task(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _release(self, reader: Reader) -> None:
        async with self._freed:
            if reader.retired:
                self._open -= 1
                self._in_background(reader.close())
            else:
                self._idle.append(reader)
            self._freed.notify()

    async def close(self) -> None:
        """Close every connection, waiting for ones still unwinding an interrupted query.

        A worker thread that finishes after the event loop has closed would die
        with a traceback on stderr, so nothing may be left running.
        """
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        idle, self._idle = self._idle, []
        for reader in idle:
            await reader.close()
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=5.0)
        self._open = 0
