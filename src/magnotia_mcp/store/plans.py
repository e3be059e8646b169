"""Hits in time order (``sort: newest`` or ``oldest``): every clause of the query required.

With the index, three plans give one answer, chosen by how many rows it matches:

- few: look each match up, then sort them (cost grows with the matches);
- many: walk transcripts in time order, checking each against the match set
  built once (the unary + keeps SQLite from driving the query from that set);
- most (a common word): walk in time order and ask the index about each row,
  which stops after a handful of rows. Prefix terms are slow to ask per row,
  so they stay with "many".

Without the index, a scan reads rows in time order and matches each one with
the matcher it is given (the query language's), inside SQLite on the reader thread.
Only SQL lives here: the query comes as its FTS5 expression or its text.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.reader import Reader

Plan = Literal["few", "many", "most"]
Filters = dict[str, str | None]

HIT_COLUMNS = "t.rowid AS rid, t.id, t.title, t.created_at, t.source"
HIT_KEYS = f"SELECT {HIT_COLUMNS} FROM transcripts AS t"
FTS_MATCH_COUNT = "SELECT count(*) FROM (SELECT 1 FROM transcripts_fts WHERE transcripts_fts MATCH :match LIMIT :cap)"
MANY_MATCHES = 1_000
# Asking the index row by row pays only when the term is in a large share of all
# rows (then a handful of probes find the page); below that, each probe may cost
# a long doclist seek, so "many" wins.
MOST_SHARE = 4  # "most" means at least 1 row in 4
TRANSCRIPT_ROWS = "SELECT coalesce(max(rowid), 0) FROM transcripts"
MATCHES = "SELECT rowid FROM transcripts_fts WHERE transcripts_fts MATCH :match"
FTS_FIRST_MATCHES = MATCHES + " LIMIT :cap"
# The "few" plan reuses the rowids the first read of the index returned (as JSON),
# so the index is read once, not twice.
FTS_HITS = HIT_KEYS + " WHERE t.rowid IN (SELECT value FROM json_each(:rowids)) AND t.deleted_at IS NULL"
FTS_HITS_IN_ORDER = HIT_KEYS + " WHERE +t.rowid IN (" + MATCHES + ") AND t.deleted_at IS NULL"
FTS_HITS_PROBING = (
    HIT_KEYS + " WHERE t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM transcripts_fts AS f"
    " WHERE f.transcripts_fts MATCH :match AND f.rowid = t.rowid)"
)
# For the "few" plan: with the index kept out of the ORDER BY (unary +), SQLite
# cannot decide to walk all transcripts in time order when a filter or a larger
# limit makes that look cheaper; it looks up the matches and sorts them.
_ORDER = {
    (False, False): " ORDER BY t.created_at DESC, t.id DESC LIMIT :limit",
    (False, True): " ORDER BY +t.created_at DESC, t.id DESC LIMIT :limit",
    (True, False): " ORDER BY t.created_at, t.id LIMIT :limit",
    (True, True): " ORDER BY +t.created_at, t.id LIMIT :limit",
}
FILTERS = {
    "since": " AND t.created_at >= :since",
    "until": " AND t.created_at < :until",
    "source": " AND t.source = :source",
}
SCAN_HITS = (
    "SELECT rowid AS rid, id, title, created_at, source,"
    " magnotia_match(:q, CAST(title AS BLOB), CAST(raw_text AS BLOB), CAST(formatted_text AS BLOB)) AS hit"
    " FROM transcripts AS t WHERE deleted_at IS NULL"
)
SCAN_BATCH = 256
# A scan's first batches are smaller (16, 32, ... up to SCAN_BATCH rows): its first progress comes
# after a few rows even when each is a long text matched against a long query (256 such rows can
# take a minute), at the cost of at most four more statements a scan.
FIRST_SCAN_BATCH = 16


def where(filt: Filters) -> str:
    return "".join(FILTERS[k] for k, v in filt.items() if v)


async def fts_in_order(
    db: Reader, match: str, limit: int, filt: Filters, *, oldest: bool, has_prefix: bool
) -> list[sqlite3.Row]:
    """The newest (or oldest) live rows matching match (every clause), by whichever plan is cheapest."""
    first = await db.all(FTS_FIRST_MATCHES, {"match": match, "cap": MANY_MATCHES + 1})
    if len(first) <= MANY_MATCHES:
        if not first:
            return []
        return await run_plan(db, "few", match, limit, filt, rowids=[r[0] for r in first], oldest=oldest)
    rows = await db.one(TRANSCRIPT_ROWS)
    most = max(MANY_MATCHES, (rows[0] if rows is not None else 0) // MOST_SHARE)
    row = await db.one(FTS_MATCH_COUNT, {"match": match, "cap": most + 1})
    count = row[0] if row is not None else 0
    plan: Plan = "many" if count <= most or has_prefix else "most"
    return await run_plan(db, plan, match, limit, filt, oldest=oldest)


async def run_plan(
    db: Reader,
    plan: Plan,
    match: str,
    limit: int,
    filt: Filters,
    *,
    rowids: list[int] | None = None,
    oldest: bool = False,
) -> list[sqlite3.Row]:
    """The live rows matching match in time order by one plan; every plan gives the same rows in the same order.

    rowids are the index's matches when the caller has read them already (the few plan).
    """
    if plan == "few":
        if rowids is None:
            rowids = [r[0] for r in await db.all(MATCHES, {"match": match})]
        params = {**filt, "rowids": json.dumps(rowids), "limit": limit}
        return await db.all(FTS_HITS + where(filt) + _ORDER[oldest, True], params)
    sql = FTS_HITS_IN_ORDER if plan == "many" else FTS_HITS_PROBING
    return await db.all(sql + where(filt) + _ORDER[oldest, False], {**filt, "match": match, "limit": limit})


async def scan_in_order(
    db: Reader,
    match: Callable[..., int],
    text: str,
    limit: int,
    filt: Filters,
    *,
    oldest: bool,
    progress: Callable[[int], None] | None,
) -> list[sqlite3.Row]:
    """The same answer as fts_in_order, found by reading rows in time order.

    match is ``magnotia_match(text, title, raw_text, formatted_text)``: 1 when the query (its text) matches
    (a term written title:... in the title only).
    """
    await db.ensure_function("magnotia_match", match)
    hits: list[sqlite3.Row] = []
    async for row in scan(db, SCAN_HITS + where(filt), {**filt, "q": query_text(text)}, oldest, progress):
        if row["hit"]:
            hits.append(row)
            if len(hits) == limit:
                break
    return hits


def query_text(text: str) -> str:
    """A query's text as SQLite can bind it."""
    # Lone surrogates cannot reach SQLite as text; neither they nor U+FFFD are word characters.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


async def scan(
    db: Reader,
    sql: str,
    params: dict[str, Any],
    oldest: bool,
    progress: Callable[[int], None] | None,
) -> AsyncIterator[sqlite3.Row]:
    """Every row of sql in time order, read in keyset batches; progress counts rows read."""
    after: tuple[str, str] | None = None
    op, order = (">", "") if oldest else ("<", " DESC")
    scanned, size = 0, FIRST_SCAN_BATCH
    while True:
        keyset = f" AND (t.created_at, t.id) {op} (:after_created, :after_id)" if after else ""
        batch: dict[str, Any] = {**params, "batch": size}
        if after:
            batch["after_created"], batch["after_id"] = after
        rows = await db.all(f"{sql}{keyset} ORDER BY t.created_at{order}, t.id{order} LIMIT :batch", batch)
        for row in rows:
            yield row
        scanned += len(rows)
        if progress:
            progress(scanned)
        if len(rows) < size:
            return
        after = (rows[-1]["created_at"], rows[-1]["id"])
        size = min(2 * size, SCAN_BATCH)
