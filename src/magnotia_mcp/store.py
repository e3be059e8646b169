"""Opening the Magnotia store strictly read-only, and handing out readers.

Three layers keep the server from ever writing: the ``mode=ro`` (or
``immutable=1``) URI, ``PRAGMA query_only``, and an authorizer that denies
every action but reading. The file is never created: a missing store is an
error the caller can fix, and the next call looks again.

How to open is decided per connection, because the app starts and stops
while the server runs (see docs/sqlite-readonly.md):

* ``mode=ro`` is the normal way and sees the app's new rows as it commits.
* A WAL store on a read-only directory with no ``-wal``/``-shm`` beside it
  (the app is closed; e.g. ``docker -v db:/data:ro``) cannot be opened that
  way, so it is opened ``immutable=1``. Nothing can change such a file while
  it stays like that; the moment a ``-wal`` appears or the file changes, the
  connection is dropped and the next call reopens with ``mode=ro``.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from magnotia_mcp.errors import StoreError

if TYPE_CHECKING:
    import aiosqlite

SCHEMA_VERSION = 1
REQUIRED_TABLES = ("transcripts", "segments", "tasks")

# Authorizer action codes (sqlite3.h); named here so the allow-list reads plainly.
_SQLITE_PRAGMA = 19
_SQLITE_READ = 20
_SQLITE_SELECT = 21
_SQLITE_TRANSACTION = 22
_SQLITE_UPDATE = 23
_SQLITE_FUNCTION = 31
_SQLITE_RECURSIVE = 33
_READ_ACTIONS = frozenset({_SQLITE_READ, _SQLITE_SELECT, _SQLITE_FUNCTION, _SQLITE_RECURSIVE})
_READ_PRAGMAS = frozenset({"data_version", "user_version"})

# Errors that mean "this way of opening cannot work here", not "the file is bad".
_CANTOPEN = 14
_READONLY = 8


def _authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    """Allow reads only: the last line of defence if a query ever tried to write."""
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == _SQLITE_TRANSACTION and arg1 in ("BEGIN", "COMMIT", "ROLLBACK"):
        return sqlite3.SQLITE_OK  # read transactions give multi-query calls one snapshot
    if action == _SQLITE_PRAGMA and arg1 in _READ_PRAGMAS and arg2 is None:
        return sqlite3.SQLITE_OK
    if action == _SQLITE_UPDATE and arg1 == "sqlite_master" and _trigger is None:
        # FTS5 asks this while connecting its virtual table; the schema table is
        # not writable here anyway (mode=ro, query_only, no writable_schema).
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _tolerant_text(raw: bytes) -> str:
    # The app should only store UTF-8, but one bad byte must not make a row unreadable.
    return raw.decode("utf-8", "replace")


def _uri(path: Path, immutable: bool) -> str:
    # Percent-encode so '?', '#' or '%' in a user's path stay part of the path.
    base = "file:" + quote(str(path.absolute()).replace(os.sep, "/"), safe="/:")
    return base + ("?immutable=1" if immutable else "?mode=ro")


def _error_code(exc: sqlite3.Error) -> int:
    code = getattr(exc, "sqlite_errorcode", None)  # Python >= 3.11
    if isinstance(code, int):
        return code & 0xFF
    text = str(exc).lower()
    if "unable to open" in text:
        return _CANTOPEN
    if "readonly" in text or "read-only" in text:
        return _READONLY
    return -1


class StoreInfo:
    """What a successful open found out about the store."""

    __slots__ = ("has_fts", "identity", "immutable", "user_version")

    def __init__(self, user_version: int, has_fts: bool, immutable: bool, identity: tuple[int, int]) -> None:
        self.user_version = user_version
        self.has_fts = has_fts
        self.immutable = immutable
        self.identity = identity


def _identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def _fingerprint(path: Path) -> tuple[int, int, int, bool]:
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns, os.path.exists(str(path) + "-wal"))


def open_readonly(path: Path, busy_timeout: float = 2.0) -> tuple[sqlite3.Connection, StoreInfo]:
    """Open and check the store, read-only, or raise StoreError saying what to do."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise StoreError(
            f"no Magnotia database at {path}; open the Magnotia app once to create it, "
            "or pass --db PATH (or set MAGNOTIA_DB) to point at an existing store"
        ) from None
    except OSError as exc:  # e.g. a directory on the way that this user may not enter
        raise StoreError(
            f"cannot read {path} ({exc.strerror}); check that this user may read the file and its directory"
        ) from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{path} is a directory; --db / MAGNOTIA_DB must name the magnotia.db file inside it")
    identity = (st.st_dev, st.st_ino)
    try:
        conn = _connect(path, immutable=False, busy_timeout=busy_timeout)
        try:
            info = _check(conn, path, immutable=False, identity=identity)
        except StoreError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise exc
        return conn, info
    except sqlite3.Error as exc:
        if _error_code(exc) not in (_CANTOPEN, _READONLY):
            raise _store_error(exc, path) from exc
    # A WAL store in a directory we cannot write: only an immutable open works.
    try:
        conn = _connect(path, immutable=True, busy_timeout=busy_timeout)
        return conn, _check(conn, path, immutable=True, identity=identity)
    except sqlite3.Error as exc:
        raise _store_error(exc, path) from exc


def _connect(path: Path, *, immutable: bool, busy_timeout: float) -> sqlite3.Connection:
    conn = sqlite3.connect(
        _uri(path, immutable),
        uri=True,
        timeout=busy_timeout,
        isolation_level=None,
        check_same_thread=False,
        cached_statements=64,
    )
    conn.execute("PRAGMA query_only = ON")
    conn.execute("PRAGMA trusted_schema = OFF")
    return conn


def _check(conn: sqlite3.Connection, path: Path, *, immutable: bool, identity: tuple[int, int]) -> StoreInfo:
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the store at {path} has schema version {version}, newer than this magnotia-mcp "
            f"understands ({SCHEMA_VERSION}); upgrade magnotia-mcp"
        )
    missing = [t for t in REQUIRED_TABLES if t not in names]
    if missing:
        raise StoreError(
            f"{path} is not a Magnotia store (no {', '.join(missing)} table); "
            "point --db / MAGNOTIA_DB at the magnotia.db the Magnotia app writes"
        )
    conn.set_authorizer(_authorize)
    return StoreInfo(version, "transcripts_fts" in names, immutable, identity)


def _store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return StoreError(f"the store at {path} is locked by another process; try again in a moment")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return StoreError(f"{path} is not a readable SQLite database ({text}); check --db / MAGNOTIA_DB")
    if "unable to open" in low:
        return StoreError(f"cannot open {path} ({text}); check that this user may read the file and its directory")
    return StoreError(f"could not read the store at {path}: {text}")


def _bindable_value(value: Any) -> Any:
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            # An unpaired surrogate (a "\\ud800" escape in the JSON) has no UTF-8 form and
            # cannot be bound as text; as a BLOB it binds, and equals no stored text.
            return value.encode("utf-8", "surrogatepass")
    return value


def _bindable(params: Sequence[Any] | dict[str, Any]) -> Sequence[Any] | dict[str, Any]:
    if isinstance(params, dict):
        return {k: _bindable_value(v) for k, v in params.items()}
    return [_bindable_value(v) for v in params]


class Reader:
    """One read connection, lent to one call at a time."""

    __slots__ = ("_conn", "_functions", "_store", "info", "path")

    def __init__(self, conn: aiosqlite.Connection, info: StoreInfo, path: Path, store: Store) -> None:
        self._conn = conn
        self._functions: set[str] = set()
        self.info = info
        self.path = path
        self._store = store

    @property
    def has_fts(self) -> bool:
        return self.info.has_fts

    async def all(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run one query and return every row; cancelling the caller interrupts SQLite."""
        try:
            try:
                return list(await self._conn.execute_fetchall(sql, _bindable(params)))
            except sqlite3.OperationalError as exc:
                if "decode" not in str(exc) or self._conn.text_factory is _tolerant_text:
                    raise
                # Text that is not UTF-8: from now on decode leniently on this connection
                # (the C default is much faster, so it stays the first try).
                self._conn.text_factory = _tolerant_text
                return list(await self._conn.execute_fetchall(sql, _bindable(params)))
        except asyncio.CancelledError:
            await self._conn.interrupt()
            self._store.mark_interrupted(self)
            raise
        except sqlite3.Error as exc:
            self._store.mark_broken(self)
            raise _store_error(exc, self.path) from exc

    async def ensure_function(self, name: str, function: Callable[..., object]) -> None:
        """Register a deterministic SQL function on this connection, once."""
        if name not in self._functions:
            await self._conn.create_function(name, -1, function, deterministic=True)
            self._functions.add(name)

    async def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Row | None:
        rows = await self.all(sql, params)
        return rows[0] if rows else None


class Store:
    """A small pool of read-only connections, opened on first use and re-checked on each."""

    def __init__(self, path: Path, *, readers: int = 2, busy_timeout: float = 2.0) -> None:
        self.path = path
        self._max = readers
        self._busy_timeout = busy_timeout
        self._idle: list[Reader] = []
        self._open = 0
        self._freed = asyncio.Condition()
        self._discard: set[int] = set()
        self._fingerprints: dict[int, tuple[int, int, int, bool]] = {}
        self._closing: set[asyncio.Task[None]] = set()

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[Reader]:
        reader = await self._acquire()
        try:
            yield reader
        finally:
            await self._release(reader)

    async def _acquire(self) -> Reader:
        async with self._freed:
            while True:
                while self._idle:
                    reader = self._idle.pop()
                    if self._still_valid(reader):
                        return reader
                    self._open -= 1
                    await self._close(reader)
                if self._open < self._max:
                    self._open += 1
                    break
                await self._freed.wait()
        try:
            return await self._new_reader()
        except BaseException:
            async with self._freed:
                self._open -= 1
                self._freed.notify()
            raise

    async def _new_reader(self) -> Reader:
        import aiosqlite

        holder: list[StoreInfo] = []

        def connector() -> sqlite3.Connection:
            conn, info = open_readonly(self.path, self._busy_timeout)
            conn.row_factory = sqlite3.Row
            holder.append(info)
            return conn

        conn = aiosqlite.Connection(connector, 64)
        conn._thread.daemon = True  # a stuck query must never keep the process alive at exit
        await conn
        reader = Reader(conn, holder[0], self.path, self)
        if holder[0].immutable:
            self._fingerprints[id(reader)] = _fingerprint(self.path)
        return reader

    def _still_valid(self, reader: Reader) -> bool:
        if id(reader) in self._discard:
            return False
        try:
            if _identity(self.path) != reader.info.identity:
                return False  # the file was replaced or removed
            if reader.info.immutable:
                return _fingerprint(self.path) == self._fingerprints.get(id(reader))
        except OSError:
            return False
        return True

    def mark_broken(self, reader: Reader) -> None:
        self._discard.add(id(reader))

    def mark_interrupted(self, reader: Reader) -> None:
        # The interrupted statement may still be unwinding in the worker thread;
        # a fresh connection is cheaper than reasoning about that race.
        self._discard.add(id(reader))

    async def _release(self, reader: Reader) -> None:
        async with self._freed:
            if id(reader) in self._discard:
                self._open -= 1
                closing = asyncio.get_running_loop().create_task(self._close(reader))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)
            else:
                self._idle.append(reader)
            self._freed.notify()

    async def _close(self, reader: Reader) -> None:
        self._discard.discard(id(reader))
        self._fingerprints.pop(id(reader), None)
        with suppress(Exception, asyncio.TimeoutError):
            await asyncio.wait_for(reader._conn.close(), timeout=2.0)

    async def close(self) -> None:
        """Close every connection, waiting for ones still unwinding an interrupted query.

        A worker thread that finishes after the event loop has closed would die
        with a traceback on stderr, so nothing may be left running.
        """
        idle, self._idle = self._idle, []
        for reader in idle:
            await self._close(reader)
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=5.0)
        self._open = 0


def describe(path: Path, busy_timeout: float = 2.0) -> dict[str, Any]:
    """Facts about the store for ``magnotia-mcp doctor``: raises StoreError when unreadable."""
    conn, info = open_readonly(path, busy_timeout)
    try:
        count: Callable[[str], int] = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "path": str(path),
            "schema_version": info.user_version,
            "open_mode": "immutable (read-only directory, app not running)" if info.immutable else "read-only",
            "full_text_index": info.has_fts,
            "transcripts": count("SELECT count(*) FROM transcripts WHERE deleted_at IS NULL"),
            "in_trash": count("SELECT count(*) FROM transcripts WHERE deleted_at IS NOT NULL"),
            "tasks": count("SELECT count(*) FROM tasks"),
        }
    finally:
        conn.close()
