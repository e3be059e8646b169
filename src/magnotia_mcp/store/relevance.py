"""The SQL of relevance ranking: windows of the newest matches with their BM25, and the scan's statistics.

What the rows mean and in what order hits go is ``search.ranking``'s; this module
reads them. With the index, SQLite computes BM25 (each term counted once, in an
AND or an OR of all the terms); without it, the scan reads every row (the trash
too: the statistics must be the index's) with a statistics function run inside
SQLite, on the reader thread, where an interrupt can stop it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import TYPE_CHECKING

from magnotia_mcp.store.plans import Filters, query_text, scan, where

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.reader import Reader

WEIGHTS = (4.0, 1.0, 1.0)  # title, raw_text, formatted_text

# The newest matching live rows, with what a hit shows: the join reads each row to
# its end (for deleted_at) anyway, so the other columns come at no extra cost.
NEWEST = (
    "SELECT t.rowid AS rid, t.id, t.title, t.created_at, t.source"
    " FROM transcripts_fts AS f JOIN transcripts AS t ON t.rowid = f.rowid"
    " WHERE f.transcripts_fts MATCH :match AND t.deleted_at IS NULL"
)
NEWEST_ORDER = " ORDER BY f.rowid DESC LIMIT :cap"
# Ranking reads the index alone; only rows already known to be live are kept.
SCORED = (
    f"SELECT rowid, bm25(transcripts_fts, {', '.join(map(str, WEIGHTS))})"
    " FROM transcripts_fts WHERE transcripts_fts MATCH :match"
)
IN_CLAUSE = "SELECT rowid FROM transcripts_fts WHERE transcripts_fts MATCH :match"
FROM_FLOOR = " AND rowid >= :floor"
# The scan reads every row and says, per row, whether it may be a hit; matching and counting run in SQLite.
SCAN_STATS = (
    "SELECT t.rowid AS rid, t.id, t.title, t.created_at, t.source,"
    " (t.deleted_at IS NULL{filters}) AS keep,"
    " magnotia_stats(:q, t.id, t.updated_at, CAST(t.title AS BLOB), CAST(t.raw_text AS BLOB),"
    " CAST(t.formatted_text AS BLOB)) AS stats"
    " FROM transcripts AS t WHERE 1"
)


async def window(db: Reader, match: str, filt: Filters, cap: int) -> tuple[list[sqlite3.Row], dict[int, float]]:
    """The newest cap live rows matching match (newest first), and their BM25 scores (higher is better)."""
    rows = await db.all(NEWEST + where(filt) + NEWEST_ORDER, {**filt, "match": match, "cap": cap})
    if not rows:
        return rows, {}
    params: dict[str, object] = {"match": match}
    if len(rows) == cap:  # maybe bounded: score only from the oldest row kept on
        params["floor"] = rows[-1]["rid"]
    scored = await db.all(SCORED + (FROM_FLOOR if "floor" in params else ""), params)
    live = {r["rid"] for r in rows}
    return rows, {rid: -s for rid, s in scored if rid in live}


async def in_clause(db: Reader, match: str, floor: int | None) -> list[int]:
    """The rowids matching one clause's expression (from floor on, when given)."""
    params: dict[str, object] = {"match": match} if floor is None else {"match": match, "floor": floor}
    return [rid for (rid,) in await db.all(IN_CLAUSE + (FROM_FLOOR if floor is not None else ""), params)]


async def scan_stats(
    db: Reader,
    stats: Callable[..., str],
    text: str,
    filt: Filters,
    progress: Callable[[int], None] | None,
) -> AsyncIterator[sqlite3.Row]:
    """Every row of the store, with ``keep`` (live and within filt) and ``stats`` (what stats said of it).

    stats is ``magnotia_stats(store, query text, id, updated_at, title, raw_text, formatted_text)``;
    store is this connection's file, (path, identity), for the caches it keeps.
    """
    await db.ensure_function("magnotia_stats", partial(stats, (str(db.path), db.info.identity)))
    sql = SCAN_STATS.replace("{filters}", where(filt))
    async for row in scan(db, sql, {**filt, "q": query_text(text)}, False, progress):
        yield row
