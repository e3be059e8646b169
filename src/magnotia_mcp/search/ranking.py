"""Relevance: which transcripts are about the query, best first, the same with or without the index.

The order, in both modes:

1. coverage: a transcript that matches more of the query's clauses (terms) ranks above one that matches fewer;
2. within the same coverage, BM25 (SQLite FTS5's ``bm25()``: k1 = 1.2, b = 0.75, the title weighted 4, raw and
   formatted text 1 each), higher first;
3. exact ties: newest first.

With the index, SQLite computes BM25 (``store.relevance``). Without it, the scan computes the same formula from
the same statistics, read in its pass over every row: the number of rows, their average length in tokens and, per
phrase, how many rows hold it (the index counts transcripts in the trash too, so the scan does).

The work is bounded (``RANK_CAP``): the transcripts with every term are ranked among the newest 1,000 of them;
when fewer than the limit have every term, those that lack one (of a query of three or more) among the newest
100 of them (``NEAR_CAP``), however far back those with any term reach; when fewer still, the partial matches
among the newest 1,000 that have any term, each one's coverage read from one index lookup per clause over that
window. Partial matches are scored by the BM25 of any term. ``ranked_among`` says how many were compared.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.search import tokens
from magnotia_mcp.search.folding import fold
from magnotia_mcp.search.matching import Matcher, matcher_for
from magnotia_mcp.search.querylang import Query
from magnotia_mcp.store import relevance
from magnotia_mcp.store.relevance import WEIGHTS
from magnotia_mcp.text import stored_text

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.plans import Filters
    from magnotia_mcp.store.reader import Reader

K1, B = 1.2, 0.75
RANK_CAP = 1_000
NEAR_CAP = 100  # of those that lack one term, the newest ranked: scoring them reads back to the oldest


class Candidate(NamedTuple):  # not a dataclass: importing dataclasses costs start-up time
    """A transcript that matches at least one clause, with what ranks it."""

    rid: int
    id: str
    title: str
    created_at: str
    source: str
    coverage: int  # clauses matched
    relevance: float  # BM25, higher is better


def candidate(row: sqlite3.Row, coverage: int = 0, relevance: float = 0.0) -> Candidate:
    """A candidate from a row with rid, id, title, created_at and source (a transcript's, or a segment's)."""
    created = stored_text(row["created_at"])
    return Candidate(row["rid"], row["id"], row["title"], created, row["source"], coverage, relevance)


# A candidate before its row is read: (group, coverage, relevance, rowid); group 0 (every clause) goes first.
Light = tuple[int, int, float, int]


async def rank_fts(db: Reader, query: Query, limit: int, filt: Filters) -> tuple[list[Candidate], int]:
    """The best live transcripts for query, by the index; and how many were compared.

    Without filters the candidates come from the index alone (their rows in the trash dropped
    by rowid), and only the rows ranked at the top are read; a filter needs every candidate's
    row (its time or source), read in the same statement.
    """
    if any(filt.values()):
        return await _rank_fts_rows(db, query, limit, filt)
    n = len(query.clauses)
    full = await relevance.newest(db, query.fts(), RANK_CAP)
    full_scores = await relevance.scores(db, query.fts(), full, RANK_CAP)
    light: list[Light] = [(0, n, full_scores[rid], rid) for rid in full]
    if len(full) >= limit or n == 1:
        return await _top(db, light, limit), len(full)
    in_full = set(full)
    near: dict[int, float] = {}
    if n >= 3:  # those that lack one clause, however far back the ones with any clause reach
        lacking = query.fts_at_least(n - 1)
        within = await relevance.newest(db, lacking, NEAR_CAP)
        # A row that lacks one clause matches one group of the expression: FTS5 scores it as for any clause.
        scored = await relevance.scores(db, lacking, within, NEAR_CAP)
        near = {rid: scored[rid] for rid in within if rid not in in_full}
        light += [(1, n - 1, score, rid) for rid, score in near.items()]
        if len(full) + len(near) >= limit:
            return await _top(db, light, limit), len(in_full) + len(near)
    match = query.fts_at_least(1)
    window = await relevance.newest(db, match, RANK_CAP)
    scores = await relevance.scores(db, match, window, RANK_CAP)
    covered = await _coverage(db, query, window)
    light += [(1, covered[rid], scores[rid], rid) for rid in window if rid not in in_full and rid not in near]
    return await _top(db, light, limit), len(in_full | near.keys() | covered.keys())


async def _coverage(db: Reader, query: Query, window: Iterable[int]) -> dict[int, int]:
    """How many of the query's clauses each row of window has (one index lookup per clause)."""
    covered = dict.fromkeys(window, 0)
    floor = min(covered) if covered else None
    for clause in query.clause_fts():
        for rid in await relevance.in_clause(db, clause, floor):
            if rid in covered:
                covered[rid] += 1
    return covered


async def _top(db: Reader, light: list[Light], limit: int) -> list[Candidate]:
    """The first limit of light in ``_order``'s order (the full matches first), their rows read.

    Ties on (group, coverage, relevance) go newest first, which needs the rows' times: every
    candidate tied with the last one kept is read too.
    """

    def rank(c: Light) -> tuple[int, int, float]:
        return c[0], -c[1], -c[2]

    light.sort(key=rank)
    chosen = light[:limit]
    if len(light) > limit:
        edge = rank(light[limit - 1])
        chosen += [c for c in light[limit:] if rank(c) == edge]
    rows = await relevance.facts(db, [c[3] for c in chosen])
    group = {c[3]: c[0] for c in chosen}
    cands = [candidate(rows[c[3]], c[1], c[2]) for c in chosen if c[3] in rows]
    cands.sort(key=lambda c: (c.created_at, c.id), reverse=True)
    cands.sort(key=lambda c: (group[c.rid], -c.coverage, -c.relevance))  # stable: ties stay newest first
    return cands[:limit]


async def _rank_fts_rows(db: Reader, query: Query, limit: int, filt: Filters) -> tuple[list[Candidate], int]:
    """rank_fts with filters: each window read with its rows (live and within filt)."""
    n = len(query.clauses)
    # First every transcript that has all the terms (for one term, that is the answer).
    full, full_scores = await _window(db, query.fts(), filt)
    ranked_full = _order([r._replace(coverage=n, relevance=full_scores[rid]) for rid, r in full.items()])
    if len(ranked_full) >= limit or n == 1:
        return ranked_full[:limit], len(full)
    # Then those that lack one clause, among the newest that do (rank_fts).
    near: dict[int, Candidate] = {}
    if n >= 3:
        within, scored = await _window(db, query.fts_at_least(n - 1), filt, NEAR_CAP)
        near = {rid: r._replace(coverage=n - 1, relevance=scored[rid]) for rid, r in within.items() if rid not in full}
        if len(full) + len(near) >= limit:
            return (ranked_full + _order(list(near.values())))[:limit], len(full) + len(near)
    # Then partial matches, among the newest that have any of the terms.
    window, scores = await _window(db, query.fts_at_least(1), filt)
    covered = await _coverage(db, query, window)
    rest = list(near.values()) + [
        r._replace(coverage=covered[rid], relevance=scores[rid])
        for rid, r in window.items()
        if rid not in full and rid not in near
    ]
    return (ranked_full + _order(rest))[:limit], len(full.keys() | near.keys() | window.keys())


async def _window(
    db: Reader, match: str, filt: Filters, cap: int | None = None
) -> tuple[dict[int, Candidate], dict[int, float]]:
    """The newest cap (RANK_CAP) live rows matching match (by rowid; not yet scored), and their BM25 scores."""
    rows, scores = await relevance.window(db, match, filt, RANK_CAP if cap is None else cap)
    return {r["rid"]: candidate(r) for r in rows}, scores


def _order(cands: list[Candidate]) -> list[Candidate]:
    """More terms first, then higher BM25, then newest."""
    cands.sort(key=lambda c: (c.created_at, c.id), reverse=True)
    cands.sort(key=lambda c: (-c.coverage, -c.relevance))  # stable: ties stay newest first
    return cands


async def rank_scan(
    db: Reader, query: Query, limit: int, filt: Filters, progress: Callable[[int], None] | None
) -> tuple[list[Candidate], int]:
    """What rank_fts answers, computed in one pass over every row."""
    rows = 0
    length_sum = 0
    df = [0] * len(query.phrases)
    found: list[tuple[Any, list[float], int]] = []
    async for row in relevance.scan_stats(db, scan_stats, query.text, filt, progress):
        length, freqs = _decode(row["stats"])
        rows += 1
        length_sum += length
        if freqs is None:
            continue
        for i, f in enumerate(freqs):
            df[i] += f > 0
        if row["keep"]:
            found.append((row, freqs, length))
    scorer = Bm25(rows, length_sum, df)
    cands = [candidate(r, coverage(query, f), scorer(f, n)) for r, f, n in found]
    return rank_candidates(cands, len(query.clauses), limit)


def rank_said(
    matcher: Matcher, said: dict[str, list[sqlite3.Row]], limit: int, sort: str
) -> tuple[list[Candidate], int]:
    """Transcripts ranked on what one speaker said in them (said: their segments, by transcript id)."""
    query = matcher.query
    docs = []
    for segments in said.values():
        text = fold("\n".join(s["text"] for s in segments))
        freqs = phrase_freqs(matcher, [text], [1.0])
        # A term written title:... counts in the transcript's title (weighted as the index weighs titles).
        titled = matcher.title_counts(fold(segments[0]["title"] or ""))
        freqs = [f + WEIGHTS[0] * n for f, n in zip(freqs, titled, strict=True)]
        docs.append((segments[0], freqs, token_count(text)))
    df = [sum(f[i] > 0 for _, f, _ in docs) for i in range(len(query.phrases))]
    scorer = Bm25(len(docs), sum(n for _, _, n in docs), df)
    cands = [
        Candidate(
            s["rid"],
            s["transcript_id"],
            s["title"],
            stored_text(s["created_at"]),
            s["source"],
            coverage(query, f),
            scorer(f, n),
        )
        for s, f, n in docs
    ]
    n = len(query.clauses)
    if sort == "relevance":
        return rank_candidates(cands, n, limit)
    # In time order the score is the number of terms alone, as without a speaker.
    full = (c._replace(relevance=0.0) for c in cands if c.coverage == n)
    timed = sorted(full, key=lambda c: (c.created_at, c.id), reverse=sort == "newest")
    return timed[:limit], 0


def rank_candidates(cands: list[Candidate], clauses: int, limit: int) -> tuple[list[Candidate], int]:
    """rank_fts's order and bound, applied to candidates already scored."""
    full = _newest([c for c in cands if c.coverage == clauses])
    ranked_full = _order(list(full.values()))
    if len(ranked_full) >= limit or clauses == 1:
        return ranked_full[:limit], len(full)
    near: dict[int, Candidate] = {}
    if clauses >= 3:
        within = _newest([c for c in cands if c.coverage >= clauses - 1], NEAR_CAP)
        near = {rid: c for rid, c in within.items() if rid not in full}
        if len(full) + len(near) >= limit:
            return (ranked_full + _order(list(near.values())))[:limit], len(full) + len(near)
    window = _newest(cands)
    rest = list(near.values()) + [c for rid, c in window.items() if rid not in full and rid not in near]
    return (ranked_full + _order(rest))[:limit], len(full.keys() | near.keys() | window.keys())


def _newest(cands: list[Candidate], cap: int | None = None) -> dict[int, Candidate]:
    """The cap (RANK_CAP) candidates the index would keep: the highest rowids."""
    return {c.rid: c for c in sorted(cands, key=lambda c: c.rid, reverse=True)[: RANK_CAP if cap is None else cap]}


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
    """Tokens as the index counts them."""
    return tokens.token_count(text) if text else 0


def phrase_freqs(
    matcher: Matcher, folded_columns: Iterable[str], weights: Iterable[float], *, title_first: bool = False
) -> list[float]:
    """Per phrase, its hits in each (folded) column times the column's weight, summed (title_first: the first
    column is the title, where terms written title:... count too)."""
    total = [0.0] * len(matcher.query.phrases)
    for k, (text, weight) in enumerate(zip(folded_columns, weights, strict=True)):
        if text:
            for i, count in enumerate(matcher.phrase_counts(text, title=title_first and k == 0)):
                total[i] += weight * count
    return total


# Token counts of the rows scanned before, by (store path, file identity, transcript id): counting is most of a
# relevance scan's work and a row's count changes only with its text (and so its updated_at). Not by rowid, which
# a VACUUM may renumber, nor by the pool's generation, which moves with every commit of the app: a live store
# would then be recounted on every scan. The identity keeps a store renamed over the path apart.
StoreKey = tuple[str, tuple[int, int]]
_LENGTHS: dict[tuple[StoreKey, str], tuple[str, int]] = {}
_LENGTHS_KEPT = 500_000  # about 50 MB at most; past it, rows are counted every time


def scan_stats(
    store: StoreKey, q: str, id: str, updated_at: str, title: str | None, raw: str | None, formatted: str | None
) -> str:
    """``magnotia_stats`` for SQLite: "length" or "length|f1,f2,..." (weighted hits per phrase).

    Runs on the reader thread for every row of a relevance scan.
    """
    matcher = matcher_for(q)
    cached = _LENGTHS.get((store, id))
    if cached is not None and cached[0] == updated_at:
        length = cached[1]
    else:
        length = token_count(title) + token_count(raw) + token_count(formatted)
        if len(_LENGTHS) < _LENGTHS_KEPT:
            _LENGTHS[store, id] = (updated_at, length)
    folded = [fold(t) if t else "" for t in (title, raw, formatted)]
    if not any(matcher.matched(*folded[1:], title=folded[0])):
        return str(length)
    freqs = phrase_freqs(matcher, folded, WEIGHTS, title_first=True)
    return f"{length}|" + ",".join(f"{f!r}" for f in freqs)


def _decode(stats: str) -> tuple[int, list[float] | None]:
    length, _, freqs = stats.partition("|")
    return int(length), [float(f) for f in freqs.split(",")] if freqs else None
