"""Reading transcripts: list pages, one transcript's window, and ids for completion.

Where a window falls (its characters and segments) is ``windows``; reading it is here.

Statements are constants with ``:named`` parameters; optional filters are
separate constant fragments appended in a fixed order, so each filter
combination is one cached prepared statement and the planner still sees
plain range conditions it can use the schema's indexes for.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnotia_mcp.errors import NotFound, named
from magnotia_mcp.store import layouts
from magnotia_mcp.store.windows import NOWHERE, Read, Window, bounds, fields, piece_of, raw_range, reach, segment, short
from magnotia_mcp.text import preview, stored_text, window_end

if TYPE_CHECKING:  # only for annotations: importing the reader pulls in asyncio and sqlite3
    from magnotia_mcp.store.reader import Reader

# A transcript's speaker labels, each once, in order of first appearance: the
# segments are walked in seq order on the UNIQUE (transcript_id, seq) index and
# DISTINCT keeps the first of each (the ORDER BY of a FROM subquery is kept
# under json_group_array). Correlated to transcripts.id, so it runs only for the
# rows a statement returns: a list page's rows, not the rows its filters skip.
# Measured on a 10k store against one query for the page's ids (json_each), and
# against GROUP BY speaker ORDER BY min(seq): this was the cheapest of the three.
# It still walks every segment (about 5 ms for a 21,000-segment meeting), so a
# long transcript's speakers come from ``layouts`` instead: SHORT guards it.
SPEAKER_LIST = (
    "(SELECT json_group_array(DISTINCT speaker)"
    " FROM (SELECT speaker FROM segments WHERE transcript_id = transcripts.id AND speaker IS NOT NULL"
    " ORDER BY seq))"
)
# Whether a row's raw text is short enough to read whole: its size in bytes is in
# the record header, so this reads no text (see layouts.LONG_TEXT_BYTES).
# :long NULL reads every text whole.
SHORT = "(:long IS NULL OR length(CAST(raw_text AS BLOB)) <= :long)"
SPEAKERS_JSON = f"CASE WHEN {SHORT} THEN {SPEAKER_LIST} END AS speakers_json"

# 801 characters: one more than the preview reads, so it knows the text goes on. A long row's
# comes from ``layouts`` (reaching its formatted text walks the raw text's overflow pages).
HEAD_CHARS = 801
# A row listed before in this generation (``layouts.Listed``) is known short (0) or long (1):
# neither its length is measured again nor its speakers walked.
LIST_TRANSCRIPTS = (
    "SELECT id, title, source, language, created_at, duration_ms,"
    f" CASE WHEN coalesce(magnotia_seen(id) = 0, {SHORT})"
    f" THEN substr(coalesce(formatted_text, raw_text), 1, {HEAD_CHARS}) END AS head,"
    f" CASE WHEN magnotia_seen(id) IS NULL AND {SHORT} THEN {SPEAKER_LIST} END AS speakers_json"
    " FROM transcripts WHERE 1"
)
SINCE = " AND created_at >= :since"
UNTIL = " AND created_at < :until"
SOURCE = " AND source = :source"
# Only transcripts in which one named speaker spoke (one such term per name: all of them did): its segments
# walked on the (transcript_id, seq) index until a label folds to the name, as search_transcripts' speaker.
SPOKE = (
    " AND EXISTS (SELECT 1 FROM segments AS s WHERE s.transcript_id = transcripts.id AND s.speaker IS NOT NULL"
    " AND magnotia_fold(CAST(s.speaker AS BLOB)) = :spoke{k})"
)
AFTER_TRANSCRIPT = " AND (created_at, id) < (:after_created, :after_id)"
NEWEST_FIRST = " ORDER BY created_at DESC, id DESC LIMIT :limit"
LIVE_ONLY = " AND deleted_at IS NULL"

# One statement per call: a single snapshot, and one trip to the reader thread. JSON cannot hold a BLOB, and a
# due_at may be one (a broken writer's): it is read as text.
_TASKS_JSON = (
    "(SELECT json_group_array(json_object('id', id, 'title', title, 'status', status, 'due_at', CAST(due_at AS TEXT)))"
    " FROM (SELECT id, title, status, due_at FROM tasks WHERE transcript_id = :id"
    " ORDER BY status = 'done', due_at IS NULL, due_at, created_at DESC, id DESC)) AS tasks_json"
)
_SEGMENTS = (
    "(SELECT json_group_array(json_array(seq, start_ms, end_ms, speaker, text))"
    " FROM (SELECT seq, start_ms, end_ms, speaker, text FROM segments WHERE transcript_id = :id"
    " ORDER BY seq))"
)
# A short transcript comes whole: its texts, and its segments or its speakers. A long one
# comes without them (NULL), and is read by window.
_TRANSCRIPT = (
    "SELECT id, title, source, language, model, created_at, updated_at, duration_ms,"
    f" CASE WHEN {SHORT} THEN raw_text END AS raw_text, CASE WHEN {SHORT} THEN formatted_text END AS formatted_text,"
    f" {_TASKS_JSON}, "
)
_ONE_LIVE = " FROM transcripts WHERE id = :id AND deleted_at IS NULL"
# A long transcript whose layout is known (layouts.known_times): the columns before its texts only.
GET_LONG_TRANSCRIPT = f"SELECT id, title, source, language, model, duration_ms, NULL AS raw_text, {_TASKS_JSON}"
GET_LONG_TRANSCRIPT += _ONE_LIVE
# Without segments the speakers are read in SQL; with them, from those (one walk of the segments, not two).
GET_TRANSCRIPT = _TRANSCRIPT + SPEAKERS_JSON + _ONE_LIVE
GET_TRANSCRIPT_WITH_SEGMENTS = _TRANSCRIPT + f"CASE WHEN {SHORT} THEN {_SEGMENTS} END AS segments_json" + _ONE_LIVE
# Characters read past a window's end, so that it can end on a safe boundary.
_SLACK = 64


def _filters(since: str | None, until: str | None, source: str | None, speakers: int = 0) -> str:
    spoke = "".join(SPOKE.format(k=k) for k in range(speakers))
    return (SINCE if since else "") + (UNTIL if until else "") + (SOURCE if source else "") + spoke


async def list_transcripts(
    db: Reader,
    *,
    limit: int,
    after: tuple[str, str] | None = None,
    since: str | None = None,
    until: str | None = None,
    source: str | None = None,
    wanted: Callable[[list[dict[str, Any]]], int] | None = None,
    speakers: tuple[list[str], Callable[[str | None], str | None]] | None = None,
    previews: bool = True,
) -> tuple[list[dict[str, Any]], tuple[str, str] | None, int]:
    """A page of live transcripts, newest first, the key to continue after (or None), and the page's length.

    wanted(page), when given, is asked after each chunk of rows (``FIRST_CHUNK`` first) how many more
    the answer may carry; once it says none, no more are read, since each costs its preview and its
    speakers. The page is then shorter than limit; the length returned is
    still the page's whole length (counted, not read). Chunks are read in one transaction: every
    statement sees the same snapshot. speakers: the names (as fold_label gives labels) who all
    spoke in each transcript listed, and fold_label. previews: False leaves each row's preview out.
    """
    names, fold_label = speakers or ([], None)
    filters = _filters(since, until, source, len(names))
    params: dict[str, Any] = {"since": since, "until": until, "source": source, "long": layouts.LONG_TEXT_BYTES}
    params.update({f"spoke{k}": name for k, name in enumerate(names)})
    if fold_label is not None:
        await db.ensure_function("magnotia_fold", fold_label)
    known = layouts.LISTED_FACTS.entries(db)
    await db.ensure_function("magnotia_seen", layouts.LISTED_FACTS.seen(db))
    page: list[dict[str, Any]] = []
    key, chunk = after, limit if wanted is None else min(limit, FIRST_CHUNK)
    chunked = chunk < limit
    if chunked:
        await db.all("BEGIN")
    try:
        while True:
            params["after_created"], params["after_id"] = key or (None, None)
            params["limit"] = chunk + 1
            sql = LIST_TRANSCRIPTS + filters + (AFTER_TRANSCRIPT if key else "") + LIVE_ONLY + NEWEST_FIRST
            rows = await db.all(sql, params)
            page += [await _listed(db, r, known, previews) for r in rows[:chunk]]
            more = len(rows) > chunk
            key = (page[-1]["created_at"], page[-1]["id"]) if more else None
            if not more or len(page) == limit:
                return page, key, len(page)
            chunk = min(limit - len(page), wanted(page) if wanted else limit)
            if chunk <= 0:
                break
        params["after_created"], params["after_id"] = after or (None, None)
        params["limit"] = limit
        count = "SELECT count(*) AS n FROM (SELECT 1" + _COUNTED + filters + (AFTER_TRANSCRIPT if after else "")
        row = await db.one(count + LIVE_ONLY + NEWEST_FIRST + ")", params)
        return page, key, row["n"] if row else len(page)
    finally:
        if chunked and not db.retired:  # a retired connection is closed, and its transaction with it
            await db.all("COMMIT")


# The rows of a page read at first, when the answer may not hold them all: the default page is 20.
FIRST_CHUNK = 24
_COUNTED = " FROM transcripts WHERE 1"


async def _listed(db: Reader, r: Any, known: Any, previews: bool) -> dict[str, Any]:
    """One list row as the answer shows it; a long transcript's head and speakers come from the cache."""
    transcript_id, head = r["id"], r["head"]
    long = head is None
    if long and previews:  # a long transcript: its head comes from the cache
        head = await layouts.head(db, transcript_id, HEAD_CHARS)
    speakers = await layouts.speakers_of(db, known, transcript_id, r["speakers_json"], long)
    listed = {
        "id": transcript_id,
        "title": r["title"],
        "source": r["source"],
        "language": r["language"],
        "created_at": stored_text(r["created_at"]),
        "duration_ms": r["duration_ms"],
        "preview": preview(head or ""),
        "speakers": list(speakers),  # the answer's own: fitting it to a budget may cut it
    }
    if not previews:
        del listed["preview"]
    return listed


async def get_transcript(db: Reader, **window: Any) -> dict[str, Any]:
    """One live transcript with a window of its text (from offset, or between two times), or NotFound."""
    return (await read_transcript(db, **window))[0]


async def read_transcript(
    db: Reader,
    *,
    transcript_id: str,
    fmt: str,
    max_chars: int,
    include_segments: bool,
    offset: int = 0,
    start_ms: int | None = None,
    end_ms: int | None = None,
) -> tuple[dict[str, Any], list[int]]:
    """get_transcript's answer, and per segment in it the fewest characters of the window that show it.

    The second is what cutting the window shorter in memory needs (``windows.reach``): a window
    cut to its first n characters shows the segments that need at most n.
    """
    window = Window(offset, start_ms, end_ms)
    with_segments = include_segments or window.by_time
    sql = GET_TRANSCRIPT_WITH_SEGMENTS if with_segments else GET_TRANSCRIPT
    times = layouts.known_times(db, transcript_id)
    row = await db.one(GET_LONG_TRANSCRIPT if times else sql, {"id": transcript_id, "long": layouts.LONG_TEXT_BYTES})
    if row is None:
        raise NotFound(f"Transcript {named(transcript_id)} not found")
    created_at, updated_at = times or (row["created_at"], row["updated_at"])
    result: dict[str, Any] = {
        "id": row["id"],
        "title": row["title"],
        "source": row["source"],
        "language": row["language"],
        "model": row["model"],
        "created_at": stored_text(created_at),
        "updated_at": stored_text(updated_at),
        "duration_ms": row["duration_ms"],
    }
    if row["raw_text"] is None:  # long: read by window
        read = await _long(db, transcript_id, fmt, window, max_chars, include_segments)
        if read is None:  # a NUL in the text: SQLite cannot cut it, so read it whole
            row = await db.one(sql, {"id": transcript_id, "long": 1 << 62})
            if row is None:
                raise NotFound(f"Transcript {named(transcript_id)} not found")
            read = short(row, fmt, window, max_chars, with_segments)
    else:
        read = short(row, fmt, window, max_chars, with_segments)
    result.update(read.fields)
    result["speakers"] = read.speakers
    if include_segments:
        result["segments"] = read.segments
    result["tasks"] = json.loads(row["tasks_json"])
    return result, read.needs if include_segments else []


async def _long(
    db: Reader, transcript_id: str, fmt: str, window: Window, max_chars: int, include_segments: bool
) -> Read | None:
    """A window of a long transcript, read by window: its cost follows the window, not the transcript."""
    lay = await layouts.layout(db, transcript_id)
    if lay is None:
        raise NotFound(f"Transcript {named(transcript_id)} not found")
    used = "formatted" if fmt == "formatted" and lay.formatted_chars is not None else "raw"
    total = lay.formatted_chars if used == "formatted" and lay.formatted_chars is not None else lay.raw_chars
    if lay.formatted_nul if used == "formatted" else lay.raw_nul:
        return None
    # Where the segments sit: only for a time window or segments, and read once.
    need = include_segments or window.by_time
    placement = await layouts.placement(db, transcript_id, lay.raw_chars) if need else NOWHERE
    scale = total / max(lay.raw_chars, 1)
    start, limit = bounds(window, placement, scale, total, max_chars)
    # Never more than the text holds: the resource asks for sys.maxsize characters, past SQLite's integers.
    n = min(limit, total - start) + _SLACK
    while True:
        i, j = placement.around(*raw_range(window, placement, start, start + n, total, lay.raw_chars))
        params = {"id": transcript_id, "start": start, "n": n, "first": -1, "last": -1}
        if j > i:
            params["first"], params["last"] = placement.seqs[i], placement.seqs[j - 1]
        row = await piece_of(db, used, lay.formatted_marks if used == "formatted" else lay.raw_marks, params)
        if row is None:
            raise NotFound(f"Transcript {named(transcript_id)} not found")
        piece, segments_json = row
        at_end = start + len(piece) >= total
        cut = window_end(piece, 0, limit)
        if cut < len(piece) or at_end:
            break
        n *= 4  # a cluster of marks longer than the slack: read further (only in pathological text)
    end = start + cut
    lo, hi = raw_range(window, placement, start, end, total, lay.raw_chars)
    by_seq = {seq: k for k, seq in enumerate(placement.seqs[i:j], i)}
    # A segment the layout does not know (written since it was read) cannot be placed: left out.
    shown = [
        (by_seq[s[0]], s)
        for s in json.loads(segments_json)
        if s[0] in by_seq and placement.overlaps(by_seq[s[0]], lo, hi)
    ]
    needs = reach(placement, [k for k, _ in shown], start, total, lay.raw_chars)
    return Read(fields(used, piece[:cut], start, end, total), lay.speakers, [segment(s) for _, s in shown], needs)


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


# What the live store holds, for a search that found little (tools/hints): the language tags the app
# recorded, counted over the newest :sample live transcripts (found through the created_at index, so a
# store of 100,000 is not read whole), and the first and last live created_at (each one index step).
LANGUAGES = (
    "SELECT language, count(*) AS transcripts FROM (SELECT language FROM transcripts WHERE deleted_at IS NULL"
    " ORDER BY created_at DESC, id DESC LIMIT :sample) GROUP BY language ORDER BY transcripts DESC, language"
)
SPAN = (
    "SELECT (SELECT created_at FROM transcripts WHERE deleted_at IS NULL ORDER BY created_at, id LIMIT 1) AS first_at,"
    " (SELECT created_at FROM transcripts WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1)"
    " AS last_at"
)
# Transcripts without a recorded language: their title and first characters, for a guess.
UNLABELLED = (
    "SELECT title, substr(coalesce(formatted_text, raw_text), 1, :chars) AS head FROM transcripts"
    " WHERE deleted_at IS NULL AND language IS NULL ORDER BY created_at DESC, id DESC LIMIT :limit"
)


async def languages(db: Reader, sample: int) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """Per recorded language (None: not recorded), how many of the newest sample live transcripts have it;
    and the first and last live created_at (None in an empty store)."""
    rows = [dict(r) for r in await db.all(LANGUAGES, {"sample": sample})]
    span = await db.one(SPAN)
    if span is None:
        return rows, None, None
    return rows, stored_text(span["first_at"]), stored_text(span["last_at"])


async def unlabelled_heads(db: Reader, limit: int, chars: int) -> list[str]:
    """The title and first characters of up to limit live transcripts with no recorded language, newest first."""
    rows = await db.all(UNLABELLED, {"limit": limit, "chars": chars})
    return [f"{r['title']} {r['head'] or ''}" for r in rows]
