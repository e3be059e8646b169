"""Search plans: which transcripts match a query, in order, with a snippet and a segment each.

The same query means the same with or without the store's full-text index:
with ``transcripts_fts`` the index finds the matches; without it, a scan reads
rows newest first and matches them with the query language's own matcher.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable, Iterable
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Literal

from magnotia_mcp.querylang import Query, fold, snippet, sql_match
from magnotia_mcp.text import preview

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.pool import Reader


_HIT_KEYS = "SELECT t.rowid AS rid, t.id, t.title, t.created_at, t.source FROM transcripts AS t"
# Three plans for one answer, chosen by how many rows the index matches:
# - few: look each match up, then sort them (cost grows with the matches);
# - many: walk transcripts newest first, checking each against the match set
#   built once (the unary + keeps SQLite from driving the query from that set);
# - most (a common word): walk newest first and ask the index about each row,
#   which stops after a handful of rows. Prefix terms are slow to ask per row,
#   so they stay with "many".
FTS_MATCH_COUNT = "SELECT count(*) FROM (SELECT 1 FROM transcripts_fts WHERE transcripts_fts MATCH :match LIMIT :cap)"
MANY_MATCHES = 1_000
# Asking the index row by row pays only when the term is in a large share of all
# rows (then a handful of probes find the page); below that, each probe may cost
# a long doclist seek, so "many" wins.
MOST_SHARE = 4  # "most" means at least 1 row in 4
TRANSCRIPT_ROWS = "SELECT coalesce(max(rowid), 0) FROM transcripts"
_MATCHES = "SELECT rowid FROM transcripts_fts WHERE transcripts_fts MATCH :match"
FTS_FIRST_MATCHES = _MATCHES + " LIMIT :cap"
# The "few" plan reuses the rowids the first read of the index returned (as JSON),
# so the index is read once, not twice.
FTS_HITS = _HIT_KEYS + " WHERE t.rowid IN (SELECT value FROM json_each(:rowids)) AND t.deleted_at IS NULL"
FTS_HITS_NEWEST_FIRST = _HIT_KEYS + " WHERE +t.rowid IN (" + _MATCHES + ") AND t.deleted_at IS NULL"
FTS_HITS_PROBING = (
    _HIT_KEYS + " WHERE t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM transcripts_fts AS f"
    " WHERE f.transcripts_fts MATCH :match AND f.rowid = t.rowid)"
)
FTS_HITS_ORDER = " ORDER BY t.created_at DESC, t.id DESC LIMIT :limit"
# For the "few" plan: with the index kept out of the ORDER BY (unary +), SQLite
# cannot decide to walk all transcripts newest first when a filter or a larger
# limit makes that look cheaper; it looks up the matches and sorts them.
FTS_FEW_ORDER = " ORDER BY +t.created_at DESC, t.id DESC LIMIT :limit"
HIT_TEXTS = "SELECT rowid AS rid, raw_text, formatted_text FROM transcripts WHERE rowid IN ({marks})"
HIT_SEGMENTS = (
    "SELECT transcript_id, seq, start_ms, end_ms, speaker, text FROM segments"
    " WHERE transcript_id IN ({marks}) ORDER BY transcript_id, seq"
)
# The scan's matching runs inside SQLite (magnotia_match, registered on every
# connection), so it happens on the reader thread: the event loop stays free to
# answer pings, and an interrupt stops a scan in the middle of a batch.
SCAN_TITLES = (
    "SELECT rowid AS rid, id, title, created_at, source, magnotia_match(:q, title) AS hit"
    " FROM transcripts WHERE deleted_at IS NULL"
)
SCAN_TEXTS = (
    "SELECT rowid AS rid, id, title, created_at, source,"
    " magnotia_match(:q, title, raw_text, formatted_text) AS hit"
    " FROM transcripts WHERE deleted_at IS NULL"
)
SCAN_ORDER = " ORDER BY created_at DESC, id DESC LIMIT :batch"
_T_FILTERS = {
    "since": " AND t.created_at >= :since",
    "until": " AND t.created_at < :until",
    "source": " AND t.source = :source",
}

TITLE_SCORE = 1.0
TEXT_SCORE = 0.5
SCAN_BATCH = 256
Plan = Literal["few", "many", "most"]
HIT_BATCH = 10


async def search_transcripts(
    db: Reader,
    query: Query,
    *,
    limit: int,
    since: str | None = None,
    until: str | None = None,
    source: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Hits for query, best first: title matches, then text matches, each newest first."""
    mode = "fts" if db.has_fts else "scan"
    if query.empty:
        return {"query": query.text, "mode": mode, "hits": []}
    filt = {"since": since, "until": until, "source": source}
    if db.has_fts:
        ranked = await _fts_hits(db, query, limit, filt)
    else:
        ranked = await _scan_hits(db, query, limit, filt, progress)
    if not ranked:
        return {"query": query.text, "mode": mode, "hits": []}
    hits = []
    # Texts and segments are read a few hits at a time: the whole text of 50 long
    # meetings at once would set the server's peak memory.
    for start in range(0, len(ranked), HIT_BATCH):
        batch = ranked[start : start + HIT_BATCH]
        marks = ",".join("?" * len(batch))
        texts = {r["rid"]: r for r in await db.all(HIT_TEXTS.format(marks=marks), [h[0]["rid"] for h in batch])}
        segs: dict[str, list[sqlite3.Row]] = {}
        for s in await db.all(HIT_SEGMENTS.format(marks=marks), [h[0]["id"] for h in batch]):
            segs.setdefault(s["transcript_id"], []).append(s)
        for row, score in batch:
            hits.append(
                {
                    "transcript_id": row["id"],
                    "title": row["title"],
                    "created_at": row["created_at"],
                    "source": row["source"],
                    "snippet": _hit_snippet(query, row["title"], texts.get(row["rid"])),
                    "score": score,
                    "segment": _first_segment(query, segs.get(row["id"], [])),
                }
            )
    return {"query": query.text, "mode": mode, "hits": hits}


def _where(filt: dict[str, str | None]) -> str:
    return "".join(_T_FILTERS[k] for k, v in filt.items() if v)


async def _fts_hits(
    db: Reader, query: Query, limit: int, filt: dict[str, str | None]
) -> list[tuple[sqlite3.Row, float]]:
    prefix = query.has_prefix
    rows = await db.one(TRANSCRIPT_ROWS)
    most = max(MANY_MATCHES, (rows[0] if rows is not None else 0) // MOST_SHARE)
    titled = await _fts_newest(db, query.fts("title"), limit, filt, prefix=prefix, most=most)
    ranked = [(r, TITLE_SCORE) for r in titled]
    if len(ranked) < limit:
        seen = {r["rid"] for r in titled}
        rest = await _fts_newest(db, query.fts(), limit + len(titled), filt, prefix=prefix, most=most)
        ranked += [(r, TEXT_SCORE) for r in rest if r["rid"] not in seen][: limit - len(ranked)]
    return ranked


async def _fts_newest(
    db: Reader, match: str, limit: int, filt: dict[str, str | None], *, prefix: bool, most: int
) -> list[sqlite3.Row]:
    """The newest live rows matching match, by whichever plan is cheapest for it."""
    first = await db.all(FTS_FIRST_MATCHES, {"match": match, "cap": MANY_MATCHES + 1})
    if len(first) <= MANY_MATCHES:
        if not first:
            return []
        return await run_plan(db, "few", match, limit, filt, rowids=[r[0] for r in first])
    row = await db.one(FTS_MATCH_COUNT, {"match": match, "cap": most + 1})
    count = row[0] if row is not None else 0
    plan: Plan = "many" if count <= most or prefix else "most"
    return await run_plan(db, plan, match, limit, filt)


async def run_plan(
    db: Reader,
    plan: Plan,
    match: str,
    limit: int,
    filt: dict[str, str | None],
    *,
    rowids: list[int] | None = None,
) -> list[sqlite3.Row]:
    """The newest live rows matching match by one plan; every plan gives the same rows in the same order.

    rowids are the index's matches when the caller has read them already (the few plan).
    """
    if plan == "few":
        if rowids is None:
            rowids = [r[0] for r in await db.all(_MATCHES, {"match": match})]
        params = {**filt, "rowids": json.dumps(rowids), "limit": limit}
        return await db.all(FTS_HITS + _where(filt) + FTS_FEW_ORDER, params)
    sql = FTS_HITS_NEWEST_FIRST if plan == "many" else FTS_HITS_PROBING
    return await db.all(sql + _where(filt) + FTS_HITS_ORDER, {**filt, "match": match, "limit": limit})


async def _scan_hits(
    db: Reader,
    query: Query,
    limit: int,
    filt: dict[str, str | None],
    progress: Callable[[int], None] | None,
) -> list[tuple[sqlite3.Row, float]]:
    """The same ranking as _fts_hits, found by reading rows newest first."""
    await db.ensure_function("magnotia_match", sql_match)
    where = _where(filt).replace("t.", "")
    scanned = [0]  # rows read over both passes, for progress that only goes up
    # Lone surrogates cannot reach SQLite as text; neither they nor U+FFFD are word characters.
    q = query.text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    titled: list[sqlite3.Row] = []
    async for row in _scan(db, SCAN_TITLES + where, {**filt, "q": q}, progress, scanned):
        titled.append(row)
        if len(titled) == limit:
            break
    ranked = [(r, TITLE_SCORE) for r in titled]
    if len(ranked) < limit:
        seen = {r["rid"] for r in titled}
        async for row in _scan(db, SCAN_TEXTS + where, {**filt, "q": q}, progress, scanned):
            if row["rid"] not in seen:
                ranked.append((row, TEXT_SCORE))
                if len(ranked) == limit:
                    break
    return ranked


async def _scan(
    db: Reader,
    sql: str,
    params: dict[str, Any],
    progress: Callable[[int], None] | None,
    scanned: list[int],
) -> AsyncIterator[sqlite3.Row]:
    """The matching rows of sql, newest first, read in keyset batches."""
    after: tuple[str, str] | None = None
    while True:
        keyset = " AND (created_at, id) < (:after_created, :after_id)" if after else ""
        batch: dict[str, Any] = {**params, "batch": SCAN_BATCH}
        if after:
            batch["after_created"], batch["after_id"] = after
        rows = await db.all(sql + keyset + SCAN_ORDER, batch)
        for row in rows:
            if row["hit"]:
                yield row
        scanned[0] += len(rows)
        if progress:
            progress(scanned[0])
        if len(rows) < SCAN_BATCH:
            return
        after = (rows[-1]["created_at"], rows[-1]["id"])


def _hit_snippet(query: Query, title: str, text_row: sqlite3.Row | None) -> str:
    candidates: Iterable[str] = ()
    if text_row is not None:
        formatted, raw = text_row["formatted_text"], text_row["raw_text"]
        candidates = [t for t in (formatted, raw) if t]
    for text in (*candidates, title):
        found = snippet(query, text)
        if found is not None:
            return found
    return preview(title or "")


def _first_segment(query: Query, segments: list[sqlite3.Row]) -> dict[str, Any] | None:
    """The first segment, in spoken order, where a term of the query matches.

    One search over the segments joined by newlines instead of one per segment.
    A phrase said across a segment boundary is found in the segment where it starts.
    """
    if not segments:
        return None
    texts = [fold(s["text"]) for s in segments]
    starts = list(accumulate((len(t) + 1 for t in texts[:-1]), initial=0))
    found = query.first_match("\n".join(texts))
    if found is None:
        return None
    s = segments[bisect_right(starts, found.start()) - 1]
    return {"seq": s["seq"], "start_ms": s["start_ms"], "end_ms": s["end_ms"], "speaker": s["speaker"]}
