"""Reading transcripts: list pages, one transcript's window, and ids for completion.

Statements are constants with ``:named`` parameters; optional filters are
separate constant fragments appended in a fixed order, so each filter
combination is one cached prepared statement and the planner still sees
plain range conditions it can use the schema's indexes for.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from magnotia_mcp.errors import NotFound
from magnotia_mcp.text import preview, window_end

if TYPE_CHECKING:  # only for annotations: importing the pool pulls in asyncio and sqlite3
    from magnotia_mcp.store.pool import Reader

# A transcript's speaker labels, each once, in order of first appearance: the
# segments are walked in seq order on the UNIQUE (transcript_id, seq) index and
# DISTINCT keeps the first of each (the ORDER BY of a FROM subquery is kept
# under json_group_array). Correlated to transcripts.id, so it runs only for the
# rows a statement returns: a list page's rows, not the rows its filters skip.
# Measured on a 10k store against one query for the page's ids (json_each), and
# against GROUP BY speaker ORDER BY min(seq): this was the cheapest of the three,
# most of all on long meetings (about 5 ms for a 20,000-segment transcript).
SPEAKERS_JSON = (
    "(SELECT json_group_array(DISTINCT speaker)"
    " FROM (SELECT speaker FROM segments WHERE transcript_id = transcripts.id AND speaker IS NOT NULL"
    " ORDER BY seq)) AS speakers_json"
)

# 801 characters: one more than the preview reads, so it knows the text goes on.
LIST_TRANSCRIPTS = (
    "SELECT id, title, source, language, created_at, duration_ms,"
    " substr(coalesce(formatted_text, raw_text), 1, 801) AS head, " + SPEAKERS_JSON + " FROM transcripts WHERE 1"
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
# Without segments the speakers are read in SQL; with them, from those (one walk of the segments, not two).
GET_TRANSCRIPT = _TRANSCRIPT_COLUMNS + _TASKS_JSON + ", " + SPEAKERS_JSON + _ONE_LIVE
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
            "speakers": json.loads(r["speakers_json"]),
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
        result["speakers"] = list(dict.fromkeys(s[3] for s in segments if s[3] is not None))
        result["segments"] = _segments_in_window(segments, row["raw_text"], used == "raw", total, start, end)
    else:
        result["speakers"] = json.loads(row["speakers_json"])
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
