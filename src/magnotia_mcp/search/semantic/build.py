"""Bring a store's semantic index up to date: embed what is new or edited, forget what was trashed or purged.

Each transcript is compared by a *stamp* (its ``updated_at`` and the sizes of what is embedded:
store.embedded), read in the same snapshot as its text, so an edit made while indexing is seen next time. Work is
committed a batch of transcripts at a time, newest first: an interrupted run keeps every batch it
finished, and the next run goes on from there. A transcript in the trash is never embedded, and
one moved to the trash since the last run loses its vectors here. Its ``created_at`` and source, which no stamp
holds, are compared too, and brought current without embedding it again (a meeting redated, an index written
before it held sources).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from magnotia_mcp.search.semantic import indexfile
from magnotia_mcp.search.semantic.chunks import Segment, chunks, segment
from magnotia_mcp.search.semantic.model import StaticModel, fingerprint
from magnotia_mcp.search.speakers import fold_label
from magnotia_mcp.store import embedded
from magnotia_mcp.store.opening import open_readonly
from magnotia_mcp.store.opening import stamp as store_stamp

BATCH = 16  # transcripts per transaction: a meeting is ~100 chunks; an interrupt loses at most one batch
LISTED = 500  # transcripts whose speakers an older index is given at a time (_list_speakers)

_HELD = "SELECT d.id, d.stamp, d.created_at, s.source FROM docs d LEFT JOIN sources s ON s.doc = d.id"


@dataclass
class Report:
    """What one run did, for the command's last line and for doctor."""

    rebuilt: str | None = None  # why the index was started afresh, if it was
    live: int = 0
    embedded: int = 0
    removed: int = 0
    chunks: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    kept: int = field(default=0)  # transcripts already up to date
    moved: int = 0  # of those, how many had their created_at or source brought current (_compare)
    restamped: int = 0  # of those, how many had their stamp in characters moved to bytes (_compare)
    complete: bool = False  # the index was complete before this run (then a run with nothing to do writes nothing)
    current: bool = False  # the run ended with the index current with the store as it was when the run began
    listed: int | None = None  # transcripts given the list of who spoke where, when the index had none (_list_speakers)


def quantized(vectors: NDArray[np.float32]) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
    """The rows as scales and int8 rows: row ≈ scale * int8 row (a zero row keeps scale 1)."""
    peaks = np.abs(vectors).max(axis=1) if len(vectors) else np.zeros(0, np.float32)
    scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
    return scales, np.round(vectors / scales[:, None]).astype(np.int8)


def describe(folder: Path, model: StaticModel) -> dict[str, str]:
    """What an index records of the model it is built with (``update``'s meta): name, folder, sha256, width."""
    return {
        "model_name": folder.name,
        "model_path": str(folder),
        "model_sha256": fingerprint(folder),
        "dims": str(model.dims),
    }


def _open_index(store: Path, meta: dict[str, str], report: Report, rebuild: bool) -> sqlite3.Connection:
    """The store's index, to update; a new one where there is none to trust (Unusable instead, unless rebuild)."""
    try:
        found = indexfile.open_existing(store, readonly=False)
    except indexfile.Unsafe:
        raise  # others could read or replace what would be built there: never rebuilt
    except indexfile.Unusable as exc:
        if not rebuild:
            raise
        report.rebuilt = f"the old index could not be trusted: {exc}"
        return indexfile.create(store, meta)
    if found is None:
        if not rebuild:
            raise indexfile.Unusable("it is gone")
        return indexfile.create(store, meta)
    conn, old = found
    indexfile.hold_sources(conn)  # an index from before they were held gets their table, empty: this run fills it
    if old.get("model_sha256") != meta["model_sha256"]:
        conn.close()
        if not rebuild:
            raise indexfile.Unusable(f"it was built with another model ({old.get('model_name', '?')})")
        report.rebuilt = f"it was built with another model ({old.get('model_name', '?')})"
        return indexfile.create(store, meta)
    if old["dims"] != meta["dims"]:  # indexfile checked it is a width: not this model's
        conn.close()
        why = f"it holds vectors of {old['dims']} dimensions where the model gives {meta['dims']}"
        if not rebuild:
            raise indexfile.Unusable(why)
        report.rebuilt = why
        return indexfile.create(store, meta)
    if old.get("model_path") != meta["model_path"]:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'model_path'", (meta["model_path"],))
    report.complete = old.get("complete") == "1"
    return conn


def _compare(
    live: Iterable[tuple[Any, ...]], index: sqlite3.Connection
) -> tuple[list[str], list[tuple[str, Any, Any]], list[str], list[tuple[str, str]], int]:
    """What a run has to do, from the store's live transcripts (id, stamp, created_at, source), read one at a time:
    those to embed (a stamp the index does not hold), newest first; (id, created_at, source) of those whose embedded
    content it holds but not their date or source, to write again without embedding (a meeting redated, an index
    that held no sources); those it holds that are gone; (stamp, id) of those whose stamp it holds in characters
    (the rows carry it as a fifth item: embedded.live's before), to move to bytes without embedding; and how many
    are live. Only the index's side is held: at 100k a run with nothing to do peaked 68 MiB over its start with both
    sides in dicts, 43 now (devkit.refresh_cost)."""
    held = {row[0]: row[1:] for row in index.execute(_HELD)}
    todo: list[tuple[str, str]] = []
    moved = []
    restamped: list[tuple[str, str]] = []
    count = 0
    for doc, stamp, created, source, *before in live:
        count += 1
        had = held.pop(doc, None)
        if had is not None and before and had[0] == before[0] != stamp:  # as it was embedded, counted in characters
            restamped.append((stamp, doc))
            had = (stamp, *had[1:])
        if had is None or had[0] != stamp:
            todo.append((_when(created), doc))
        elif had[1:] != (created, source):
            moved.append((doc, created, source))
    todo.sort(key=itemgetter(0))
    todo.reverse()  # newest first: what a user asks about most is indexed first
    return [doc for _, doc in todo], moved, list(held), restamped, count


def _when(created: object) -> str:
    """A created_at to order transcripts by, newest first: the store's text; any other value (a blob, a number in
    a store that holds one) as the oldest, never an error (sorting bytes with text raises)."""
    return created if isinstance(created, str) else ""


def _contents(
    store: sqlite3.Connection, ids: Sequence[str]
) -> tuple[list[tuple[str, str, Any, str | None, str, str, list[Segment]]], dict[str, dict[str, list[int]]]]:
    """(id, stamp, created_at, source, title, text, segments) of the batch's live transcripts, and what each speaker
    said in them (``embedded.said``), in one snapshot."""
    store.execute("BEGIN")
    try:
        heads, said = embedded.batch(store, ids)
        who = embedded.said(store, fold_label, f" AND transcript_id IN ({','.join('?' * len(ids))})", list(ids))
    finally:
        store.execute("COMMIT")
    return [(*head, [segment(*s) for s in said.get(head[0], [])]) for head in heads], who


def _spoken(seqs: NDArray[np.int32], said: dict[str, list[int]]) -> list[tuple[str, bytes]]:
    """Each speaker's windows among a transcript's (seqs: the first and last segment each spans, as the index holds
    them), as int32 places: those holding a segment of theirs with words, as a search restricted to them counts a
    window (plan._theirs). A window that cites no segment (a title, text, a seq an int32 cannot hold) holds none."""
    first, last = seqs[:, 0].astype(np.int64), seqs[:, 1].astype(np.int64)
    spans = (first != indexfile.NO_SEQ) & (last != indexfile.NO_SEQ)
    out = []
    for key in sorted(said):
        own = np.asarray(sorted(said[key]), dtype=np.int64)
        at = np.searchsorted(own, first)
        holds = spans & (at < len(own)) & (own[np.minimum(at, len(own) - 1)] <= last)
        if holds.any():
            out.append((key, np.flatnonzero(holds).astype(np.int32).tobytes()))
    return out


def _list_speakers(source: sqlite3.Connection, index: sqlite3.Connection) -> int | None:
    """Give an index written before it listed speakers (indexfile.SPEAKERS) those of every transcript it holds, from
    the windows it holds: the store's segments read LISTED transcripts at a time (not every label and seq of the
    store in memory at once), and nothing embedded (those edited since are embedded again after it, and listed
    again then). How many transcripts have speakers listed; None when another run listed them first.

    One write transaction, taken before anything is read (BEGIN IMMEDIATE), so two runs (the command's, a
    server's) never both list, nor one wipe what the other wrote; an interrupted run leaves none listed."""
    index.execute("BEGIN IMMEDIATE")
    try:
        if index.execute("SELECT value FROM meta WHERE key = 'speakers'").fetchone() == ("1",):
            index.execute("COMMIT")
            return None
        if index.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'speakers'").fetchone() is None:
            index.execute(indexfile.SPEAKERS)
        index.execute("DELETE FROM speakers")
        docs = [doc for (doc,) in index.execute("SELECT id FROM docs WHERE chunks > 0")]
        for i in range(0, len(docs), LISTED):
            some = docs[i : i + LISTED]
            marks = ",".join("?" * len(some))
            source.execute("BEGIN")
            try:
                said = embedded.said(source, fold_label, f" AND transcript_id IN ({marks})", some)
            finally:
                source.execute("COMMIT")
            listed = [
                (key, doc, windows)
                for doc, seqs in index.execute(f"SELECT id, seqs FROM docs WHERE id IN ({marks})", some)
                if doc in said and isinstance(seqs, bytes) and len(seqs) % 8 == 0
                for key, windows in _spoken(np.frombuffer(seqs, dtype=np.int32).reshape(-1, 2), said[doc])
            ]
            index.executemany("INSERT INTO speakers (speaker, doc, windows) VALUES (?, ?, ?)", listed)
        index.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('speakers', '1')")
        index.execute("COMMIT")
    except BaseException:
        if index.in_transaction:
            index.execute("ROLLBACK")
        raise
    return int(index.execute("SELECT count(DISTINCT doc) FROM speakers").fetchone()[0])


def update(
    store: Path,
    model: StaticModel,
    meta: dict[str, str],
    progress: Callable[[int, int], None] | None = None,
    *,
    rebuild: bool = True,
) -> Report:
    """Bring the index of store up to date with it, embedding with model; meta names the model (name, path, sha256).

    With rebuild False (the server keeping an index current) an index that is absent, untrusted or of
    another model is left as it is, raising Unusable: only the `index` command starts one afresh.
    Raises StoreError when the store cannot be read; KeyboardInterrupt keeps what was committed.
    """
    started = time.monotonic()
    report = Report()
    seen = store_stamp(store)  # before a row is read: a commit after it leaves the mark below stale, never wrong
    source, _ = open_readonly(store)
    # The app should write only UTF-8; a bad byte must not stop the index (the server reads it the same way).
    source.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        index = _open_index(store, meta, report, rebuild)
    except BaseException:
        source.close()
        raise
    try:
        # An index from before stamps were in bytes: each is read in characters too, and moved if it is current.
        before = index.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() != (indexfile.FORMAT,)
        todo, moved, gone, restamped, report.live = _compare(embedded.live(source, before=before), index)
        report.kept, report.restamped = report.live - len(todo), len(restamped)
        if index.execute("SELECT value FROM meta WHERE key = 'speakers'").fetchone() != ("1",):
            report.listed = _list_speakers(source, index)
        if not gone and not todo and not moved and not before and report.complete:
            report.current = True
            # Nothing to do: the file is not touched (a server that reads it need not reload it), unless its speakers
            # were just listed.
            return report
        index.execute("BEGIN")
        index.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('complete', '0')")
        for i in range(0, len(gone), 500):
            marks = ",".join("?" * len(gone[i : i + 500]))
            index.execute(f"DELETE FROM docs WHERE id IN ({marks})", gone[i : i + 500])
            index.execute(f"DELETE FROM speakers WHERE doc IN ({marks})", gone[i : i + 500])
            index.execute(f"DELETE FROM sources WHERE doc IN ({marks})", gone[i : i + 500])
        index.executemany("UPDATE docs SET created_at = ? WHERE id = ?", [(when, doc) for doc, when, _ in moved])
        index.executemany("DELETE FROM sources WHERE doc = ?", [(doc,) for doc, *_ in moved])
        index.executemany("INSERT INTO sources (doc, source) VALUES (?, ?)", [(d, s) for d, _, s in moved if s])
        index.executemany("UPDATE docs SET stamp = ? WHERE id = ?", restamped)
        index.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('format', ?)", (indexfile.FORMAT,))
        index.execute("COMMIT")
        report.removed, report.moved = len(gone), len(moved)
        shown = progress or (lambda _done, _total: None)
        shown(0, len(todo))
        try:
            for i in range(0, len(todo), BATCH):
                report.chunks += _embed_batch(source, index, model, todo[i : i + BATCH])
                report.embedded = min(i + BATCH, len(todo))
                shown(report.embedded, len(todo))
        except KeyboardInterrupt:
            report.interrupted = True
            if index.in_transaction:
                index.execute("ROLLBACK")
            raise
        index.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('complete', '1')")
        index.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('built_at', ?)",
            (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),),
        )
        report.current = True
    finally:
        report.seconds = time.monotonic() - started
        index.close()
        source.close()
        if report.current:  # after the close: the index's stamp as the next reader will see it
            indexfile.mark_current(store, seen, indexfile.stamp(indexfile.location(store)))
    return report


def _embed_batch(source: sqlite3.Connection, index: sqlite3.Connection, model: StaticModel, ids: list[str]) -> int:
    """Embed one batch of transcripts and replace their rows, in one transaction; the number of windows."""
    found, who = _contents(source, ids)
    cut = [chunks(title, text, segs) for *_, title, text, segs in found]
    scales, rows = quantized(model.embed([piece.text for pieces in cut for piece in pieces]))
    packed = []
    listed = []
    at = 0
    for (tid, stamp, created, _, *_), pieces in zip(found, cut, strict=True):
        n = len(pieces)
        seqs = np.asarray(
            [
                v if v is not None and indexfile.NO_SEQ < v < 2**31 else indexfile.NO_SEQ
                for p in pieces
                for v in (p.first_seq, p.last_seq)
            ],
            dtype=np.int32,
        )
        packed.append(
            (
                tid,
                stamp,
                created,
                n,
                np.asarray([p.kind for p in pieces], dtype=np.uint8).tobytes(),
                seqs.tobytes(),
                scales[at : at + n].tobytes(),
                rows[at : at + n].tobytes(),
            )
        )
        if n and tid in who:
            listed += [(key, tid, windows) for key, windows in _spoken(seqs.reshape(n, 2), who[tid])]
        at += n
    index.execute("BEGIN")
    index.execute(f"DELETE FROM docs WHERE id IN ({','.join('?' * len(ids))})", ids)
    index.executemany(f"INSERT INTO docs ({indexfile.DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", packed)
    index.execute(f"DELETE FROM speakers WHERE doc IN ({','.join('?' * len(ids))})", ids)
    index.executemany("INSERT INTO speakers (speaker, doc, windows) VALUES (?, ?, ?)", listed)
    index.execute(f"DELETE FROM sources WHERE doc IN ({','.join('?' * len(ids))})", ids)
    index.executemany("INSERT INTO sources (doc, source) VALUES (?, ?)", [(f[0], f[3]) for f in found if f[3]])
    index.execute("COMMIT")
    return at
