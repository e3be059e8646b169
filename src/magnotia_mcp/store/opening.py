"""Opening the Magnotia store strictly read-only, and checking that it is one.

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

import os
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from magnotia_mcp.errors import StoreError

SCHEMA_VERSION = 1
REQUIRED_TABLES = ("transcripts", "segments", "tasks")

_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_READ_PRAGMAS = frozenset({"data_version", "user_version"})

# Errors that mean "this way of opening cannot work here", not "the file is bad".
_CANTOPEN = 14
_READONLY = 8

Fingerprint = tuple[int, int, int, bool]


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What a successful open found out about the store."""

    user_version: int
    has_fts: bool
    immutable: bool
    has_segment_fts: bool
    identity: tuple[int, int]  # (st_dev, st_ino): a file renamed over the store is another file


def _authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, trigger: str | None) -> int:
    """Allow reads only: the last line of defence if a query ever tried to write."""
    if action in _READ_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_TRANSACTION and arg1 in ("BEGIN", "COMMIT", "ROLLBACK"):
        return sqlite3.SQLITE_OK  # read transactions give multi-query calls one snapshot
    if action == sqlite3.SQLITE_PRAGMA and arg1 in _READ_PRAGMAS and arg2 is None:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master" and trigger is None:
        # FTS5 asks this while connecting its virtual table; the schema table is
        # not writable here anyway (mode=ro, query_only, no writable_schema).
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


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


def identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


def fingerprint(path: Path) -> Fingerprint:
    """What changes when anything writes the store: for connections that cannot see writes."""
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
    ident = (st.st_dev, st.st_ino)
    try:
        conn = _connect(path, immutable=False, busy_timeout=busy_timeout)
        try:
            return conn, _check(conn, path, immutable=False, identity=ident)
        except (StoreError, sqlite3.Error):
            conn.close()
            raise
    except sqlite3.Error as exc:
        if _error_code(exc) not in (_CANTOPEN, _READONLY):
            raise store_error(exc, path) from exc
    # A WAL store in a directory we cannot write: only an immutable open works.
    try:
        conn = _connect(path, immutable=True, busy_timeout=busy_timeout)
        return conn, _check(conn, path, immutable=True, identity=ident)
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc


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
    return StoreInfo(version, "transcripts_fts" in names, immutable, "segments_fts" in names, identity)


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    """A SQLite failure as the StoreError a user can act on."""
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return StoreError(f"the store at {path} is locked by another process; try again in a moment")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return StoreError(f"{path} is not a readable SQLite database ({text}); check --db / MAGNOTIA_DB")
    if "unable to open" in low:
        return StoreError(f"cannot open {path} ({text}); check that this user may read the file and its directory")
    return StoreError(f"could not read the store at {path}: {text}")


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
