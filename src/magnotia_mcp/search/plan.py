"""search_transcripts: the hits for a query, each with a snippet, the terms it matched and its best moments.

The walk: this module picks the plan, the store runs its SQL and returns rows
(``store.plans`` for time order, ``store.relevance`` for ranking, ``store.hits``
for what a hit shows), and ``ranking`` and ``hits`` turn the rows into the answer.
The same query means the same with or without the store's full-text index
(``mode`` says which was used). With a ``speaker``, only what that speaker said
counts: the hits are the transcripts where they said something that matches,
ranked on their words alone; with a semantic index, also those where a window
they spoke in is near the query, fused as without a speaker.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from magnotia_mcp import log
from magnotia_mcp.search import hits, ranking
from magnotia_mcp.search.fusion import fuse
from magnotia_mcp.search.matching import Matcher, sql_any_clause, sql_match
from magnotia_mcp.search.ranking import candidate, rank_fts, rank_said, rank_scan
from magnotia_mcp.search.speakers import fold_label, speaker_key
from magnotia_mcp.store import hits as hit_rows
from magnotia_mcp.store import plans

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.search.querylang import Query
    from magnotia_mcp.search.semantic.found import Found, Near
    from magnotia_mcp.store.plans import Filters
    from magnotia_mcp.store.reader import Reader

Sort = Literal["relevance", "newest", "oldest"]


async def search_transcripts(
    db: Reader,
    query: Query,
    *,
    limit: int,
    sort: Sort = "relevance",
    since: str | None = None,
    until: str | None = None,
    source: str | None = None,
    speaker: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Hits for query: the most relevant first, or in time order, every clause required."""
    result, _ = await search_page(
        db, query, limit=limit, sort=sort, since=since, until=until, source=source, speaker=speaker, progress=progress
    )
    return result


async def search_page(
    db: Reader,
    query: Query,
    *,
    limit: int,
    sort: Sort = "relevance",
    since: str | None = None,
    until: str | None = None,
    source: str | None = None,
    speaker: str | None = None,
    progress: Callable[[int], None] | None = None,
    skip: int = 0,
    enough: Callable[[dict[str, Any]], bool] | None = None,
    near: Callable[[], Awaitable[Near | None]] | None = None,
) -> tuple[dict[str, Any], int]:
    """search_transcripts's answer from its skip-th hit on, and how many hits there are from there.

    enough(answer so far) says when the hits shaped so far are already more than a page can
    hold: the rest are not shaped (``answer["hits"]`` is then a prefix of the hits).
    near: gets the transcripts nearest the query in meaning (the semantic index's, asked while the
    search by words runs), fused with the ranking by words when the sort is by relevance; each hit
    then says how it matched, and one found by meaning cites the segments nearest the query in the
    passages that matched.
    """
    mode = "fts" if db.has_fts else "scan"
    result: dict[str, Any] = {"query": query.text, "mode": mode, "sort": sort, "ranked_among": 0, "hits": []}
    if query.empty:
        return result, 0
    matcher = Matcher(query)
    filt: Filters = {"since": since, "until": until, "source": source}
    said: dict[str, list[sqlite3.Row]] | None = None
    ranked: list[ranking.Candidate]
    if speaker is not None:
        said = await _said(db, query, filt, speaker_key(speaker), progress)
        ranked, among = rank_said(matcher, said, limit, sort)
    elif sort != "relevance":
        oldest = sort == "oldest"
        if db.has_fts:
            rows = await plans.fts_in_order(db, query.fts(), limit, filt, oldest=oldest, has_prefix=query.has_prefix)
        else:
            rows = await plans.scan_in_order(db, sql_match, query.text, limit, filt, oldest=oldest, progress=progress)
        ranked, among = [candidate(r, len(query.clauses)) for r in rows], 0
    elif db.has_fts:
        ranked, among = await rank_fts(db, query, limit, filt)
    else:
        ranked, among = await rank_scan(db, query, limit, filt, progress)
    result["ranked_among"] = among if sort == "relevance" else len(ranked)
    decorate: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    cited: frozenset[str] = frozenset()
    nearest = await near() if near is not None and sort == "relevance" else None
    if nearest is not None:
        from magnotia_mcp.search.semantic import citing  # noqa: PLC0415 - only once an index answered

        spoken = None
        if speaker is None:
            nearest, found = await _live(db, nearest, filt, limit)
            nearest, found = await _within(db, nearest, found, filt, limit)
        else:  # only what they said counts: the windows they spoke in, their segments cited
            nearest, found, spoken = await _spoken(db, nearest, filt, limit, speaker_key(speaker))
        by_meaning = [candidate(found[f.doc]) for f in nearest.found if f.doc in found][:limit]
        fused, how = fuse(ranked, by_meaning, len(query.clauses))
        ranked = fused[:limit]
        page_segments = citing.PageSegments(db, nearest, [c.id for c in ranked[skip:]], spoken)
        decorate = partial(citing.cite, how, nearest, page_segments)
        cited = frozenset(i for i, matched in how.items() if matched == "meaning")
    page = ranked[skip:]
    decorate = _with_about(await hit_rows.about(db, [c.id for c in page]), decorate)
    if enough is None:
        result["hits"] = await hits.shape(db, matcher, page, said, decorate=decorate, cited=cited)
    else:
        check = enough  # a name mypy keeps narrowed inside the lambda
        result["hits"] = await hits.shape(
            db, matcher, page, said, lambda shaped: check({**result, "hits": shaped}), decorate=decorate, cited=cited
        )
    return result, len(page)


def _with_about(
    about: dict[str, dict[str, Any]], decorate: Callable[[dict[str, Any]], Awaitable[None]] | None
) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """decorate, then who spoke in the hit's transcript and how long it ran (read for the whole page at once)."""

    async def decorated(hit: dict[str, Any]) -> None:
        if decorate is not None:
            await decorate(hit)
        hit.update(about.get(hit["transcript_id"]) or {"speakers": [], "duration_ms": None})

    return decorated


async def _live(db: Reader, near: Near, filt: Filters, enough: int | None) -> tuple[Near, dict[str, sqlite3.Row]]:
    """What the index found, as the store has it now; and by id, those found that are live and pass filt: at least
    the first enough of them that still match, or all.

    The index is asked for 4 transcripts a hit, for the filters to leave enough; most often the first ones pass,
    and reading a row's created_at or deleted_at reads it to its end (its texts come first): the first enough
    are read, and the rest only if some of those did not pass or no longer match (``_fresh``).
    """
    ids = [f.doc for f in near.found]
    head = ids if enough is None else ids[:enough]
    found = await hit_rows.near(db, head, filt)
    near = await _fresh(db, near, found)
    if enough is not None and len(head) < len(ids) and sum(f.doc in found for f in near.found) < enough:
        rest = await hit_rows.near(db, ids[len(head) :], filt)
        found.update(rest)
        near = await _fresh(db, near, rest)
    return near, found


async def _within(
    db: Reader, near: Near, found: dict[str, sqlite3.Row], filt: Filters, limit: int
) -> tuple[Near, dict[str, sqlite3.Row]]:
    """near and found, or, when the filters leave fewer than limit of the nearest overall and the index may hold more
    that match (a month of three years' meetings), the nearest among the transcripts that pass them.

    When at least limit of the nearest overall pass, their first limit are the nearest that pass: any other is
    farther than all of them. Else the nearest overall may be anywhere but in the filter's range, and the index is
    asked again, scoring only the windows of those that pass.
    """
    if near.among is None or not near.more or not any(filt.values()):
        return near, found
    if sum(f.doc in found for f in near.found) >= limit:
        return near, found
    ids = await hit_rows.passing(db, filt)
    if not ids:  # no live transcript passes: nothing to score
        return near._replace(found=[]), {}
    again = await asyncio.to_thread(near.among, ids, NEAR * limit)
    return await _live(db, again, filt, limit)


async def _spoken(
    db: Reader, near: Near, filt: Filters, limit: int, speaker: str
) -> tuple[Near, dict[str, sqlite3.Row], dict[str, set[int]]]:
    """The transcripts found that pass filt, each as near as its best window speaker spoke in (``_theirs``); by id,
    their rows; and by id, the seqs of what speaker said in them, as the store has them now.

    When the index lists who spoke where (near.speaker), near is already nearest by the windows they spoke in:
    its first ones that pass are read, and a filter that leaves too few asks again among those that pass, as
    without a speaker (``_within``). An index written before it listed speakers answers with the nearest
    overall: of those, the ones where speaker said something near count (one where they said little, among
    many nearer the question, is missed until ``magnotia-mcp index`` lists them).
    """
    if near.speaker != speaker:
        near, found = await _live(db, near, filt, None)
    else:
        near, found = await _live(db, near, filt, limit)
        near, found = await _within(db, near, found, filt, limit)
    spoken = await hit_rows.speaker_near(db, list(found), speaker, fold_label)
    theirs = await asyncio.to_thread(_theirs, near, spoken)
    kept = {f.doc for f in theirs.found}
    if near.speaker == speaker and len(kept) < limit and any(f.doc in found and f.doc not in kept for f in near.found):
        # The store no longer has theirs some the index does (a label renamed, a segment emptied): read the rest.
        near, found = await _live(db, near, filt, None)
        spoken = await hit_rows.speaker_near(db, list(found), speaker, fold_label)
        theirs = await asyncio.to_thread(_theirs, near, spoken)
    return theirs, found, spoken


# The index is asked for 4 transcripts per hit a search may return: some are filtered out or trashed.
NEAR = 4


async def _fresh(db: Reader, near: Near, rows: dict[str, sqlite3.Row]) -> Near:
    """near, with those of rows edited since the index embedded them scored again as they read now (nearest first).

    An index is behind the store until it is brought up to date (the server does it after a search, on a thread
    of its own): its windows of a transcript edited since (formatted, transcribed again) would cite segments or
    passages that now say something else, or that are gone. Those are scored on what the store holds now, and
    left out when nothing of them is near enough any more. Only for the transcripts read, and only when edited.
    """
    from magnotia_mcp.search.semantic.found import mark  # noqa: PLC0415 - only once an index answered

    def edited(f: Found) -> bool:  # a mark of None: scored just now
        row = rows.get(f.doc)
        return (
            row is not None
            and f.mark is not None
            and f.mark != mark(row["updated"], bool(row["formatted"]), row["said"])
        )

    stale = {f.doc for f in near.found if edited(f)}
    if not stale:
        return near
    log.debug(f"{len(stale)} transcript(s) edited since the semantic index embedded them: scored as they read now")
    contents = await hit_rows.contents(db, sorted(stale))
    # Gone from contents: trashed or purged since rows were read. Embedding a whole transcript takes a while (a
    # 10-hour meeting: ~0.2 s), so not on the event loop.
    again = await asyncio.to_thread(lambda: {doc: near.again(doc, contents[doc]) for doc in stale if doc in contents})
    kept = [again.get(f.doc) if f.doc in stale else f for f in near.found]
    ordered = sorted((f for f in kept if f is not None), key=lambda f: -f.score)  # stable: equals keep their order
    return near._replace(found=ordered)


def _theirs(near: Near, spoken: dict[str, set[int]]) -> Near:
    """The transcripts found, each as near as its best window that one speaker spoke in (spoken: their seqs, by
    transcript), nearest first; those where they said nothing near the query are left out."""
    from magnotia_mcp.search.semantic.found import Found  # noqa: PLC0415 - only once an index answered

    kept = []
    for f in near.found:
        own = sorted(spoken.get(f.doc, ()))
        if not own:
            continue
        windows = [c for c in f.windows if _spans_one(c.first_seq, c.last_seq, own)]
        if windows:
            kept.append(Found(f.doc, windows[0].score, windows))
    kept.sort(key=lambda f: -f.score)  # stable: equals keep the index's order
    return near._replace(found=kept)


def _spans_one(first: int | None, last: int | None, seqs: list[int]) -> bool:
    """Whether a window spanning segments first..last holds one of seqs (ascending); a title spans none."""
    if first is None or last is None:
        return False
    at = bisect_left(seqs, first)
    return at < len(seqs) and seqs[at] <= last


async def _said(
    db: Reader, query: Query, filt: Filters, speaker: str, progress: Callable[[int], None] | None
) -> dict[str, list[sqlite3.Row]]:
    """What one speaker said that may match, by transcript, in spoken order."""
    rows = await hit_rows.speaker_segments(
        db,
        speaker,
        filt,
        match=query.text_fts(),
        title_match=query.title_fts(),
        text=query.text,
        fold_label=fold_label,
        any_clause=sql_any_clause,
        progress=progress,
    )
    said: dict[str, list[sqlite3.Row]] = {}
    for r in sorted(rows, key=lambda r: (r["transcript_id"], r["seq"])):
        said.setdefault(r["transcript_id"], []).append(r)
    return said
