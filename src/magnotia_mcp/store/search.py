"""search_transcripts: the hits for a query, each with a snippet, the terms it matched and its best moments.

Which transcripts and in what order comes from ``ranking`` (relevance) or
``plans`` (time order); this module shapes them. The same query means the same
with or without the store's full-text index (``mode`` says which was used).
With a ``speaker``, only what that speaker said counts: the hits are the
transcripts where they said something that matches, ranked on their words alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from magnotia_mcp.search.querylang import Query, fold, parse_cached, snippet
from magnotia_mcp.search.speakers import speaker_key
from magnotia_mcp.store import layouts
from magnotia_mcp.store.plans import SCAN_BATCH, Filters, fts_in_order, query_text, scan_in_order, where
from magnotia_mcp.store.ranking import (
    Bm25,
    Candidate,
    coverage,
    phrase_freqs,
    rank_candidates,
    rank_fts,
    rank_scan,
    token_count,
)
from magnotia_mcp.store.transcripts import SHORT
from magnotia_mcp.text import preview

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.pool import Reader

Sort = Literal["relevance", "newest", "oldest"]
MOMENTS = 3
HIT_BATCH = 10
# A short hit's texts come whole; a long one's (NULL here) are not read at all: see _long_hit.
HIT_TEXTS = (
    f"SELECT rowid AS rid, CASE WHEN {SHORT} THEN raw_text END AS raw_text,"
    f" CASE WHEN {SHORT} THEN formatted_text END AS formatted_text FROM transcripts WHERE rowid IN ({{marks}})"
)
HIT_SEGMENTS = (
    "SELECT transcript_id, seq, start_ms, end_ms, speaker, text FROM segments"
    " WHERE transcript_id IN ({marks}) ORDER BY transcript_id, seq"
)
# A long hit: which clauses it matches, by the index (one lookup per clause, by rowid) ...
_CLAUSE_HIT = "(SELECT 1 FROM transcripts_fts WHERE transcripts_fts MATCH :c{k} AND rowid = :rid) IS NOT NULL"
# ... and its matching segments, by the segment index within the range of its segment ids,
# in spoken order; at most MATCHING of them (a common word in a 10-hour meeting).
LONG_HIT_SEGMENTS = (
    "SELECT s.seq, s.start_ms, s.end_ms, s.speaker, s.text FROM segments_fts AS g"
    " JOIN segments AS s ON s.id = g.rowid"
    " WHERE g.segments_fts MATCH :match AND g.rowid BETWEEN :lo AND :hi AND s.transcript_id = :id"
    " ORDER BY s.seq LIMIT :most"
)
MATCHING = 1000
# The head of a long hit's texts, for a snippet when no segment matches (a match in the title, say).
LONG_HIT_HEADS = (
    "SELECT substr(raw_text, 1, :n) AS raw_text, substr(formatted_text, 1, :n) AS formatted_text"
    " FROM transcripts WHERE rowid = :rid"
)
HEAD_CHARS = 20_000
_SPEAKER_SEGMENTS = (
    " s.transcript_id, s.seq, s.start_ms, s.end_ms, s.speaker, s.text, t.rowid AS rid, t.title, t.created_at, t.source"
)
# A speaker's segments that may match: found by the segment index where there is one.
SPEAKER_FTS = (
    "SELECT" + _SPEAKER_SEGMENTS + " FROM segments_fts AS g JOIN segments AS s ON s.id = g.rowid"
    " JOIN transcripts AS t ON t.id = s.transcript_id"
    " WHERE g.segments_fts MATCH :match AND t.deleted_at IS NULL AND magnotia_fold(CAST(s.speaker AS BLOB)) = :speaker"
)
# Without a segment index: every segment of the speaker, matched on the reader thread.
SPEAKER_SCAN = (
    "SELECT s.id AS sid," + _SPEAKER_SEGMENTS + ", magnotia_any(:q, CAST(s.text AS BLOB)) AS hit"
    " FROM segments AS s JOIN transcripts AS t ON t.id = s.transcript_id"
    " WHERE t.deleted_at IS NULL AND magnotia_fold(CAST(s.speaker AS BLOB)) = :speaker AND s.id > :after"
)
SPEAKER_BATCH = " ORDER BY s.id LIMIT :batch"


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
    mode = "fts" if db.has_fts else "scan"
    result: dict[str, Any] = {"query": query.text, "mode": mode, "sort": sort, "ranked_among": 0, "hits": []}
    if query.empty:
        return result
    filt: Filters = {"since": since, "until": until, "source": source}
    said: dict[str, list[sqlite3.Row]] | None = None
    if speaker is not None:
        ranked, among, said = await _by_speaker(db, query, limit, filt, speaker_key(speaker), sort, progress)
    elif sort != "relevance":
        oldest = sort == "oldest"
        if db.has_fts:
            rows = await fts_in_order(db, query, limit, filt, oldest=oldest)
        else:
            rows = await scan_in_order(db, query, limit, filt, oldest=oldest, progress=progress)
        n = len(query.clauses)
        ranked, among = (
            [Candidate(r["rid"], r["id"], r["title"], r["created_at"], r["source"], n, 0.0) for r in rows],
            0,
        )
    elif db.has_fts:
        ranked, among = await rank_fts(db, query, limit, filt)
    else:
        ranked, among = await rank_scan(db, query, limit, filt, progress)
    result["ranked_among"] = among if sort == "relevance" else len(ranked)
    result["hits"] = await _shape(db, query, ranked, said)
    return result


async def _shape(
    db: Reader, query: Query, ranked: list[Candidate], said: dict[str, list[sqlite3.Row]] | None
) -> list[dict[str, Any]]:
    hits = []
    # With the full-text index a long hit is shaped from the index and its matching segments
    # (_long_hit); in scan mode every text is read anyway, so every hit is read whole.
    long_bytes = layouts.LONG_TEXT_BYTES if db.has_fts else None
    # Texts and segments are read a few hits at a time: the whole text of 50 long
    # meetings at once would set the server's peak memory.
    for start in range(0, len(ranked), HIT_BATCH):
        batch = ranked[start : start + HIT_BATCH]
        if said is None:
            marks = {f"r{k}": c.rid for k, c in enumerate(batch)}
            rows = await db.all(HIT_TEXTS.format(marks=",".join(":" + m for m in marks)), {**marks, "long": long_bytes})
            texts = {r["rid"]: r for r in rows}
            long = {rid for rid, r in texts.items() if r["raw_text"] is None}
            whole = [c.id for c in batch if c.rid not in long]
            segs: dict[str, list[sqlite3.Row]] = {}
            for s in await db.all(HIT_SEGMENTS.format(marks=",".join("?" * len(whole))), whole):
                segs.setdefault(s["transcript_id"], []).append(s)
        for c in batch:
            columns: list[str | None]
            if said is not None:
                segments = said[c.id]
                columns = ["\n".join(s["text"] for s in segments)]
            elif c.rid in long:
                hits.append(await _long_hit(db, query, c))
                continue
            else:
                row = texts.get(c.rid)
                columns = [c.title, row["raw_text"] if row else None, row["formatted_text"] if row else None]
                segments = segs.get(c.id, [])
            hits.append(_hit(query, c, columns, segments))
    return hits


def _hit(query: Query, c: Candidate, columns: list[str | None], segments: list[sqlite3.Row]) -> dict[str, Any]:
    matched = query.matched(*(fold(t) for t in columns if t))
    return _shaped(query, c, matched, _snippet(query, columns), segments)


def _shaped(
    query: Query, c: Candidate, matched: list[bool], snippet_text: str, segments: list[sqlite3.Row]
) -> dict[str, Any]:
    moments, first = _moments(query, segments)
    return {
        "transcript_id": c.id,
        "title": c.title,
        "created_at": c.created_at,
        "source": c.source,
        "snippet": snippet_text,
        # Clauses matched, then BM25 squashed into [0, 1): higher is better, in hit order.
        "score": round(c.coverage + c.relevance / (1 + c.relevance), 6),
        "matched_terms": [label for label, hit in zip(query.labels, matched, strict=True) if hit],
        "moments": moments,
        "segment": first,
    }


async def _long_hit(db: Reader, query: Query, c: Candidate) -> dict[str, Any]:
    """A hit on a long transcript, shaped without reading its text: the cost follows its matches.

    The clauses it matches come from the full-text index; the snippet and moments from
    its matching segments (found with the segment index), the snippet from the first
    of them in spoken order. Only when no segment matches (the words are in the title,
    or only in the formatted text) is the head of its texts read for a snippet.
    """
    clauses = query.clause_fts()
    flags = ", ".join(_CLAUSE_HIT.format(k=k) + f" AS m{k}" for k in range(len(clauses)))
    row = await db.one(f"SELECT {flags}", {"rid": c.rid, **{f"c{k}": m for k, m in enumerate(clauses)}})
    matched = [bool(row[f"m{k}"]) for k in range(len(clauses))] if row else [False] * len(clauses)
    segments: list[sqlite3.Row] = []
    if db.info.has_segment_fts:
        ids = await layouts.segment_ids(db, c.id)
        if ids is not None:
            params = {"match": query.fts_at_least(1), "lo": ids[0], "hi": ids[1], "id": c.id, "most": MATCHING}
            segments = await db.all(LONG_HIT_SEGMENTS, params)
    else:  # an older store: its segments are read, the text still is not
        segments = await db.all(HIT_SEGMENTS.format(marks="?"), [c.id])
    found = next((snippet(query, s["text"]) for s in segments if query.first_match(fold(s["text"]))), None)
    if found is None:
        heads = await db.one(LONG_HIT_HEADS, {"rid": c.rid, "n": HEAD_CHARS})
        columns = [c.title, heads["raw_text"] if heads else None, heads["formatted_text"] if heads else None]
        found = _snippet(query, columns)
    return _shaped(query, c, matched, found, segments)


def _snippet(query: Query, columns: list[str | None]) -> str:
    """Around the first match: in the formatted text (it reads best), else the raw text, else the title."""
    for text in reversed(columns):
        found = snippet(query, text) if text else None
        if found is not None:
            return found
    return preview(columns[0] or "")


def _moments(query: Query, segments: list[sqlite3.Row]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The segments that match best (most clauses, then most hits; the earlier on ties), and the first that matches."""
    scored = []
    for s in segments:
        folded = fold(s["text"])
        if query.first_match(folded) is not None:
            counts = query.phrase_counts(folded)
            scored.append(((-coverage(query, [float(n) for n in counts]), -sum(counts), s["seq"]), s))
    first = None
    if scored:
        s = scored[0][1]  # segments come in spoken order
        first = {"seq": s["seq"], "start_ms": s["start_ms"], "end_ms": s["end_ms"], "speaker": s["speaker"]}
    scored.sort(key=lambda item: item[0])
    moments = [
        {
            "seq": s["seq"],
            "start_ms": s["start_ms"],
            "end_ms": s["end_ms"],
            "speaker": s["speaker"],
            "snippet": snippet(query, s["text"]) or preview(s["text"]),
        }
        for _, s in scored[:MOMENTS]
    ]
    return moments, first


async def _by_speaker(
    db: Reader,
    query: Query,
    limit: int,
    filt: Filters,
    speaker: str,
    sort: Sort,
    progress: Callable[[int], None] | None,
) -> tuple[list[Candidate], int, dict[str, list[sqlite3.Row]]]:
    """Hits on what one speaker said: their matching segments, grouped by transcript and ranked."""
    await db.ensure_function("magnotia_fold", _fold_label)
    params: dict[str, Any] = {**filt, "speaker": speaker}
    if db.info.has_segment_fts:
        rows = await db.all(SPEAKER_FTS + where(filt), {**params, "match": query.fts_at_least(1)})
    else:
        rows = await _scan_speaker(db, query, where(filt), params, progress)
    said: dict[str, list[sqlite3.Row]] = {}
    for r in sorted(rows, key=lambda r: (r["transcript_id"], r["seq"])):
        said.setdefault(r["transcript_id"], []).append(r)
    docs = []
    for segments in said.values():
        text = fold("\n".join(s["text"] for s in segments))
        docs.append((segments[0], phrase_freqs(query, [text], [1.0]), token_count(text)))
    df = [sum(f[i] > 0 for _, f, _ in docs) for i in range(len(query.phrases))]
    scorer = Bm25(len(docs), sum(n for _, _, n in docs), df)
    cands = [
        Candidate(
            s["rid"], s["transcript_id"], s["title"], s["created_at"], s["source"], coverage(query, f), scorer(f, n)
        )
        for s, f, n in docs
    ]
    n = len(query.clauses)
    if sort == "relevance":
        ranked, among = rank_candidates(cands, n, limit)
        return ranked, among, said
    # In time order the score is the number of terms alone, as without a speaker.
    full = (c._replace(relevance=0.0) for c in cands if c.coverage == n)
    timed = sorted(full, key=lambda c: (c.created_at, c.id), reverse=sort == "newest")
    return timed[:limit], 0, said


async def _scan_speaker(
    db: Reader, query: Query, filters: str, params: dict[str, Any], progress: Callable[[int], None] | None
) -> list[sqlite3.Row]:
    """SPEAKER_SCAN's rows, read in batches of segments (by their id) so an interrupt can stop it."""
    await db.ensure_function("magnotia_any", _any_clause)
    rows: list[sqlite3.Row] = []
    transcripts: set[str] = set()  # progress counts transcripts, as the other scans do
    after = -1
    while True:
        batch = await db.all(
            SPEAKER_SCAN + filters + SPEAKER_BATCH,
            {**params, "q": query_text(query), "after": after, "batch": SCAN_BATCH},
        )
        rows += [r for r in batch if r["hit"]]
        transcripts.update(r["transcript_id"] for r in batch)
        if progress:
            progress(len(transcripts))
        if len(batch) < SCAN_BATCH:
            return rows
        after = batch[-1]["sid"]


def _fold_label(label: str | None) -> str | None:
    """``magnotia_fold``: a speaker label in the form labels are compared in (``speakers.speaker_key``)."""
    key = speaker_key(label) if label else ""
    return key or None


def _any_clause(q: str, text: str | None) -> int:
    """``magnotia_any``: 1 when any clause of the query matches text."""
    return int(text is not None and any(parse_cached(q).matched(fold(text))))
