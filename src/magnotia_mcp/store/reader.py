"""One read connection of the pool, and how it follows changes to the store.

What a connection learnt at open (``Reader.info``: the full-text tables, the
schema version) is re-validated cheaply: each lend asks ``PRAGMA data_version``
(one round trip to the connection's thread, nothing read from disk when
nothing changed); only when it moved are the schema cookie and
``user_version`` read, and if either differs the connection is replaced by a
fresh open, which checks everything again (and raises the StoreError a newer
schema gets at start). ``Reader.generation`` moves whenever the store may have
changed: caches of anything the store holds are keyed on it.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from magnotia_mcp import log
from magnotia_mcp.errors import StoreError
from magnotia_mcp.store.opening import COOKIES, StoreInfo, fingerprint, identity, shown, store_error

if TYPE_CHECKING:  # only for annotations
    import aiosqlite

Params = Sequence[Any] | dict[str, Any]
# How long closing a connection may keep interrupting what its thread runs: 10 s.
_CLOSE_POLL = 0.02
_CLOSE_TRIES = 500


def _tolerant_text(raw: bytes) -> str:
    # The app should only store UTF-8, but one bad byte must not make a row unreadable.
    return raw.decode("utf-8", "replace")


def _tolerant_arguments(function: Callable[..., object]) -> Callable[..., object]:
    """function, with each BLOB argument (a text column cast AS BLOB) decoded as _tolerant_text does."""

    def call(*args: object) -> object:
        return function(*(_tolerant_text(a) if isinstance(a, bytes) else a for a in args))

    return call


def _bindable_value(value: Any) -> Any:
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # An unpaired surrogate (a "\\ud800" escape in the JSON) has no UTF-8 form and
            # cannot be bound as text; as a BLOB it binds, and equals no stored text.
            return value.encode("utf-8", "surrogatepass")
    return value


def _bindable(params: Params) -> Params:
    if isinstance(params, dict):
        return {k: _bindable_value(v) for k, v in params.items()}
    return [_bindable_value(v) for v in params]


class Generation:
    """A counter shared by a store's readers: it moves whenever the store may have changed."""

    __slots__ = ("memo", "stamp", "value")

    def __init__(self) -> None:
        self.value = 0
        # The store's files when the value last moved (``opening.stamp``); None: unknown.
        self.stamp: tuple[object, ...] | None = None
        # What callers remember of the store for this value (emptied when it moves).
        self.memo: dict[str, object] = {}

    def bump(self) -> None:
        self.value += 1
        self.stamp = None
        self.memo = {}

    def opened(self, before: tuple[object, ...], after: tuple[object, ...]) -> None:
        """A connection opened: a new value unless the files look as they did when it last moved.

        before and after are the files' stamps around the open (a commit in between moves
        the value too). Connections close when idle (see the module docstring); without
        this, every call after a pause would start a new generation and empty the caches.
        """
        if before != self.stamp or after != before:
            self.value += 1
            self.stamp = after
            self.memo = {}


class Reader:
    """One read connection, lent to one call at a time."""

    __slots__ = ("_conn", "_data_version", "_functions", "_generation", "info", "path", "retired")

    def __init__(
        self, conn: aiosqlite.Connection, info: StoreInfo, path: Path, generation: Generation | None = None
    ) -> None:
        self._conn = conn
        self._functions: set[str] = set()
        self._data_version = info.data_version
        self._generation = generation or Generation()
        self.info = info
        self.path = path
        self.retired = False  # must not be lent again

    @property
    def has_fts(self) -> bool:
        return self.info.has_fts

    @property
    def generation(self) -> int:
        """Moves whenever the store may have changed since: the key for caches of what it holds."""
        return self._generation.value

    @property
    def memo(self) -> dict[str, object]:
        """A place for what callers remember of the store, emptied whenever ``generation`` moves.

        Shared by the store's readers and kept by its pool only (another pool on the same file,
        as after a restart, starts empty).
        """
        return self._generation.memo

    async def all(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run one query and return every row; cancelling the caller interrupts SQLite."""
        try:
            try:
                rows = await self._conn.execute_fetchall(sql, _bindable(params))
            except sqlite3.OperationalError as exc:
                if "decode" not in str(exc) or self._conn.text_factory is _tolerant_text:
                    raise
                # Text that is not UTF-8: from now on decode leniently on this connection
                # (the C default is much faster, so it stays the first try).
                self._conn.text_factory = _tolerant_text
                rows = await self._conn.execute_fetchall(sql, _bindable(params))
        except asyncio.CancelledError:
            await self._conn.interrupt()
            # The interrupted statement may still be unwinding in the worker thread;
            # a fresh connection is cheaper than reasoning about that race.
            self.retired = True
            raise
        except sqlite3.Error as exc:
            self.retired = True
            self._check_unchanged()  # a torn read can look like a corrupt file: say what happened
            raise store_error(exc, self.path) from exc
        self._check_unchanged()
        return list(rows)

    async def one(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        rows = await self.all(sql, params)
        return rows[0] if rows else None

    async def ensure_function(self, name: str, function: Callable[..., object]) -> None:
        """Register a deterministic SQL function on this connection, once.

        sqlite3 decodes a TEXT argument strictly, and a row whose text is not UTF-8 would fail
        the whole statement ("user-defined function raised exception"): callers pass text
        columns as CAST(... AS BLOB), and the function gets them decoded as rows are.
        """
        if name not in self._functions:
            await self._conn.create_function(name, -1, _tolerant_arguments(function), deterministic=True)
            self._functions.add(name)

    def _check_unchanged(self) -> None:
        """After a statement on an immutable open: if the file changed meanwhile, its rows may be torn."""
        if self.info.fingerprint is None or self._same_file():
            return
        self.retired = True
        raise StoreError(
            f"the store at {shown(self.path)} changed while it was being read (the Magnotia app started); "
            "try the call again"
        )

    def _same_file(self) -> bool:
        """Still the file this connection opened, and (immutable) unchanged since."""
        try:
            if identity(self.path) != self.info.identity:
                return False  # the file was replaced or removed
            return self.info.fingerprint is None or fingerprint(self.path) == self.info.fingerprint
        except OSError:
            return False

    def usable(self) -> bool:
        """Whether this connection may be lent again: not retired, and still reading the store's file."""
        return not self.retired and self._same_file()

    async def current(self) -> bool:
        """Whether this connection may be lent, with ``info`` still true of the store.

        Nothing is read but ``PRAGMA data_version`` unless it moved (an immutable open
        never sees a change: ``usable`` compares the file instead).
        """
        if not self.usable():
            return False
        if self.info.fingerprint is not None:
            return True
        try:
            ((version,),) = await self._conn.execute_fetchall("PRAGMA data_version")
            if version == self._data_version:
                return True
            (cookies,) = await self._conn.execute_fetchall(COOKIES)
        except sqlite3.Error:
            return False  # a fresh open says what is wrong
        if tuple(cookies) != self.info.cookies():
            return False  # the schema changed: a fresh open checks it all again
        # Commits since the last lend (rows added, moved to the trash, a VACUUM): same schema.
        self._data_version = version
        self._generation.bump()
        return True

    async def close(self) -> None:
        """Close the connection and end its worker thread.

        The close waits in the worker's queue behind any statement still running, and
        an interrupt only stops a statement that has started: one an interrupted call
        had already queued runs after that interrupt. So interrupt again until the
        close gets its turn, and the thread never outlives the event loop.
        """
        closing = asyncio.ensure_future(self._conn.close())
        for _ in range(_CLOSE_TRIES):
            done, _pending = await asyncio.wait({closing}, timeout=_CLOSE_POLL)
            if done:
                break
            with suppress(Exception):  # the connection may finish closing meanwhile
                await self._conn.interrupt()
        else:
            log.warning(f"a connection to {self.path} did not close in time; its thread may delay exit")
        if closing.done() and not closing.cancelled():
            closing.exception()  # retrieved: a failed close leaves nothing to clean up
