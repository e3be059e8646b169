"""Every SQL statement the server runs, and the shaping of rows into results.

Statements are constants with ``:named`` parameters; optional filters are
separate constant fragments appended in a fixed order, so each filter
combination is one cached prepared statement and the planner still sees
plain range conditions it can use the schema's indexes for.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable, Iterable
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from magnotia_mcp.errors import NotFound
from magnotia_mcp.querylang import Query, fold, snippet, sql_match
from magnotia_mcp.text import preview, window_end

if TYPE_CHECKING:  # only for annotations: importing the store pulls in asyncio and sqlite3
    import sqlite3

    from magnotia_mcp.store import Reader

LIVE = "deleted_at IS NULL"

# -- transcripts --------------------------------------------------------------

# 801 characters: one more than the preview reads, so it knows the text goes on.
LIST_TRANSCRIPTS = (
    "SELECT id, title, source, language, created_at, duration_ms,"
    " substr(coalesce(formatted_text, raw_text), 1, 801) AS head"
    " FROM transcripts WHERE 1"
)
SINCE = " AND created_at >= :since"
UNTIL = " AND created_at < :until"
SOURCE = " AND source = :source"
AFTER_TRANSCRIPT = " AND (created_at, id) < (:after_created, :after_id)"
NEWEST_FIRST = " ORDER BY created_at DESC, id DESC LIMIT :limit"
LIVE_ONLY = " AND deleted_at IS NULL"

# One statement per call: a single snapshot, and one trip to the reader thread.
_TASKS_JSON = (
    "(SELECT json_group_array(json_object('id', id, 'title', title, 'status', status, 'due_at', due_at))"
    " FROM (SELECT id, title, status, due_at FROM tasks WHERE transcript_id = :id"
    " ORDER BY status = 'done', due_at IS NULL, due_at, created_at DESC, id DESC)) AS tasks_json"
)
_SEGMENTS_JSON = (
    "(SELECT json_group_array(json_array(seq, start_ms, end_ms, speaker, text))"
    " FROM (SELECT seq, start_ms, end_ms, speaker, text FROM segments WHERE transcript_id = :id"
    " ORDER BY seq)) AS segments_json"
)
_TRANSCRIPT_COLUMNS = (
    "SELECT id, title, source, language, model, created_at, updated_at, duration_ms, raw_text, formatted_text, "
)
_ONE_LIVE = " FROM transcripts WHERE id = :id AND deleted_at IS NULL"
GET_TRANSCRIPT = _TRANSCRIPT_COLUMNS + _TASKS_JSON + _ONE_LIVE
GET_TRANSCRIPT_WITH_SEGMENTS = _TRANSCRIPT_COLUMNS + _TASKS_JSON + ", " + _SEGMENTS_JSON + _ONE_LIVE


def _filters(since: str | None, until: str | None, source: str | None) -> str:
    return (SINCE if since else "") + (UNTIL if until else "") + (SOURCE if source else "")


async def list_transcripts(
    db: Reader,
    *,
    limit: int,
    after: tuple[str, str] | None = None,
    since: str | None = None,
    until: str | None = None,
    source: str | None = None,
) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    """A page of live transcripts, newest first, and the key to continue after (or None)."""
    # The cheap filters come first: deleted_at sits after the texts in each row, so
    # reading it walks their overflow pages; rows another filter rejects skip that.
    sql = (
        LIST_TRANSCRIPTS
        + _filters(since, until, source)
        + (AFTER_TRANSCRIPT if after else "")
        + LIVE_ONLY
        + NEWEST_FIRST
    )
    params: dict[str, Any] = {"since": since, "until": until, "source": source, "limit": limit + 1}
    if after:
        params["after_created"], params["after_id"] = after
    rows = await db.all(sql, params)
    page = [
        {
            "id": r["id"],
            "title": r["title"],
            "source": r["source"],
            "language": r["language"],
            "created_at": r["created_at"],
            "duration_ms": r["duration_ms"],
            "preview": preview(r["head"] or ""),
        }
        for r in rows[:limit]
    ]
    more = len(rows) > limit
    return page, ((page[-1]["created_at"], page[-1]["id"]) if more else None)


async def get_transcript(
    db: Reader,
    *,
    transcript_id: str,
    fmt: str,
    offset: int,
    max_chars: int,
    include_segments: bool,
) -> dict[str, Any]:
    """One live transcript with a window of its text, or NotFound."""
    row = await db.one(GET_TRANSCRIPT_WITH_SEGMENTS if include_segments else GET_TRANSCRIPT, {"id": transcript_id})
    if row is None:
        raise NotFound(f"Transcript {transcript_id} not found")
    formatted = row["formatted_text"]
    used = "formatted" if fmt == "formatted" and formatted is not None else "raw"
    text: str = formatted if used == "formatted" else row["raw_text"]
    total = len(text)
    start = min(offset, total)
    end = window_end(text, start, max_chars)
    result: dict[str, Any] = {
        "id": row["id"],
        "title": row["title"],
        "source": row["source"],
        "language": row["language"],
        "model": row["model"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "duration_ms": row["duration_ms"],
        "format": used,
        "text": text[start:end],
        "offset": start,
        "total_chars": total,
        "next_offset": end if end < total else None,
    }
    if include_segments:
        segments = json.loads(row["segments_json"])
        result["segments"] = _segments_in_window(segments, row["raw_text"], used == "raw", total, start, end)
    result["tasks"] = json.loads(row["tasks_json"])
    return result


def _segments_in_window(
    segments: list[list[Any]], raw_text: str, is_raw: bool, total: int, start: int, end: int
) -> list[dict[str, Any]]:
    """The segments whose text overlaps [start, end) of the text returned.

    Segments are placed in the raw text by finding each one after the
    previous; the formatted text has no such mapping, so positions there are
    scaled from the raw text's length.
    """
    out: list[dict[str, Any]] = []
    pos = 0
    scale = 1.0 if is_raw else total / max(len(raw_text), 1)
    for seq, start_ms, end_ms, speaker, text in segments:
        found = raw_text.find(text, pos) if text else -1
        seg_start = found if found != -1 else pos
        seg_end = seg_start + len(text)
        if found != -1:
            pos = seg_end
        a, b = seg_start * scale, seg_end * scale
        if (b > start and a < end) or (a == b and start <= a < end):
            out.append({"seq": seq, "start_ms": start_ms, "end_ms": end_ms, "speaker": speaker, "text": text})
    return out


# -- search --------------------------------------------------------------------

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
        rowids = json.dumps([r[0] for r in first])
        return await db.all(FTS_HITS + _where(filt) + FTS_FEW_ORDER, {**filt, "rowids": rowids, "limit": limit})
    row = await db.one(FTS_MATCH_COUNT, {"match": match, "cap": most + 1})
    count = row[0] if row is not None else 0
    if count <= most or prefix:
        sql = FTS_HITS_NEWEST_FIRST + _where(filt) + FTS_HITS_ORDER
    else:
        sql = FTS_HITS_PROBING + _where(filt) + FTS_HITS_ORDER
    return await db.all(sql, {**filt, "match": match, "limit": limit})


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


# -- tasks --------------------------------------------------------------------

# Open before done, dated before undated (earliest due first), then newest first.
# The order is read as four segments, each a plain range of the schema's
# tasks(status, due_at) index: open+dated, open+undated, done+dated,
# done+undated. The first page of open tasks never sorts more than its own rows;
# only undated segments sort (created_at has no index). Transcript titles are
# looked up for the page's rows alone: reaching a transcript's deleted_at walks
# its text's overflow pages, far too slow to do for every task.
_TASK_COLUMNS = "SELECT id, title, notes, status, priority, due_at, created_at, completed_at, transcript_id FROM tasks"
TASKS_DATED = _TASK_COLUMNS + " WHERE status = :status AND due_at IS NOT NULL"
TASKS_UNDATED = _TASK_COLUMNS + " WHERE status = :status AND due_at IS NULL"
# One transcript has a handful of tasks: find them by tasks_by_transcript (the
# unary + keeps the planner off the status/due index) and sort those few.
TASKS_DATED_OF = _TASK_COLUMNS + " WHERE transcript_id = :transcript_id AND +status = :status AND +due_at IS NOT NULL"
TASKS_UNDATED_OF = _TASK_COLUMNS + " WHERE transcript_id = :transcript_id AND +status = :status AND +due_at IS NULL"
TASK_DUE_BEFORE = " AND due_at < :due_before"
AFTER_DATED = (
    " AND due_at >= :a_due AND (due_at > :a_due OR created_at < :a_created OR (created_at = :a_created AND id < :a_id))"
)
AFTER_UNDATED = " AND (created_at < :a_created OR (created_at = :a_created AND id < :a_id))"
DATED_ORDER = " ORDER BY due_at, created_at DESC, id DESC LIMIT :limit"
UNDATED_ORDER = " ORDER BY created_at DESC, id DESC LIMIT :limit"
LIVE_TITLES = "SELECT id, title FROM transcripts WHERE id IN ({marks}) AND deleted_at IS NULL"

# (status, undated) in the contract's order.
_SEGMENTS = (("open", 0), ("open", 1), ("done", 0), ("done", 1))

TaskKey = tuple[int, int, str, str, str]


async def list_tasks(
    db: Reader,
    *,
    limit: int,
    status: str = "all",
    transcript_id: str | None = None,
    due_before: str | None = None,
    after: TaskKey | None = None,
) -> tuple[list[dict[str, Any]], TaskKey | None]:
    """A page of tasks in the contract's order, and the key to continue after (or None)."""
    rows: list[sqlite3.Row] = []
    for seg_status, undated in _SEGMENTS:
        if status not in ("all", seg_status) or (undated and due_before):
            continue  # due_before excludes undated tasks
        seg_key = (int(seg_status == "done"), undated)
        if after is not None and seg_key < after[:2]:
            continue  # the cursor is past this whole segment
        within = after is not None and seg_key == after[:2]
        if transcript_id:
            sql = TASKS_UNDATED_OF if undated else TASKS_DATED_OF
        else:
            sql = TASKS_UNDATED if undated else TASKS_DATED
        sql += TASK_DUE_BEFORE if due_before and not undated else ""
        if within:
            sql += AFTER_UNDATED if undated else AFTER_DATED
        sql += UNDATED_ORDER if undated else DATED_ORDER
        params: dict[str, Any] = {
            "status": seg_status,
            "transcript_id": transcript_id,
            "due_before": due_before,
            "limit": limit + 1 - len(rows),
        }
        if within and after is not None:
            params.update(a_due=after[2], a_created=after[3], a_id=after[4])
        rows += await db.all(sql, params)
        if len(rows) > limit:
            break
    page_rows = rows[:limit]
    linked = sorted({r["transcript_id"] for r in page_rows if r["transcript_id"] is not None})
    titles: dict[str, str] = {}
    if linked:
        marks = ",".join("?" * len(linked))
        titles = {r["id"]: r["title"] for r in await db.all(LIVE_TITLES.format(marks=marks), linked)}
    page = [
        {
            "id": r["id"],
            "title": r["title"],
            "notes": r["notes"],
            "status": r["status"],
            "priority": r["priority"],
            "due_at": r["due_at"],
            "created_at": r["created_at"],
            "completed_at": r["completed_at"],
            "transcript": (
                {"id": r["transcript_id"], "title": titles[r["transcript_id"]]}
                if r["transcript_id"] in titles
                else None
            ),
        }
        for r in page_rows
    ]
    if len(rows) <= limit:
        return page, None
    last = page[-1]
    key: TaskKey = (
        int(last["status"] == "done"),
        int(last["due_at"] is None),
        last["due_at"] or "",
        last["created_at"],
        last["id"],
    )
    return page, key


# -- completion -----------------------------------------------------------------

# Transcript ids for a prompt or resource argument: id prefix or title words, newest first.
COMPLETE_TRANSCRIPT_IDS = (
    "SELECT id FROM transcripts WHERE deleted_at IS NULL"
    " AND (id LIKE :prefix ESCAPE '\\' OR title LIKE :contains ESCAPE '\\')"
    " ORDER BY created_at DESC, id DESC LIMIT :limit"
)


def _like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def complete_transcript_ids(db: Reader, value: str, limit: int) -> list[str]:
    """Ids of live transcripts whose id starts with value or whose title contains it."""
    v = _like_escape(value)
    rows = await db.all(COMPLETE_TRANSCRIPT_IDS, {"prefix": v + "%", "contains": "%" + v + "%", "limit": limit})
    return [r["id"] for r in rows]
