"""A store's semantic index read into memory: every window's int8 row and scale, by transcript, and what it cites.

Read once per index file (nearest loads it on a thread of its own) into arrays sized first: the memory is the
vectors' own bytes and a few bytes a window. A file whose rows do not add up is never trusted.

Rows past IN_MEMORY (the vectors: 264 MB of the 100k store's 303 MiB index) go, on Linux, in a file of our own
beside the index that no name reaches (_RowFile), mapped: the page cache holds them, and each search hands back the
pages it read (``Loaded.release``, from ``scoring`` as it goes). The server's resident memory is then its own and a
few blocks', not the rows': at 100k, 190 MiB at its peak, not 412. The kernel may drop those pages under pressure
and read them back from the file, where memory of the process's own would be swapped. Mapping them again costs a
search at 100k ~1 ms (3.3x the search by words becomes ~3.45x); smaller indexes stay in memory (docs/search.md).
"""

from __future__ import annotations

import mmap
import os
import sqlite3
import sys
import tempfile
from array import array
from collections.abc import Collection
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from magnotia_mcp import log
from magnotia_mcp.search.semantic import indexfile, scoring
from magnotia_mcp.search.semantic.chunks import SPOKEN, TEXT, TITLE
from magnotia_mcp.search.semantic.found import STALE, Chunk, mark

DAMAGED = "the semantic index is damaged (arrays of the wrong size); run `magnotia-mcp index`"


class Unavailable(Exception):
    """The index cannot be used now: the message says why and what to do (the search goes on by words)."""


class Loaded:
    """One index in memory: every window's int8 row and scale, grouped by transcript, and the segments it spans.

    Read row by row into arrays sized first (``read``): the memory is the vectors' own bytes and a few
    bytes a window, never the file's rows and a joined copy of them at once.
    """

    def __init__(self, path: Path, stamp: tuple[object, ...], meta: dict[str, str], windows: int) -> None:
        self.path = path
        self.stamp = stamp
        self.meta = meta
        self.dims = int(meta.get("dims", "0"))
        self.complete = meta.get("complete") == "1"
        self.covered = int(meta.get("covered", "0"))
        self.docs: list[str] = []
        self.counts: list[int] = []
        self.marks = array("q")  # each transcript's mark (found.mark) when it was embedded: 8 bytes, not an int's 32
        self.kinds = np.empty(windows, dtype=np.uint8)
        self.seqs = np.empty((windows, 2), dtype=np.int32)
        self.scales = np.empty(windows, dtype=np.float32)
        self._file = _row_file(windows * self.dims, path.parent)  # the rows' file while they are written (_RowFile)
        self.vectors = np.empty((0 if self._file else windows, self.dims), dtype=np.int8)
        self._mapping: mmap.mmap | None = None
        self.starts = np.zeros(0, dtype=np.int64)
        self.ends = np.zeros(0, dtype=np.int64)
        self._created: list[bytes] = []
        self.created = np.zeros(0, dtype="S1")  # each transcript's created_at as the store's text, for time filters
        self.undated = np.zeros(0, dtype=np.bool_)  # those whose created_at compares otherwise (passing)
        self._sources: list[bytes] = []
        # Each transcript's source, b"" where the index holds none or one no search filters by (passing): any other
        # value, held, would widen the array to its size for every transcript.
        self.sources = np.zeros(0, dtype="S1")
        self.filled = 0  # windows added so far
        self._at: dict[str, int] | None = None  # each doc's place in docs (positions)

    def add(self, row: tuple[Any, ...]) -> None:
        """One transcript's windows, after those already added; raises Unavailable when its arrays do not fit."""
        at = self.filled
        if not _fits(row, self.dims) or at + row[1] > len(self.kinds):
            raise Unavailable(DAMAGED)
        doc, n, kinds, seqs, scales, vectors, stamp, created, source = row
        self.kinds[at : at + n] = np.frombuffer(kinds, dtype=np.uint8)
        self.seqs[at : at + n] = np.frombuffer(seqs, dtype=np.int32).reshape(n, 2)
        self.scales[at : at + n] = np.frombuffer(scales, dtype=np.float32)
        if self._file is not None:
            self._file.write(vectors)
        else:
            self.vectors[at : at + n] = np.frombuffer(vectors, dtype=np.int8).reshape(n, self.dims)
        self.docs.append(str(doc))
        self.counts.append(n)
        self.marks.append(_mark(stamp))
        self._created.append(_dated(created))
        self._sources.append(_SOURCES.get(source, b"") if isinstance(source, str) else b"")
        self.filled = at + n

    def done(self) -> Loaded:
        """Every transcript added: where each one's windows start; raises Unavailable when some are missing."""
        if self.filled != len(self.kinds):
            raise Unavailable(DAMAGED)
        counts = np.asarray(self.counts, dtype=np.int64)
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if self.counts else counts
        self.ends = np.cumsum(counts).astype(np.int64)
        self.counts = []  # in starts and ends now
        self.created = np.array(self._created, dtype=np.bytes_)  # as wide as the longest: 24 bytes for the app's
        self.undated = self.created == b""
        self.sources, self._created, self._sources = np.array(self._sources, dtype=np.bytes_), [], []
        if self._file is not None:
            self._mapping = self._file.mapped()
            self.vectors = np.frombuffer(self._mapping, dtype=np.int8).reshape(-1, self.dims)
            self._file = None
        self.vectors.flags.writeable = False
        return self

    @property
    def mapped(self) -> bool:
        """Whether the rows are mapped from a file (_RowFile), their pages handed back as they are read."""
        return self._mapping is not None

    def release(self, lo: int = 0, hi: int | None = None) -> None:
        """Hand back the pages of rows lo:hi (all, by default) when they are mapped: the page cache keeps them, and
        a later read maps them again. A page shared with rows outside is handed back too: it is read back alike."""
        if self._mapping is None:
            return
        start = lo * self.dims // PAGE * PAGE
        end = len(self._mapping) if hi is None else min(len(self._mapping), hi * self.dims)
        if end > start:
            self._mapping.madvise(mmap.MADV_DONTNEED, start, end - start)

    def positions(self, ids: Collection[str]) -> NDArray[np.intp]:
        """Where the transcripts of ids are in docs, ascending; those the index does not hold are left out."""
        at = self._places()
        found = np.array([at.get(d, -1) for d in ids], dtype=np.intp)
        return np.unique(found[found >= 0])

    def part(self, windows: dict[str, bytes]) -> Loaded:
        """Some windows of some transcripts (by id: int32 places among its windows) as an index of their own: a
        search restricted to a speaker scores only the windows they spoke in. Ids it does not hold, and places
        past a transcript's windows (the file may have moved on since this index was read), are left out."""
        at = self._places()
        docs = [doc for doc, blob in windows.items() if doc in at and len(blob) % 4 == 0]
        held = np.fromiter((at[doc] for doc in docs), dtype=np.int64, count=len(docs))
        order = np.argsort(held, kind="stable")  # in docs' order: ties between equal scores break as in the whole
        blobs = [windows[docs[i]] for i in order.tolist()]
        owner = np.repeat(held[order], [len(blob) // 4 for blob in blobs])
        places = np.frombuffer(b"".join(blobs), dtype=np.int32).astype(np.int64)
        fits = (places >= 0) & (places < (self.ends - self.starts)[owner])
        owner, rows = owner[fits], self.starts[owner[fits]] + places[fits]
        # owner ascends: each transcript's windows are one run of it (np.unique would sort them again).
        first = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1]))) if owner.size else owner
        kept, counts = owner[first], np.diff(np.append(first, owner.size))
        part = Loaded(self.path, self.stamp, self.meta, 0)
        part.kinds, part.scales = np.take(self.kinds, rows), np.take(self.scales, rows)
        part.seqs = np.take(self.seqs, rows, axis=0)
        part.vectors = np.empty((len(rows), self.dims), dtype=np.int8)
        for lo, hi in scoring.gathered(rows, max(1, len(rows)), self.dims, self):  # their pages handed back as read
            np.take(self.vectors, rows[lo:hi], axis=0, out=part.vectors[lo:hi])
        part.docs = [self.docs[k] for k in kept.tolist()]
        part.marks = array("q", (self.marks[k] for k in kept.tolist()))
        part.counts, part.filled = counts.tolist(), len(rows)
        part = part.done()
        part.created, part.undated = np.take(self.created, kept), np.take(self.undated, kept)
        part.sources = np.take(self.sources, kept)
        return part

    def _places(self) -> dict[str, int]:
        """Each doc's place in docs: built by the first search that asks (a filtered one), then kept (~6 MiB at
        100k)."""
        if self._at is None:
            self._at = {doc: k for k, doc in enumerate(self.docs)}
        return self._at

    def cite(self, i: int, lo: int, score: float) -> Chunk:
        """Row i, of the transcript whose rows start at lo, as a chunk to cite with score."""
        first, last = (int(v) for v in self.seqs[i])
        kind = int(self.kinds[i])
        # A text's pieces follow its title, if it has one (chunks.chunks): row i is piece i - lo, less the title.
        piece = i - lo - int(self.kinds[lo] == TITLE) if kind == TEXT else None
        if kind != SPOKEN or indexfile.NO_SEQ in (first, last):  # by its kind: a store's seq may be -1, or -3
            return Chunk(score, kind, None, None, piece)
        return Chunk(score, kind, first, last, piece)


Filters = tuple["str | None", "str | None", "str | None"]  # a search's since, until and source
UNFILTERED: Filters = (None, None, None)


def passing(index: Loaded, filters: Filters) -> NDArray[np.intp] | None:
    """Where in docs the transcripts are that may pass a search's filters (None: all may). Those whose created_at,
    compared as SQLite compares the store's text, falls at or after since and before until, or cannot be compared
    here (none, a number, a blob, a long text); and whose source is source, or not held. The store's word decides
    for those the index cannot judge, and after it: the index's word can leave one out, never let one in."""
    since, until, source = filters
    if filters == UNFILTERED:
        return None
    keep = np.ones(len(index.created), dtype=np.bool_)
    if since is not None:
        keep &= index.created >= since.encode("utf-8", "surrogateescape")
    if until is not None:
        keep &= index.created < until.encode("utf-8", "surrogateescape")
    keep |= index.undated
    if source is not None:
        keep &= (index.sources == source.encode("utf-8", "surrogateescape")) | (index.sources == b"")
    return np.flatnonzero(keep)


PAGE = mmap.PAGESIZE
WRITE = 16 << 20  # bytes of rows written to their file at a time


# Rows held in the process's own memory up to this many MiB (about 50k transcripts at the test model's 64 dims, 12k
# at the real one's 256); a user may choose otherwise ($MAGNOTIA_MCP_INDEX_MEMORY_MIB: 0 maps every index).
IN_MEMORY_ENV = "MAGNOTIA_MCP_INDEX_MEMORY_MIB"
IN_MEMORY = 128


def in_memory() -> int:
    """The bytes of rows an index may hold in the process's own memory: $MAGNOTIA_MCP_INDEX_MEMORY_MIB, else
    IN_MEMORY (a value that is not a whole number of MiB is said on stderr, and the default holds)."""
    given = os.environ.get(IN_MEMORY_ENV, "").strip()
    if given.isdigit():
        return int(given) << 20
    if given:
        log.warning(f"${IN_MEMORY_ENV}={given!r} is not a whole number of MiB; using {IN_MEMORY}")
    return IN_MEMORY << 20


class _RowFile:
    """The rows of an index past in_memory(), in an unnamed file in the index's folder (tempfile.TemporaryFile: an
    O_TMPFILE on Linux, gone when the server ends), written WRITE bytes at a time and then mapped read-only.

    Written with pwrite, not through the mapping: the page cache then holds them in large folios, which a scan maps
    2 MiB a fault (the scan of 4.1M rows handed back block by block: 26.6 ms against 35.6 written through the
    mapping, on two busy threads)."""

    def __init__(self, file: IO[bytes], size: int) -> None:
        self.file, self.size, self.at, self.pending = file, size, 0, bytearray()

    def write(self, rows: bytes) -> None:
        self.pending += rows
        if len(self.pending) >= WRITE:
            self._flush()

    def _flush(self) -> None:
        view = memoryview(self.pending)
        while view:
            wrote = os.pwrite(self.file.fileno(), view, self.at)
            self.at, view = self.at + wrote, view[wrote:]
        del view
        self.pending.clear()

    def mapped(self) -> mmap.mmap:
        """The rows written, mapped read-only and shared (a page handed back is read back from the file)."""
        self._flush()
        try:
            return mmap.mmap(self.file.fileno(), self.size, prot=mmap.PROT_READ)
        finally:
            self.file.close()  # the mapping holds the file open, and no name reaches it


def _row_file(size: int, folder: Path) -> _RowFile | None:
    """A file for rows of size bytes when they are past in_memory(), on Linux (where posix_fallocate and
    MADV_DONTNEED are); None to hold them in the process's own memory (as also on Windows and macOS, and where the
    folder is read-only or full)."""
    if not size or size <= in_memory() or sys.platform != "linux" or not hasattr(os, "posix_fallocate"):
        return None
    try:
        file = tempfile.TemporaryFile(dir=folder, prefix=".rows-")  # noqa: SIM115 - kept open by _RowFile until mapped
    except OSError:
        return None
    try:  # the disk's room taken now: a file that could not grow would fail a write, or fault (SIGBUS) when read
        os.posix_fallocate(file.fileno(), 0, size)
    except OSError:
        file.close()
        return None
    return _RowFile(file, size)


def read(conn: sqlite3.Connection, path: Path, stamp: tuple[object, ...], meta: dict[str, str], dims: int) -> Loaded:
    """The index open on conn (its meta read), in one snapshot; raises Unavailable when its rows do not add up."""
    conn.execute("BEGIN")  # one snapshot: the count, the sum and the rows agree
    (covered,) = conn.execute("SELECT count(*) FROM docs").fetchone()
    # The arrays are sized from the windows the rows claim, and only when their vectors' bytes say the same.
    windows, held = conn.execute(
        "SELECT coalesce(sum(chunks), 0), coalesce(sum(length(vectors)), 0) FROM docs WHERE chunks > 0"
    ).fetchone()
    if not isinstance(windows, int) or windows < 0 or held != windows * dims:
        raise Unavailable(DAMAGED)
    index = Loaded(path, stamp, {**meta, "covered": str(covered)}, windows)
    held = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sources'").fetchone()
    source = "(SELECT s.source FROM sources s WHERE s.doc = d.id)" if held else "NULL"  # none in an older index
    columns = f"d.id, d.chunks, d.kinds, d.seqs, d.scales, d.vectors, d.stamp, d.created_at, {source}"
    for row in conn.execute(f"SELECT {columns} FROM docs d WHERE d.chunks > 0 ORDER BY d.id"):
        index.add(row)
    conn.execute("COMMIT")
    return index.done()


def _mark(stamp: object) -> int:
    """A transcript's mark (found.mark) from the stamp the index holds for it (build._STAMP:
    ``updated_at|title|raw|formatted|segments:sizes``); STALE for one it cannot read."""
    if not isinstance(stamp, str):
        return STALE
    parts = stamp.rsplit("|", 4)  # from the right: updated_at is the app's text, and may hold a "|"
    said = parts[-1].split(":", 1)[0]
    if len(parts) != 5 or not (said.isascii() and said.isdigit() and len(said) < 19):  # what int() reads, in int64
        return STALE
    return mark(parts[0], parts[3] != "-1", int(said))  # a formatted text's length, or -1 for none


# Bytes of a created_at kept for time filters: an RFC 3339 time with nanoseconds and an offset is 35.
DATED = 40


def _dated(created: object) -> bytes:
    """A transcript's created_at as the index holds it, in the form passing compares; b"" for one that would not
    compare as SQLite compares the store's (none, a number the index holds as text, a blob, or past DATED bytes)."""
    if not isinstance(created, str) or not created:
        return b""
    raw = created.encode("utf-8", "surrogateescape")
    if len(raw) > DATED:
        return b""
    try:
        float(created)  # a number in the store (SQLite orders numbers before any text), held here as text
    except ValueError:
        return raw
    return b""


# The sources a search filters by (tools.schema.SOURCES), as the index's array holds them.
_SOURCES = {source: source.encode() for source in ("dictation", "meeting", "file")}


def _fits(row: tuple[Any, ...], dims: int) -> bool:
    """A transcript's packed arrays hold exactly its windows' items (a damaged or foreign row does not)."""
    _, n, kinds, seqs, scales, vectors, *_ = row
    blobs = (kinds, seqs, scales, vectors)
    if not isinstance(n, int) or n <= 0 or not all(isinstance(b, bytes) for b in blobs):
        return False
    return (len(kinds), len(seqs), len(scales), len(vectors)) == (n, 8 * n, 4 * n, n * dims)
