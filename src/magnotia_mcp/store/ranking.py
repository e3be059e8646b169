"""Relevance: which transcripts are about the query, best first, the same with or without the index.

The order, in both modes:

1. coverage: a transcript that matches more of the query's clauses (terms) ranks
   above one that matches fewer;
2. within the same coverage, BM25 (SQLite FTS5's ``bm25()``: k1 = 1.2, b = 0.75,
   the title weighted 4, raw and formatted text 1 each), higher first;
3. exact ties: newest first.

With the index, SQLite computes BM25 for each coverage level (``Query.fts_at_least``).
Without it, the scan computes the same formula from the same statistics, read in
its pass over every row: the number of rows, their average length in tokens and,
per phrase, how many rows hold it (the index counts transcripts in the trash too,
so the scan does). The work is bounded: at one coverage level at most
``RANK_CAP`` transcripts (the newest) are ranked, and ``ranked_among`` says how
many were compared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.querylang import TOKEN_RE, Query, fold, parse_cached
from magnotia_mcp.store.plans import Filters, query_text, scan, where

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    from magnotia_mcp.store.pool import Reader

WEIGHTS = (4.0, 1.0, 1.0)  # title, raw_text, formatted_text
K1, B = 1.2, 0.75
RANK_CAP = 1_000

_FTS_FROM = (
    " FROM transcripts_fts AS f JOIN transcripts AS t ON t.rowid = f.rowid"
    " WHERE f.transcripts_fts MATCH :match AND t.deleted_at IS NULL"
)
TIER_NEWEST = "SELECT f.rowid" + _FTS_FROM
# Ranking reads the index alone: joining each match to its row (for the trash and the
# filters) costs several times the ranking, so only the best few are looked up after.
TIER_RANKED = (
    f"SELECT rowid, bm25(transcripts_fts, {', '.join(map(str, WEIGHTS))}) AS s"
    " FROM transcripts_fts WHERE transcripts_fts MATCH :match"
)
TIER_ORDER = " ORDER BY s LIMIT :want"
LIVE_KEYS = (
    "SELECT t.rowid AS rid, t.id, t.title, t.created_at, t.source FROM transcripts AS t"
    " WHERE t.rowid IN (SELECT value FROM json_each(:rowids)) AND t.deleted_at IS NULL"
)
# The scan reads every row (the trash too: the statistics must be the index's) and
# says, per row, whether it may be a hit; matching and counting run in SQLite.
SCAN_STATS = (
    "SELECT t.rowid AS rid, t.id, t.title, t.created_at, t.source,"
    " (t.deleted_at IS NULL{filters}) AS keep,"
    " magnotia_stats(:q, t.title, t.raw_text, t.formatted_text) AS stats"
    " FROM transcripts AS t WHERE 1"
)


class Candidate(NamedTuple):  # not a dataclass: importing dataclasses costs start-up time
    """A transcript that matches at least one clause, with what ranks it."""

    rid: int
    id: str
    title: str
    created_at: str
    source: str
    coverage: int  # clauses matched
    relevance: float  # BM25, higher is better


async def rank_fts(db: Reader, query: Query, limit: int, filt: Filters) -> tuple[list[Candidate], int]:
    """The best live transcripts for query, by the index; and how many were compared."""
    n = len(query.clauses)
    out: list[Candidate] = []
    seen: set[int] = set()
    among = 0
    for k in range(n, 0, -1):
        match = query.fts_at_least(k)
        params: dict[str, Any] = {**filt, "match": match}
        newest = await db.all(
            TIER_NEWEST + where(filt) + " ORDER BY f.rowid DESC LIMIT :cap", {**params, "cap": RANK_CAP + 1}
        )
        if not newest:
            continue
        among = min(len(newest), RANK_CAP)
        bound = ""
        if len(newest) > RANK_CAP:
            bound, params["floor"] = " AND rowid >= :floor", newest[RANK_CAP - 1][0]
        # Each clause is in comb(n - 1, k - 1) of the k-subsets: undo that constant factor.
        scale = math.comb(n - 1, k - 1)
        for r in await _best_live(db, TIER_RANKED + bound, params, filt, limit + len(seen)):
            if r["rid"] not in seen:
                seen.add(r["rid"])
                out.append(Candidate(r["rid"], r["id"], r["title"], r["created_at"], r["source"], k, -r["s"] / scale))
                if len(out) == limit:
                    return out, among
    return out, among


async def _best_live(db: Reader, ranked: str, params: dict[str, Any], filt: Filters, want: int) -> list[dict[str, Any]]:
    """The want best-scored live rows that pass the filters, best first; exact ties newest first."""
    fetch = want * 2
    while True:
        scored = await db.all(ranked + TIER_ORDER, {**params, "want": fetch})
        keys = await db.all(LIVE_KEYS + where(filt), {**filt, "rowids": json.dumps([r[0] for r in scored])})
        if len(keys) >= want or len(scored) < fetch:
            break
        fetch *= 4  # the trash or the filters took too many: look further down
    score = {r[0]: r[1] for r in scored}
    rows = [{**dict(k), "s": score[k["rid"]]} for k in keys]
    rows.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
    rows.sort(key=lambda r: r["s"])  # stable: ties stay newest first
    return rows[:want]


async def rank_scan(
    db: Reader, query: Query, limit: int, filt: Filters, progress: Callable[[int], None] | None
) -> tuple[list[Candidate], int]:
    """What rank_fts answers, computed in one pass over every row."""
    await db.ensure_function("magnotia_stats", scan_stats)
    sql = SCAN_STATS.replace("{filters}", where(filt))
    rows = 0
    tokens = 0
    df = [0] * len(query.phrases)
    found: list[tuple[Any, list[float], int]] = []
    async for row in scan(db, sql, {**filt, "q": query_text(query)}, False, progress):
        length, freqs = _decode(row["stats"])
        rows += 1
        tokens += length
        if freqs is None:
            continue
        for i, f in enumerate(freqs):
            df[i] += f > 0
        if row["keep"]:
            found.append((row, freqs, length))
    scorer = Bm25(rows, tokens, df)
    cands = [
        Candidate(r["rid"], r["id"], r["title"], r["created_at"], r["source"], coverage(query, f), scorer(f, n))
        for r, f, n in found
    ]
    return rank_candidates(cands, len(query.clauses), limit)


def rank_candidates(cands: list[Candidate], clauses: int, limit: int) -> tuple[list[Candidate], int]:
    """rank_fts's order and bound, applied to candidates already scored."""
    out: list[Candidate] = []
    seen: set[int] = set()
    among = 0
    for k in range(clauses, 0, -1):
        pool = [c for c in cands if c.coverage >= k]
        if not pool:
            continue
        if len(pool) > RANK_CAP:
            pool = sorted(pool, key=lambda c: c.rid, reverse=True)[:RANK_CAP]
        among = len(pool)
        pool.sort(key=lambda c: (c.created_at, c.id), reverse=True)
        pool.sort(key=lambda c: -c.relevance)  # stable: ties stay newest first
        for c in pool:
            if c.rid not in seen:
                seen.add(c.rid)
                out.append(c)
                if len(out) == limit:
                    return out, among
    return out, among


class Bm25:
    """FTS5's bm25() over given statistics: rows, total tokens, and rows holding each phrase."""

    def __init__(self, rows: int, tokens: int, df: list[int]) -> None:
        self.avgdl = tokens / rows if rows else 1.0
        self.idf = [max(math.log((rows - n + 0.5) / (n + 0.5)), 1e-6) if rows else 1e-6 for n in df]

    def __call__(self, freqs: list[float], length: int) -> float:
        norm = K1 * (1 - B + B * length / self.avgdl) if self.avgdl else K1
        return sum(idf * (f * (K1 + 1)) / (f + norm) for idf, f in zip(self.idf, freqs, strict=True) if f)


def coverage(query: Query, freqs: list[float]) -> int:
    """How many clauses have a phrase with hits (freqs: one per phrase, clause by clause)."""
    covered, start = 0, 0
    for clause in query.clauses:
        covered += any(f > 0 for f in freqs[start : start + len(clause)])
        start += len(clause)
    return covered


def token_count(text: str | None) -> int:
    """Tokens as the index counts them (runs of letters and digits)."""
    return len(TOKEN_RE.findall(text)) if text else 0


def phrase_freqs(query: Query, folded_columns: Iterable[str], weights: Iterable[float]) -> list[float]:
    """Per phrase, its hits in each (folded) column times the column's weight, summed."""
    total = [0.0] * len(query.phrases)
    for text, weight in zip(folded_columns, weights, strict=True):
        if text:
            for i, count in enumerate(query.phrase_counts(text)):
                total[i] += weight * count
    return total


def scan_stats(q: str, title: str | None, raw: str | None, formatted: str | None) -> str:
    """``magnotia_stats`` for SQLite: "length" or "length|f1,f2,..." (weighted hits per phrase).

    Runs on the reader thread for every row of a relevance scan.
    """
    query = parse_cached(q)
    length = token_count(title) + token_count(raw) + token_count(formatted)
    folded = [fold(t) if t else "" for t in (title, raw, formatted)]
    if not any(query.matched(*folded)):
        return str(length)
    freqs = phrase_freqs(query, folded, WEIGHTS)
    return f"{length}|" + ",".join(f"{f!r}" for f in freqs)


def _decode(stats: str) -> tuple[int, list[float] | None]:
    length, _, freqs = stats.partition("|")
    return int(length), [float(f) for f in freqs.split(",")] if freqs else None
