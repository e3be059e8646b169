"""The semantic index: one SQLite file of our own per store, in the user's cache folder, never beside the store.

Its name is a hash of the store's absolute path. It is trusted only when private (check_private), laid out as
ours (_LAYOUT), a SQLite file that passes ``quick_check``, of our application id and format, naming the same store,
with rows that fit their counts; otherwise it is *unusable*: ``index`` rebuilds it, a search goes by words and says
why (docs/search.md). Vectors are int8 with one scale per window. Tables: ``meta``; ``docs``, a row per transcript
(its stamp, date and windows as packed arrays: a 10k-transcript index is 10k rows); ``speakers``, who spoke in which
windows (the store has no index on speakers); ``sources``, each transcript's source. An older index gets the last
two from the next run that updates it (meta ``speakers`` is 1 once every transcript's are in).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import stat
from pathlib import Path

from magnotia_mcp import filemodes

FORMAT = "3"  # stamps in bytes (store.embedded.STAMP)
# Format 2 counted a stamp's sizes in characters: read as it is, and moved to 3 by the next run that updates it
# (build._compare), without embedding. A server of an earlier version, which writes 2, leaves a 3 alone: were both
# to keep one index current, each would embed again every transcript whose stamps differ (a text outside ASCII).
READ = ("2", FORMAT)
APPLICATION_ID = 0x4D474E58  # "MGNX": what PRAGMA application_id holds in every index file this server writes
CACHE_ENV = "MAGNOTIA_MCP_CACHE_DIR"  # where index files go instead of the platform's cache folder

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs (
    id TEXT PRIMARY KEY,
    stamp TEXT NOT NULL,
    created_at TEXT NOT NULL,
    chunks INTEGER NOT NULL,  -- its windows; each array below holds one item per window, in spoken order
    kinds BLOB NOT NULL,      -- uint8: title, spoken, text (search/semantic/chunks.py)
    seqs BLOB NOT NULL,       -- int32 pairs: the first and last segment a spoken window spans (else NO_SEQ)
    scales BLOB NOT NULL,     -- float32: a window's vector is scale * its int8 row
    vectors BLOB NOT NULL     -- int8, chunks rows of dims
);
"""

SPEAKERS = """
CREATE TABLE speakers (
    speaker TEXT NOT NULL,    -- a label as speakers.fold_label gives it
    doc TEXT NOT NULL,        -- a transcript of docs with a segment of theirs with words
    windows BLOB NOT NULL,    -- int32: the places among doc's windows of those holding one (build._spoken)
    PRIMARY KEY (speaker, doc)
) WITHOUT ROWID;
"""

SOURCES = """
CREATE TABLE sources (
    doc TEXT PRIMARY KEY,     -- a transcript of docs whose source is a text in the store
    source TEXT NOT NULL      -- as the store has it: dictation, meeting or file
) WITHOUT ROWID;
"""


DOC_COLUMNS = "id, stamp, created_at, chunks, kinds, seqs, scales, vectors"
# In seqs: a title's or a text's window, which spans no segment, or a seq an int32 cannot hold (the app's are 0, 1,
# 2 ...; a store may hold any integer): such a window cites no segment. Spoken windows are told by their kind, so
# the -1 that marked the first two before also reads right (-1 is a seq a store may hold too).
NO_SEQ = -(2**31)


# What sqlite_master holds in an index of ours (speakers and sources may be missing in an older one), each table's SQL
# compared without its comments and spacing: anything else (a view or a trigger where our tables are, an object we
# never make, a column added) is refused before a row is read. A view named docs would be read without end.
def _plain(sql: str) -> str:
    """SQL as compared: without its comments (to the end of a line) and with single spaces."""
    return " ".join(re.sub(r"--[^\n]*", "", sql).split())


_LAYOUT = {
    ("table", sql.split()[2]): (sql.split()[2], sql.strip())
    for sql in _plain(SCHEMA + SPEAKERS + SOURCES).split(";")
    if sql.strip()
} | {("index", f"sqlite_autoindex_{name}_1"): (name, None) for name in ("meta", "docs")}
# A transcript whose arrays do not hold exactly its count of windows (? is the width): never trusted, since the
# loader sizes its arrays by those counts.
_MISFIT = (
    "SELECT 1 FROM docs WHERE typeof(chunks) != 'integer' OR chunks < 0 OR typeof(kinds) != 'blob'"
    " OR typeof(seqs) != 'blob' OR typeof(scales) != 'blob' OR typeof(vectors) != 'blob' OR length(kinds) != chunks"
    " OR length(seqs) != 8 * chunks OR length(scales) != 4 * chunks OR length(vectors) != chunks * ? LIMIT 1"
)
MAX_DIMS = 1 << 16  # a model's width: 256 for the default, a few thousand for the largest
MARK_LIMIT = 4096  # bytes of a .current mark: its JSON is a few hundred


class Unusable(Exception):
    """The index file cannot be trusted (corrupt, foreign, another store's or format): the message says why."""


class Unsafe(Unusable):
    """Other users could read or replace the index (its folder or a file of it is theirs, or open to them): refused,
    never rebuilt in place; the message says the fix (check_private)."""


def cache_folder() -> Path:
    """Where index files live: $MAGNOTIA_MCP_CACHE_DIR, else the platform's user cache folder for this server."""
    chosen = os.environ.get(CACHE_ENV, "").strip()
    if chosen:
        return Path(chosen).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("com.magnotia.mcp", appauthor=False))


def store_key(store: Path) -> str:
    return str(Path(os.path.abspath(store)))


def beside(store: Path) -> bool:
    """Whether the index would sit in the store's folder or below it (a cache folder set there): refused."""
    folder = Path(os.path.abspath(store)).parent
    return Path(os.path.abspath(location(store))).is_relative_to(folder)


def location(store: Path) -> Path:
    """The index file of the store at this path (which need not exist yet)."""
    digest = hashlib.sha256(store_key(store).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return cache_folder() / "index" / f"{digest}.sqlite3"


def check_private(store: Path) -> None:
    """Raise Unsafe when another user could read or replace the store's index (POSIX): filemodes.private_files_problem
    on its folder, the index and its -wal, -shm and -journal, with the fix. Not the .current mark: it only saves a
    comparison, is trusted only as a small file of this user's (was_current), replaced by a rename (mark_current)."""
    path = location(store)
    try:
        fix, files = f"set ${CACHE_ENV} to a folder of your own", (path, *_companions(store)[:3])
        problem = filemodes.private_files_problem(path.parent, files, "the semantic index", fix)
    except OSError as exc:
        raise Unsafe(f"the semantic index's folder cannot be checked ({exc})") from None
    if problem is not None:
        raise Unsafe(f"the semantic index is not private: {problem}")


def _companions(store: Path) -> tuple[Path, ...]:
    """The files beside the index that belong to it: SQLite's -wal, -shm and -journal, and the .current mark."""
    path = location(store)
    return (Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal"), _mark(store))


def stamp(path: Path) -> tuple[object, ...]:
    """What changes when `magnotia-mcp index` writes the file: equal stamps, the same index.

    An empty -wal does not count: reading the file (our own load) may leave one, and that is no change.
    """
    parts: list[object] = []
    for name in (str(path), f"{path}-wal"):
        try:
            st = os.stat(name)
        except OSError:
            parts.append(None)
            continue
        parts.append((st.st_ino, st.st_size, st.st_mtime_ns) if st.st_size else None)
    return tuple(parts)


def mark_current(store: Path, store_stamp: object, index_stamp: object) -> None:
    """Note, beside the index, that it was current with the store when the store's stamp was store_stamp.

    A server started later then skips checking every transcript's stamp against the store while neither file
    moved since (at 100k transcripts that check reads every text: 5.8 s of a core, on the first search). Best
    effort: where it cannot be written, the next server makes that check.
    """
    text = json.dumps({"store": repr(store_stamp), "index": repr(index_stamp)})
    filemodes.replace_privately(_mark(store), text.encode("utf-8"))


def was_current(store: Path, store_stamp: object, index_stamp: object) -> bool:
    """Whether the last run that brought the index up to date, in any process, left it so with the store and
    the index as their stamps say they are now.

    Read as a mark can only be: a small regular file of this user's that no one else may write, not a link
    (O_NOFOLLOW), not waited on (a FIFO); anything else is not current, and the server checks the index against the
    store instead (and then renames a mark of its own over it).
    """
    try:
        raw, _ = filemodes.read_capped(_mark(store), MARK_LIMIT, _small_file, follow=False)
        mark = json.loads(raw)
    except (OSError, ValueError):
        return False
    return isinstance(mark, dict) and mark == {"store": repr(store_stamp), "index": repr(index_stamp)}


def _small_file(st: os.stat_result) -> None:
    # Ours as mark_current writes it: a mark of another user's (or one others may write) could say current falsely.
    theirs = filemodes.POSIX and (st.st_uid != os.getuid() or st.st_mode & 0o022)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MARK_LIMIT or theirs:
        raise ValueError("not a mark")


def _mark(store: Path) -> Path:
    return Path(f"{location(store)}.current")


def _connect(path: Path, *, mode: str) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + f"?mode={mode}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=5.0)
    conn.execute("PRAGMA trusted_schema = OFF")
    return conn


def _checked(conn: sqlite3.Connection, store: Path) -> dict[str, str]:
    """The meta of a trustworthy index file, or Unusable saying what is wrong with it. Its layout is checked before
    any row is read, and every number the loader sizes an array by (the width, each row's count) before it does."""
    try:
        (app,) = conn.execute("PRAGMA application_id").fetchone()
        if app != APPLICATION_ID:
            raise Unusable("it is not a magnotia-mcp index (another program's file)")
        _check_layout(conn)
        (check,) = conn.execute("PRAGMA quick_check").fetchone()
        if check != "ok":
            raise Unusable(f"it is damaged ({str(check)[:200]})")
        rows = conn.execute("SELECT key, value FROM meta")
        meta = {k: v for k, v in rows if isinstance(k, str) and isinstance(v, str)}  # text only: a blob is no value
        dims = meta.get("dims", "")
        if not (dims.isascii() and dims.isdigit() and len(dims) < 7 and 0 < int(dims) <= MAX_DIMS):
            raise Unusable(f"its vector width ({dims[:20]!r}) is not a number of dimensions")
        if conn.execute(_MISFIT, (int(dims),)).fetchone() is not None:
            raise Unusable("it is damaged (a transcript's arrays do not fit its count of windows)")
    except sqlite3.Error as exc:
        raise Unusable(f"it is not a readable index ({exc})") from None
    if meta.get("format") not in READ:
        raise Unusable(f"it has format {meta.get('format', '')[:20]!r}, this magnotia-mcp writes {FORMAT!r}")
    if meta.get("store") != store_key(store):
        raise Unusable(f"it indexes another store ({meta.get('store', '')[:200]!r})")
    return meta


def _check_layout(conn: sqlite3.Connection) -> None:
    """Unusable unless sqlite_master holds our tables as we make them (_LAYOUT), and nothing else."""
    held = set()
    for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
        shown = f"{str(kind)[:20]} {str(name)[:60]}"
        if (kind, name) not in _LAYOUT:
            raise Unusable(f"it holds a {shown} this magnotia-mcp never makes")
        if _LAYOUT[kind, name] != (table, _plain(sql) if isinstance(sql, str) else sql):
            raise Unusable(f"its {shown} is not as this magnotia-mcp makes it")
        held.add(name)
    for name in ("meta", "docs"):
        if name not in held:
            raise Unusable(f"it has no table {name}")


def open_existing(store: Path, *, readonly: bool = True) -> tuple[sqlite3.Connection, dict[str, str]] | None:
    """The store's index and its meta; None when there is none. Raises Unusable for a file not to trust (Unsafe for
    one other users could read or replace: check_private)."""
    check_private(store)
    path = location(store)
    if not path.is_file():
        return None
    try:
        # rw, not rwc: a file removed since is_file() is not created again, empty, in its place.
        conn = _connect(path, mode="ro" if readonly else "rw")
    except sqlite3.Error as exc:
        raise Unusable(f"it cannot be opened ({exc})") from None
    try:
        return conn, _checked(conn, store)
    except Unusable:
        conn.close()
        raise


def create(store: Path, meta: dict[str, str]) -> sqlite3.Connection:
    """A new, empty index for the store (any file in its place is removed first)."""
    path = location(store)
    filemodes.make_private_folders(path.parent)
    check_private(store)  # the folders just made, and any made by another user meanwhile
    remove(store)
    # Created private before SQLite opens it (its -wal and -shm take the same mode): vectors tell what was said.
    # The umask may narrow 0600 (SQLite must still write it): fchmod sets it whole.
    fd = os.open(path, filemodes.NEW_FILE, 0o600)
    try:
        if filemodes.POSIX:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    conn = _connect(path, mode="rw")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.executescript("BEGIN;" + SCHEMA + SPEAKERS + SOURCES + "COMMIT;")
    rows = {**meta, "format": FORMAT, "store": store_key(store), "speakers": "1"}
    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(rows.items()))
    return conn


def hold_sources(conn: sqlite3.Connection) -> None:
    """Give an index written before it held sources their table, empty (the next run that updates it fills it)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sources'").fetchone() is not None:
        return
    conn.execute("BEGIN IMMEDIATE")  # another run (the command's, a server's) may be adding it too
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sources'").fetchone() is None:
            conn.execute(SOURCES)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def spoken(path: Path, speaker: str, most: int) -> dict[str, bytes] | None:
    """By transcript, the windows (int32 places among its own) that the index at path says speaker (a folded label)
    spoke in; None when they are more than most windows, or it cannot say (an index written before it listed
    speakers, or one gone or unreadable since it was loaded)."""
    try:
        conn = _connect(path, mode="ro")
    except sqlite3.Error:
        return None
    try:
        if conn.execute("SELECT value FROM meta WHERE key = 'speakers'").fetchone() != ("1",):
            return None
        # A lone surrogate has no UTF-8 form: bound as a BLOB, it equals no label (the store's filter finds none).
        raw = speaker.encode("utf-8", "surrogatepass")
        bound: str | bytes = raw
        with contextlib.suppress(UnicodeDecodeError):
            bound = raw.decode("utf-8")
        query = "SELECT coalesce(sum(length(windows)), 0) FROM speakers WHERE speaker = ?"
        if conn.execute(query, (bound,)).fetchone()[0] > 4 * most:
            return None
        rows = conn.execute("SELECT doc, windows FROM speakers WHERE speaker = ?", (bound,)).fetchall()
        return {doc: windows for doc, windows in rows if isinstance(doc, str) and isinstance(windows, bytes)}
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def remove(store: Path) -> bool:
    """Remove the store's index file and its -wal and -shm; True when there was one."""
    path = location(store)
    found = False
    for name in (path, *_companions(store)):
        try:
            name.unlink()
        except FileNotFoundError:
            continue
        found = found or name == path
    return found
