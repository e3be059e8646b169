"""What the semantic index embeds of each transcript, read as the store holds it (search/semantic/build).

Each transcript is told by a *stamp*: its ``updated_at`` and the sizes in bytes of what is embedded (an edit changes
updated_at, and a change that did not moves a size). Beside it, what a search's filters compare and no stamp
holds: its ``created_at`` and its source. Read with a connection of the caller's own (opening.open_readonly),
on a thread of its own: ``magnotia-mcp index``, or the server keeping its index current.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from magnotia_mcp.store.hits import BLANK, EMBEDDED_TEXT

# In bytes: SQLite counts a text's characters byte by byte, and has a BLOB's length at hand. Comparing every
# transcript's stamp at 100k (a server's refresh after each commit of the app) took 2.9 s in characters.
STAMP = """
    coalesce(t.updated_at, '') || '|' || length(CAST(coalesce(t.title, '') AS BLOB))
    || '|' || length(CAST(coalesce(t.raw_text, '') AS BLOB))
    || '|' || coalesce(length(CAST(t.formatted_text AS BLOB)), -1)
    || '|' || (
        SELECT count(*) || ':' || coalesce(sum(length(CAST(s.text AS BLOB))), 0) FROM segments s
        WHERE s.transcript_id = t.id
    )
"""
# The stamp as an index written before STAMP holds it, in characters: read by the one run that moves it to STAMP.
CHARACTERS = """
    coalesce(t.updated_at, '') || '|' || length(coalesce(t.title, '')) || '|' || length(coalesce(t.raw_text, ''))
    || '|' || coalesce(length(t.formatted_text), -1) || '|'
    || (SELECT count(*) || ':' || coalesce(sum(length(s.text)), 0) FROM segments s WHERE s.transcript_id = t.id)
"""
# A created_at as the index holds it (its column is TEXT): a number as SQLite writes it there, so that the store's
# and the index's compare equal. A source only as a text: any other is the store's to judge, and the index holds none.
CREATED = (
    "CASE WHEN typeof(t.created_at) IN ('integer', 'real') THEN CAST(t.created_at AS TEXT)"
    " ELSE coalesce(t.created_at, '') END"
)
SOURCE = "CASE WHEN typeof(t.source) = 'text' AND t.source <> '' THEN t.source END"

# A transcript as it is embedded: (id, stamp, created_at, source, title, text), and its segments.
Head = tuple[str, str, Any, "str | None", str, str]
Said = tuple[int, "int | None", "int | None", "str | None", "str | None"]  # seq, start_ms, end_ms, speaker, text


def live(store: sqlite3.Connection, *, before: bool = False) -> Iterator[tuple[Any, ...]]:
    """(id, stamp, created_at, source) of every transcript not in the trash, one at a time, and with before its stamp
    in CHARACTERS too: reads every row to its end."""
    old = f", {CHARACTERS}" if before else ""
    return iter(
        store.execute(f"SELECT t.id, {STAMP}, {CREATED}, {SOURCE}{old} FROM transcripts t WHERE t.deleted_at IS NULL")
    )


def batch(store: sqlite3.Connection, ids: Sequence[str]) -> tuple[list[Head], dict[str, list[Said]]]:
    """The heads of the live transcripts among ids, and by id their segments in spoken order; within the caller's
    transaction, so that both come from one snapshot."""
    marks = ",".join("?" * len(ids))
    rows = store.execute(
        f"SELECT t.id, {STAMP}, {CREATED}, {SOURCE}, coalesce(t.title, ''), {EMBEDDED_TEXT}"
        f" FROM transcripts t WHERE t.deleted_at IS NULL AND t.id IN ({marks})",
        list(ids),
    ).fetchall()
    said: dict[str, list[Said]] = {}
    for tid, *rest in store.execute(
        "SELECT transcript_id, seq, start_ms, end_ms, speaker, text FROM segments"
        f" WHERE transcript_id IN ({marks}) ORDER BY transcript_id, seq",
        list(ids),
    ):
        said.setdefault(tid, []).append(tuple(rest))
    return [tuple(r) for r in rows], said


def said(
    store: sqlite3.Connection, fold: Callable[[str], str | None], where: str = "", params: Sequence[str] = ()
) -> dict[str, dict[str, list[int]]]:
    """By transcript, by speaker (their label folded as a speaker filter compares it: fold, speakers.fold_label, of
    the label as text, as hits.SPEAKER_LABELS reads it), the seqs of their segments with words, ascending.

    Grouped by SQLite, one row a speaker and transcript: at 100k, 157k rows to Python, not 2.5M segments."""
    out: dict[str, dict[str, list[int]]] = {}
    keys: dict[bytes, str | None] = {}  # a store has a few labels, said many times
    for tid, raw, seqs in store.execute(
        "SELECT transcript_id, CAST(speaker AS BLOB), group_concat(seq) FROM segments"
        f" WHERE speaker IS NOT NULL AND trim(text, ?) <> '' AND typeof(seq) = 'integer'{where}"
        " GROUP BY transcript_id, CAST(speaker AS BLOB)",
        [BLANK, *params],
    ):
        label = bytes(raw)
        if label not in keys:
            keys[label] = fold(label.decode("utf-8", "replace"))
        key = keys[label]
        if key is not None:
            own = out.setdefault(tid, {}).setdefault(key, [])
            own += map(int, seqs.split(","))
    for by in out.values():
        for own in by.values():
            own.sort()
    return out
