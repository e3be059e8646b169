"""The SQL of relevance ranking: windows of the newest matches with their BM25, and the scan's statistics.

What the rows mean and in what order hits go is ``search.ranking``'s; this module
reads them. With the index, SQLite computes BM25 (each term counted once, in an
AND or an OR of all the terms); without it, the scan reads every row (the trash
too: the statistics must be the index's) with a statistics function run inside
SQLite, on the reader thread, where an interrupt can stop it.
"""

from __future__ import annotations

import json
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


# Without filters, the window is read from the index alone (newest first), and rows in the trash
# are dropped by rowid (``live``): joining transcripts reads every candidate row to its end
# (deleted_at and created_at come after the texts), a thousand long rows per search.
INDEX_NEWEST = "SELECT rowid FROM transcripts_fts WHERE transcripts_fts MATCH :match ORDER BY rowid DESC LIMIT :n"
_SLACK = 64  # rows read past the cap, for those in the trash
# What a hit shows, for the few rows ranked at the top.
FACTS = (
    "SELECT rowid AS rid, id, title, created_at, source FROM transcripts"
    " WHERE rowid IN (SELECT value FROM json_each(:rowids))"
)
LIVENESS = "SELECT rowid, deleted_at IS NULL FROM transcripts WHERE rowid IN (SELECT value FROM json_each(:rowids))"
_LIVE, _TRASHED = 2, 1  # in a store's states; 0: not known yet
_MAX_ROWID = 1 << 24  # states by rowid up to 16 MB; rows past it are asked every time


async def live(db: Reader, rowids: list[int]) -> list[int]:
    """The rowids of rowids (in their order) whose transcript exists and is not in the trash.

    Remembered in the store's memo (a state per rowid, emptied when the store's generation
    moves: any commit of the app), so a row is read for its deleted_at once, not by every
    search whose window holds it.
    """
    states = db.memo.setdefault("liveness", bytearray())
    assert isinstance(states, bytearray)
    unknown = [r for r in rowids if not 0 < r < len(states) or not states[r]]
    if unknown:
        found = {int(r[0]): bool(r[1]) for r in await db.all(LIVENESS, {"rowids": json.dumps(unknown)})}
        top = min(max(unknown), _MAX_ROWID - 1)
        if top >= len(states):
            states.extend(bytes(top + 1 - len(states)))
        for r in unknown:
            if 0 < r < len(states):
                states[r] = _LIVE if found.get(r) else _TRASHED
        return [r for r in rowids if (states[r] == _LIVE if 0 < r < len(states) else found.get(r))]
    return [r for r in rowids if states[r] == _LIVE]


async def newest(db: Reader, match: str, cap: int) -> list[int]:
    """The rowids of the newest cap live rows matching match, newest first (by the index, then ``live``)."""
    n = cap + _SLACK
    while True:
        rowids = [r for (r,) in await db.all(INDEX_NEWEST, {"match": match, "n": n})]
        alive = await live(db, rowids)
        if len(alive) >= cap or len(rowids) < n:
            return alive[:cap]
        n *= 2


async def scores(db: Reader, match: str, rowids: list[int], cap: int) -> dict[int, float]:
    """The BM25 scores (higher is better) of rowids, the window newest returned for match and cap."""
    if not rowids:
        return {}
    params: dict[str, object] = {"match": match}
    if len(rowids) == cap:  # maybe bounded: score only from the oldest row kept on
        params["floor"] = rowids[-1]
    scored = await db.all(SCORED + (FROM_FLOOR if "floor" in params else ""), params)
    kept = set(rowids)
    return {rid: -s for rid, s in scored if rid in kept}


async def facts(db: Reader, rowids: list[int]) -> dict[int, sqlite3.Row]:
    """By rowid, what a hit shows of a few transcripts (rid, id, title, created_at, source)."""
    return {r["rid"]: r for r in await db.all(FACTS, {"rowids": json.dumps(rowids)})}


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
