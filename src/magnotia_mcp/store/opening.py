"""Opening the Magnotia store strictly read-only, and checking that it is one.

Three layers keep the server from ever writing: the ``mode=ro`` (or
``immutable=1``) URI, ``PRAGMA query_only``, and an authorizer that denies
every action but reading. The file is never created: a missing store is an
error the caller can fix, and the next call looks again.

How to open is decided per connection, because the app starts and stops
while the server runs (see docs/sqlite-readonly.md):

* A WAL store with no ``-wal`` beside it (the app is closed) is opened
  ``immutable=1``: ``mode=ro`` would create ``-wal``/``-shm`` in a writable
  folder and leave them there, and cannot open at all on a read-only one
  (``docker -v db:/data:ro``). Nothing changes such a file while it stays like
  that; the moment a ``-wal`` appears or the file changes, the pool drops the
  connection and the next call reopens (``fingerprint``).
* Otherwise ``mode=ro``: it sees the app's rows as it commits them.

What a connection learnt at open (``StoreInfo``) holds until SQLite says the
file changed: the pool re-reads the schema cookie and ``user_version`` when
``PRAGMA data_version`` moves, and reopens when they differ (``cookies``).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from magnotia_mcp.errors import StoreError
from magnotia_mcp.filemodes import kind

SCHEMA_VERSION = 1
REQUIRED_TABLES = ("transcripts", "segments", "tasks")

_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_READ_PRAGMAS = frozenset({"data_version", "schema_version", "user_version"})

# Errors that mean "this way of opening cannot work here", not "the file is bad".
_CANTOPEN = 14
_READONLY = 8

Fingerprint = tuple[int, int, int, bool]


# The schema cookie and user_version, read together: a change to either means the facts must be re-read.
COOKIES = "SELECT schema_version, user_version FROM pragma_schema_version(), pragma_user_version()"


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What a successful open found out about the store, all read in one snapshot."""

    user_version: int
    has_fts: bool
    immutable: bool
    has_segment_fts: bool
    identity: tuple[int, int]  # (st_dev, st_ino): a file renamed over the store is another file
    schema_cookie: int = 0  # PRAGMA schema_version: moves with every change to the schema
    data_version: int = 0  # this connection's PRAGMA data_version when the facts were read
    # For an immutable open, the file as it was before opening: any change since is seen.
    fingerprint: Fingerprint | None = None

    def cookies(self) -> tuple[int, int]:
        """What ``COOKIES`` read when these facts were found."""
        return (self.schema_cookie, self.user_version)


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


def shown(path: Path | str) -> str:
    """A path as messages name it: its bytes read as UTF-8.

    Under an ASCII locale Python keeps a non-ASCII path's bytes as surrogate escapes,
    which cannot be written as UTF-8: the bytes are what the user's folder is called.
    """
    return os.fsencode(path).decode("utf-8", "replace")


def _uri(path: Path, immutable: bool) -> str:
    # Percent-encode so '?', '#' or '%' in a user's path stay part of the path; the path's
    # bytes, not its text, so that a name the locale cannot decode still opens.
    raw = os.fsencode(path.absolute()).replace(os.sep.encode(), b"/")
    base = "file:" + quote(raw, safe="/:")
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


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)

# The start of the WAL index (-shm): its header holds a counter the app's every commit moves.
_WAL_INDEX_HEADER = 48


def stamp(path: Path) -> tuple[object, ...]:
    """What the store's files look like now: equal stamps mean no commit happened in between.

    A commit writes the -wal and moves the WAL index header in the -shm; a checkpoint
    or the app closing changes the main file or removes them; a rename changes the
    inode. Reading the header is a plain read of a file SQLite maps: it changes nothing.
    """
    parts: list[object] = []
    for name in (str(path), str(path) + "-wal"):
        try:
            st = os.stat(name)
            parts.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            parts.append(None)
    parts.append(_read_head(str(path) + "-shm", _WAL_INDEX_HEADER))
    return tuple(parts)


def _read_head(name: str, size: int) -> bytes | None:
    """The first size bytes of a regular file; None for anything else or on any error.

    Opened non-blocking: a FIFO planted there would otherwise wait for a writer forever
    (and this runs on the event loop). Only a regular file is read.
    """
    try:
        fd = os.open(name, _READ_FLAGS)
    except OSError:
        return None
    try:
        return os.read(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _closed_wal_store(path: Path) -> bool:
    """A store in WAL mode with no -wal beside it: its app is closed and the file holds every commit."""
    header = _read_head(str(path), 20)
    if header is None:
        return False  # the ordinary open says what is wrong
    # Bytes 18-19 of the header are the write and read versions: 2 means WAL.
    return header[18:20] == b"\x02\x02" and not os.path.exists(str(path) + "-wal")


def open_readonly(path: Path, busy_timeout: float = 2.0) -> tuple[sqlite3.Connection, StoreInfo]:
    """Open and check the store, read-only, or raise StoreError saying what to do."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise StoreError(
            f"no Magnotia database at {shown(path)}; open the Magnotia app once to create it, "
            "or pass --db PATH (or set MAGNOTIA_DB) to point at an existing store"
        ) from None
    except OSError as exc:  # e.g. a directory on the way that this user may not enter
        raise StoreError(
            f"cannot read {shown(path)} ({exc.strerror}); check that this user may read the file and its directory"
            + (container_user_hint() if exc.errno in (errno.EACCES, errno.EPERM) else "")
        ) from None
    if stat.S_ISDIR(st.st_mode):
        raise StoreError(f"{shown(path)} is a directory; --db / MAGNOTIA_DB must name the magnotia.db file inside it")
    if not stat.S_ISREG(st.st_mode):
        # SQLite would open a FIFO and wait for a writer forever; a device or socket is no store either.
        raise StoreError(
            f"{shown(path)} is not a regular file ({kind(st.st_mode)}); --db / MAGNOTIA_DB must name the "
            "magnotia.db file the Magnotia app writes"
        )
    ident = (st.st_dev, st.st_ino)
    if not _closed_wal_store(path):
        try:
            return _open(path, ident, None, busy_timeout)
        except sqlite3.Error as exc:
            if _error_code(exc) not in (_CANTOPEN, _READONLY):
                raise store_error(exc, path) from exc
        # mode=ro cannot open here (a directory we cannot write): only an immutable open works.
    try:
        # Taken before opening, so that a change after this look is seen, not taken as the baseline.
        return _open(path, ident, fingerprint(path), busy_timeout)
    except sqlite3.Error as exc:
        raise store_error(exc, path) from exc
    except OSError as exc:  # the file went away between the looks
        raise StoreError(f"could not read the store at {shown(path)}: {exc.strerror}") from None


def _open(
    path: Path, ident: tuple[int, int], immutable: Fingerprint | None, busy_timeout: float
) -> tuple[sqlite3.Connection, StoreInfo]:
    """Open (immutable when given the file's fingerprint) and check; the connection is closed on failure."""
    conn = _connect(path, immutable=immutable is not None, busy_timeout=busy_timeout)
    try:
        return conn, _check(conn, path, identity=ident, fingerprint=immutable)
    except (StoreError, sqlite3.Error):
        conn.close()
        raise


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


def _check(
    conn: sqlite3.Connection, path: Path, *, identity: tuple[int, int], fingerprint: Fingerprint | None
) -> StoreInfo:
    # One read transaction: the facts, the cookies and data_version describe the same snapshot.
    conn.execute("BEGIN")
    try:
        (data_version,) = conn.execute("PRAGMA data_version").fetchone()
        cookie, version = conn.execute(COOKIES).fetchone()
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")  # never left open: an open read transaction would pin an old snapshot
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the store at {shown(path)} has schema version {version}, newer than this magnotia-mcp "
            f"understands ({SCHEMA_VERSION}); upgrade magnotia-mcp"
        )
    missing = [t for t in REQUIRED_TABLES if t not in names]
    if missing:
        raise StoreError(
            f"{shown(path)} is not a Magnotia store (no {', '.join(missing)} table); "
            "point --db / MAGNOTIA_DB at the magnotia.db the Magnotia app writes"
        )
    conn.set_authorizer(_authorize)
    return StoreInfo(
        user_version=version,
        has_fts="transcripts_fts" in names,
        immutable=fingerprint is not None,
        has_segment_fts="segments_fts" in names,
        identity=identity,
        schema_cookie=cookie,
        data_version=data_version,
        fingerprint=fingerprint,
    )


# Set by the Dockerfile: the server runs in the image, as a user that is not the one who owns the store.
IN_CONTAINER_ENV = "MAGNOTIA_MCP_IN_CONTAINER"


def container_user_hint() -> str:
    """For a permission error inside the image: which user the server is, and how to run it as the store's owner."""
    if os.environ.get(IN_CONTAINER_ENV) != "1" or not hasattr(os, "getuid"):
        return ""
    return (
        f". This server runs in a container as uid:gid {os.getuid()}:{os.getgid()}, which may not read your "
        'store folder: add --user "$(id -u):$(id -g)" to `docker run` (or `podman run`) so that it runs as you'
    )


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    """A SQLite failure as the StoreError a user can act on."""
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return StoreError(f"the store at {shown(path)} is locked by another process; try again in a moment")
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return StoreError(f"{shown(path)} is not a readable SQLite database ({text}); check --db / MAGNOTIA_DB")
    if "unable to open" in low:
        denied = os.path.exists(path) and not os.access(path, os.R_OK)
        return StoreError(
            f"cannot open {shown(path)} ({text}); check that this user may read the file and its directory"
            + (container_user_hint() if denied else "")
        )
    return StoreError(f"could not read the store at {shown(path)}: {text}")


def describe(path: Path, busy_timeout: float = 2.0) -> dict[str, Any]:
    """Facts about the store for ``magnotia-mcp doctor``: raises StoreError when unreadable."""
    conn, info = open_readonly(path, busy_timeout)
    try:
        count: Callable[[str], int] = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "path": str(path),
            "schema_version": info.user_version,
            "open_mode": "immutable (the app is not running)" if info.immutable else "read-only",
            "full_text_index": info.has_fts,
            "transcripts": count("SELECT count(*) FROM transcripts WHERE deleted_at IS NULL"),
            "in_trash": count("SELECT count(*) FROM transcripts WHERE deleted_at IS NOT NULL"),
            "tasks": count("SELECT count(*) FROM tasks"),
        }
    finally:
        conn.close()
