"""The SQL behind search hits: their texts and segments, and a speaker's segments that may match.

Rows only: ``search.hits`` shapes them into hits (snippets, moments, matched
terms). The query comes as FTS5 expressions, or as its text plus the functions
that match it inside SQLite when a store has no segment index.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnotia_mcp.store import layouts
from magnotia_mcp.store.plans import HIT_COLUMNS, SCAN_BATCH, Filters, query_text, where
from magnotia_mcp.store.transcripts import SHORT, SPEAKER_LIST

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store.reader import Reader

# A short hit's texts come whole; a long one's (NULL here) are not read at all: see search.hits.
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
# A term restricted to the title: every segment of the speaker in the transcripts whose title has it.
SPEAKER_TITLE_FTS = (
    "SELECT" + _SPEAKER_SEGMENTS + " FROM transcripts_fts AS f JOIN transcripts AS t ON t.rowid = f.rowid"
    " JOIN segments AS s ON s.transcript_id = t.id"
    " WHERE f.transcripts_fts MATCH :title_match AND t.deleted_at IS NULL"
    " AND magnotia_fold(CAST(s.speaker AS BLOB)) = :speaker"
)
# Without a segment index: every segment of the speaker, matched (with its transcript's title) on the reader thread.
SPEAKER_SCAN = (
    "SELECT s.id AS sid," + _SPEAKER_SEGMENTS + ", magnotia_any(:q, CAST(s.text AS BLOB), CAST(t.title AS BLOB)) AS hit"
    " FROM segments AS s JOIN transcripts AS t ON t.id = s.transcript_id"
    " WHERE t.deleted_at IS NULL AND magnotia_fold(CAST(s.speaker AS BLOB)) = :speaker AND s.id > :after"
)
SPEAKER_BATCH = " ORDER BY s.id LIMIT :batch"


# The transcripts the semantic index found, as the store has them now: a transcript trashed or purged since
# the index was built is not among them, whatever the index says. With what a search compares to the index's
# stamp (semantic.found.mark), read as the index's stamp reads them: updated_at as text, whether there is a
# formatted text, the segments counted by the (transcript_id, seq) index: none of them measures a text.
NEAR_KEYS = (
    f"SELECT {HIT_COLUMNS}, coalesce(t.updated_at, '') || '' AS updated, t.formatted_text IS NOT NULL AS formatted,"
    " (SELECT count(*) FROM segments AS s WHERE s.transcript_id = t.id) AS said FROM transcripts AS t"
    " WHERE t.id IN (SELECT value FROM json_each(:ids)) AND t.deleted_at IS NULL"
)
# One speaker's segments in the transcripts the semantic index found (live ones only): the windows of theirs
# that count when a search is restricted to that speaker. By the (transcript_id, seq) index, transcript by
# transcript: first the labels there (a handful), folded in Python; then the segments with the labels that fold
# to the speaker's, compared as bytes in SQLite (not a Python call for each of 200 transcripts' segments).
SPEAKER_LABELS = (
    "SELECT DISTINCT CAST(s.speaker AS BLOB) AS label FROM json_each(:ids) AS j"
    " CROSS JOIN segments AS s ON s.transcript_id = j.value WHERE s.speaker IS NOT NULL"
)
# Only segments with a word count: a window holds none of the blank ones (semantic.chunks drops them), so one
# whose seqs merely span a blank segment of theirs is not theirs. Blank as Python's str.strip() has it: the
# characters str.isspace() is true of (tests/unit/store/test_hits.py checks the list), trimmed by SQLite.
BLANK = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
SPEAKER_NEAR = (
    "SELECT s.transcript_id, s.seq FROM json_each(:ids) AS j CROSS JOIN segments AS s ON s.transcript_id = j.value"
    " JOIN transcripts AS t ON t.id = s.transcript_id"
    " WHERE t.deleted_at IS NULL AND CAST(s.speaker AS BLOB) IN ({marks}) AND trim(s.text, :blank) <> ''"
)
# The segments the cited chunks of a page's hits span: (transcript id, seq) pairs, looked up one by one
# in the (transcript_id, seq) index, for every hit in one query.
CHUNK_SEGMENTS = (
    "SELECT s.transcript_id, s.seq, s.start_ms, s.end_ms, s.speaker, s.text FROM json_each(:pairs) AS p"
    " CROSS JOIN segments AS s ON s.transcript_id = json_extract(p.value, '$[0]')"
    " AND s.seq = json_extract(p.value, '$[1]')"
)
# The text a transcript without segments is embedded from (semantic.build): its formatted text, else its raw one.
EMBEDDED_TEXT = "coalesce(nullif(t.formatted_text, ''), t.raw_text, '')"
# A transcript as it is embedded: its title, its text, and its segments as (seq, start_ms, end_ms, speaker, text).
Contents = tuple[str, str, list[tuple[int, int | None, int | None, str | None, str | None]]]
SPANNED = 200  # segments read for one chunk at most (a chunk is ~30 words: a few segments, never this many)


# Who spoke in a page's hits and how long each ran, in one statement for the page: the speakers as
# list_transcripts gives them, read here only for a short transcript not listed (or hit) before in this
# generation; a known one's come from layouts.LISTED_FACTS, a long one's from the layouts cache.
ABOUT = (
    "SELECT id, duration_ms, magnotia_seen(id) AS seen,"
    f" CASE WHEN magnotia_seen(id) IS NULL AND {SHORT} THEN {SPEAKER_LIST} END AS speakers_json"
    " FROM transcripts WHERE id IN (SELECT value FROM json_each(:ids))"
)


async def about(db: Reader, ids: list[str]) -> dict[str, dict[str, Any]]:
    """By id, the speakers and duration_ms of the transcripts of a page of hits."""
    known = layouts.LISTED_FACTS.entries(db)
    await db.ensure_function("magnotia_seen", layouts.LISTED_FACTS.seen(db))
    rows = await db.all(ABOUT, {"ids": json.dumps(ids), "long": layouts.LONG_TEXT_BYTES})
    found = {}
    for r in rows:
        long = bool(r["seen"]) if r["seen"] is not None else r["speakers_json"] is None
        names = await layouts.speakers_of(db, known, r["id"], r["speakers_json"], long)
        found[r["id"]] = {"speakers": list(names), "duration_ms": r["duration_ms"]}
    return found


async def near(db: Reader, ids: list[str], filt: Filters) -> dict[str, sqlite3.Row]:
    """By id, the live transcripts among ids that pass the filters."""
    rows = await db.all(NEAR_KEYS + where(filt), {**filt, "ids": json.dumps(ids)})
    return {r["id"]: r for r in rows}


# The live transcripts that pass a search's filters: a time range is found by transcripts_by_created, and each row
# in it is read for deleted_at, which comes after the texts (at 100k: 15 ms for the newest 11%, 80 ms for a source
# of 10% over all rows).
PASSING = "SELECT t.id FROM transcripts AS t WHERE t.deleted_at IS NULL"


async def passing(db: Reader, filt: Filters) -> list[str]:
    """The ids of the live transcripts that pass the filters (a search by meaning's, when its nearest overall
    hold too few that do)."""
    rows = await db.all(PASSING + where(filt), filt)
    return [r["id"] for r in rows]


async def speaker_near(
    db: Reader, ids: list[str], speaker: str, fold_label: Callable[[str | None], str | None]
) -> dict[str, set[int]]:
    """By transcript id, among ids (those still live: ids passed the filters already), the seqs of the segments
    with words that one speaker said."""
    found = await db.all(SPEAKER_LABELS, {"ids": json.dumps(ids)})
    # Decoded as the reader decodes text (a bad byte replaced), as magnotia_fold gets a label elsewhere.
    labels = [r["label"] for r in found if fold_label(r["label"].decode("utf-8", "replace")) == speaker]
    if not labels:
        return {}
    marks = {f"l{k}": label for k, label in enumerate(labels)}
    query = SPEAKER_NEAR.format(marks=",".join(":" + m for m in marks))
    rows = await db.all(query, {**marks, "ids": json.dumps(ids), "blank": BLANK})
    said: dict[str, set[int]] = {}
    for r in rows:
        said.setdefault(r["transcript_id"], set()).add(r["seq"])
    return said


async def chunk_segments(db: Reader, spans: dict[str, list[tuple[int, int]]]) -> dict[str, list[list[sqlite3.Row]]]:
    """By transcript, for each of its (first, last) spans, its segments seq first..last in spoken order.

    One query for all the transcripts: a page cites up to 3 chunks in each of its hits, and a read per hit
    cost a round trip to SQLite's thread each.
    """

    def seqs(first: int, last: int) -> range:
        return range(first, min(last, first + SPANNED - 1) + 1)

    pairs = sorted({(tid, seq) for tid, own in spans.items() for first, last in own for seq in seqs(first, last)})
    found = await db.all(CHUNK_SEGMENTS, {"pairs": json.dumps(pairs)}) if pairs else []
    rows = {(r["transcript_id"], r["seq"]): r for r in found}
    return {
        tid: [[rows[(tid, seq)] for seq in seqs(first, last) if (tid, seq) in rows] for first, last in own]
        for tid, own in spans.items()
    }


async def contents(db: Reader, ids: list[str]) -> dict[str, Contents]:
    """By id, what the live ones of ids are embedded from (semantic.build): title, text, segments in spoken order."""
    heads = await db.all(
        f"SELECT t.id, coalesce(t.title, '') AS title, {EMBEDDED_TEXT} AS text FROM transcripts t"
        " WHERE t.id IN (SELECT value FROM json_each(:ids)) AND t.deleted_at IS NULL",
        {"ids": json.dumps(ids)},
    )
    found: dict[str, Contents] = {r["id"]: (r["title"], r["text"], []) for r in heads}
    for s in await db.all(HIT_SEGMENTS.format(marks=",".join("?" * len(found))), list(found)):
        found[s["transcript_id"]][2].append((s["seq"], s["start_ms"], s["end_ms"], s["speaker"], s["text"]))
    return found


async def embedded_text(db: Reader, tid: str) -> str | None:
    """The text a live transcript's windows without segments were cut from; None once it is gone or in the trash."""
    row = await db.one(
        f"SELECT {EMBEDDED_TEXT} AS text FROM transcripts t WHERE t.id = ? AND t.deleted_at IS NULL", [tid]
    )
    return None if row is None else str(row["text"])


async def texts(db: Reader, rids: list[int]) -> dict[int, sqlite3.Row]:
    """By rowid, the raw and formatted texts of a few hits; both NULL for a long one, read by the index instead.

    In scan mode every text is read anyway, so every hit is read whole.
    """
    marks = {f"r{k}": rid for k, rid in enumerate(rids)}
    long_bytes = layouts.LONG_TEXT_BYTES if db.has_fts else None
    rows = await db.all(HIT_TEXTS.format(marks=",".join(":" + m for m in marks)), {**marks, "long": long_bytes})
    return {r["rid"]: r for r in rows}


async def segments(db: Reader, ids: list[str]) -> dict[str, list[sqlite3.Row]]:
    """By transcript id, the segments of a few transcripts in spoken order."""
    found: dict[str, list[sqlite3.Row]] = {}
    for s in await db.all(HIT_SEGMENTS.format(marks=",".join("?" * len(ids))), ids):
        found.setdefault(s["transcript_id"], []).append(s)
    return found


async def clauses_hit(db: Reader, rid: int, clauses: list[str]) -> list[bool]:
    """For each clause's FTS5 expression, whether the transcript at rowid rid matches it."""
    flags = ", ".join(_CLAUSE_HIT.format(k=k) + f" AS m{k}" for k in range(len(clauses)))
    row = await db.one(f"SELECT {flags}", {"rid": rid, **{f"c{k}": m for k, m in enumerate(clauses)}})
    return [bool(row[f"m{k}"]) for k in range(len(clauses))] if row else [False] * len(clauses)


async def matching_segments(db: Reader, transcript_id: str, match: str) -> list[sqlite3.Row]:
    """A long transcript's segments matching match (at most MATCHING), in spoken order; on an older store, all."""
    if db.info.has_segment_fts:
        ids = await layouts.segment_ids(db, transcript_id)
        if ids is None:
            return []
        params = {"match": match, "lo": ids[0], "hi": ids[1], "id": transcript_id, "most": MATCHING}
        return await db.all(LONG_HIT_SEGMENTS, params)
    # An older store: its segments are read, the text still is not.
    return await db.all(HIT_SEGMENTS.format(marks="?"), [transcript_id])


async def heads(db: Reader, rid: int) -> sqlite3.Row | None:
    """The first HEAD_CHARS characters of a transcript's raw and formatted texts."""
    return await db.one(LONG_HIT_HEADS, {"rid": rid, "n": HEAD_CHARS})


async def speaker_segments(
    db: Reader,
    speaker: str,
    filt: Filters,
    *,
    match: str | None,
    title_match: str | None = None,
    text: str,
    fold_label: Callable[[str | None], str | None],
    any_clause: Callable[[str, str | None, str | None], int],
    progress: Callable[[int], None] | None,
) -> list[sqlite3.Row]:
    """The live segments of one speaker (labels as fold_label gives them) that may match the query.

    By the segment index (match: what a segment may match, its terms not restricted to the title)
    and, with terms restricted to the title (title_match), every segment of theirs in the transcripts
    whose title has one; else by a scan matching the query's text with any_clause on the reader thread.
    """
    await db.ensure_function("magnotia_fold", fold_label)
    params: dict[str, Any] = {**filt, "speaker": speaker}
    if db.info.has_segment_fts and (title_match is None or db.info.has_fts):
        rows = await db.all(SPEAKER_FTS + where(filt), {**params, "match": match}) if match is not None else []
        if title_match is None:
            return rows
        seen = {(r["transcript_id"], r["seq"]) for r in rows}
        titled = await db.all(SPEAKER_TITLE_FTS + where(filt), {**params, "title_match": title_match})
        return rows + [r for r in titled if (r["transcript_id"], r["seq"]) not in seen]
    return await _scan_speaker(db, text, any_clause, where(filt), params, progress)


async def _scan_speaker(
    db: Reader,
    text: str,
    any_clause: Callable[[str, str | None, str | None], int],
    filters: str,
    params: dict[str, Any],
    progress: Callable[[int], None] | None,
) -> list[sqlite3.Row]:
    """SPEAKER_SCAN's rows, read in batches of segments (by their id) so an interrupt can stop it."""
    await db.ensure_function("magnotia_any", any_clause)
    rows: list[sqlite3.Row] = []
    transcripts: set[str] = set()  # progress counts transcripts, as the other scans do
    after = -1
    while True:
        batch = await db.all(
            SPEAKER_SCAN + filters + SPEAKER_BATCH,
            {**params, "q": query_text(text), "after": after, "batch": SCAN_BATCH},
        )
        rows += [r for r in batch if r["hit"]]
        transcripts.update(r["transcript_id"] for r in batch)
        if progress:
            progress(len(transcripts))
        if len(batch) < SCAN_BATCH:
            return rows
        after = batch[-1]["sid"]
