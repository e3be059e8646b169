"""Where a window of a transcript falls: which characters and which segments, from an offset or between two times.

Pure placement over ``layouts.Placement``: ``transcripts`` reads (a short transcript
whole, a long one by window) and this says what of it to show, and what a shorter
prefix of the window would show (``reach``), so that a window cut to a token budget
is cut in memory, not read again. Below it, what a search inside one transcript reads
of it (its segments in spoken order, a page of them by seq).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.store.layouts import Marks, Placement
from magnotia_mcp.store.plans import HIT_COLUMNS
from magnotia_mcp.text import window_end

if TYPE_CHECKING:  # only for annotations
    import sqlite3

    from magnotia_mcp.store.reader import Reader


class Window(NamedTuple):
    """Which part of a transcript to read: from a character offset, or between two times (milliseconds)."""

    offset: int = 0
    start_ms: int | None = None
    end_ms: int | None = None

    @property
    def by_time(self) -> bool:
        return self.start_ms is not None or self.end_ms is not None


class Read(NamedTuple):
    """What a window shows: its text fields, the transcript's speakers, and the segments it overlaps."""

    fields: dict[str, Any]  # format, text, offset, total_chars, next_offset
    speakers: list[str]
    segments: list[dict[str, Any]]
    # Per segment shown: the fewest characters of the window that still show it (see reach).
    needs: list[int]


# A window of a long transcript: characters [:start, :start + :n) of one text, and the
# segments from seq :first to :last, found on the (transcript_id, seq) index.
_WINDOW_SEGMENTS = (
    "(SELECT json_group_array(json_array(seq, start_ms, end_ms, speaker, text))"
    " FROM (SELECT seq, start_ms, end_ms, speaker, text FROM segments WHERE transcript_id = :id"
    " AND seq BETWEEN :first AND :last ORDER BY seq)) AS segments_json"
)
_BY_CHARS = {
    column: f"SELECT substr({column}, :start + 1, :n) AS piece, {_WINDOW_SEGMENTS} FROM transcripts WHERE id = :id"
    for column in ("raw_text", "formatted_text")
}
# The same by its bytes [:at, :at + :bytes), from a mark (layouts.Marks).
_BY_BYTES = {
    column: f"SELECT substr(CAST({column} AS BLOB), :at + 1, :bytes) AS piece, {_WINDOW_SEGMENTS}"
    " FROM transcripts WHERE id = :id"
    for column in ("raw_text", "formatted_text")
}


async def piece_of(db: Reader, used: str, marks: Marks | None, params: dict[str, Any]) -> tuple[str, str] | None:
    """Characters [start, start + n) of the raw or formatted text (used) and the window's segments as JSON (params:
    id, start, n, first, last); None when the transcript is gone. With marks, read by bytes from the nearest mark."""
    column = "formatted_text" if used == "formatted" else "raw_text"
    if marks is None:
        row = await db.one(_BY_CHARS[column], params)
        return None if row is None else (row["piece"] or "", row["segments_json"])
    k = bisect_right(marks.chars, params["start"]) - 1
    skip = params["start"] - marks.chars[k]
    want = skip + params["n"]
    # Most text takes one or two bytes a character; four is UTF-8's most, so the second read always has enough.
    text, segments = "", "[]"
    for most in (2 * want, 4 * want):
        row = await db.one(_BY_BYTES[column], {**params, "at": marks.bytes[k], "bytes": most})
        if row is None:
            return None
        data: bytes = row["piece"] or b""
        text = data.decode("utf-8", "ignore")  # a character cut at the end is dropped (marks checked the rest)
        segments = row["segments_json"]
        if len(text) >= want or len(data) < most:  # enough, or the whole rest of the text
            break
    return text[skip:want], segments


def short(row: sqlite3.Row, fmt: str, window: Window, max_chars: int, with_segments: bool) -> Read:
    """A window of a transcript read whole: cut in Python."""
    formatted = row["formatted_text"]
    used = "formatted" if fmt == "formatted" and formatted is not None else "raw"
    raw: str = row["raw_text"]
    text: str = formatted if used == "formatted" else raw
    total = len(text)
    segments: list[list[Any]] = json.loads(row["segments_json"]) if with_segments else []
    placement = Placement(
        [s[0] for s in segments],
        [len(s[4]) for s in segments],
        [s[1] for s in segments],
        [s[2] for s in segments],
        len(raw),
    )
    scale = total / max(len(raw), 1)
    start, limit = bounds(window, placement, scale, total, max_chars)
    end = window_end(text, start, limit)
    names = (
        list(dict.fromkeys(s[3] for s in segments if s[3] is not None))
        if with_segments
        else json.loads(row["speakers_json"])
    )
    lo, hi = raw_range(window, placement, start, end, total, len(raw))
    ks = [k for k in range(len(segments)) if placement.overlaps(k, lo, hi)]
    needs = reach(placement, ks, start, total, len(raw))
    return Read(fields(used, text[start:end], start, end, total), names, [segment(segments[k]) for k in ks], needs)


NOWHERE = Placement([], [], [], [], 0)


def bounds(window: Window, placement: Placement, scale: float, total: int, max_chars: int) -> tuple[int, int]:
    """Where the window starts, and at most how many characters it holds."""
    if not window.by_time:
        return min(window.offset, total), max_chars
    if not len(placement):
        # An argument the model can correct (-32602 before 2025-11-25), not a store failure.
        name = "start_ms" if window.start_ms is not None else "end_ms"
        raise InvalidArguments(name, "this transcript has no time-stamped segments; read it with offset instead")
    span = placement.between(window.start_ms or 0, window.end_ms)
    if span is None:  # nothing said in that time
        return total, max_chars
    start = min(int(span[0] * scale), total)
    stop = min(-(-span[1] * scale // 1), total)  # ceil: the last segment's end is in the window
    return start, max(0, min(max_chars, int(stop) - start))


def raw_range(
    window: Window, placement: Placement, start: int, end: int, total: int, raw_chars: int
) -> tuple[float, float]:
    """The raw characters [lo, hi) that characters [start, end) of a text of total characters cover.

    An empty text (a dictation where nothing was heard, or an empty formatted text) has no
    characters to scale by: its window is all of it, so it covers every segment, or for a
    time window the segments of that time.
    """
    if total:
        per = max(raw_chars, 1) / total
        return start * per, end * per
    if not window.by_time:
        return 0, raw_chars + 1
    span = placement.between(window.start_ms or 0, window.end_ms)
    return (span[0], max(span[1], span[0] + 1)) if span is not None else (0, 0)


def reach(placement: Placement, shown: list[int], start: int, total: int, raw_chars: int) -> list[int]:
    """For each shown segment (its index in placement), the fewest characters of the window that show it.

    Each shown segment already overlaps the window's start, so a window cut to its first
    n characters shows those that start before its end (raw_range's hi, by the same float
    arithmetic): the ones whose need is at most n. Segments start in seq order, so the
    needs only grow and a cut window shows a prefix of the segments. An empty text cannot
    be cut: its segments need nothing.
    """
    if not total:
        return [0] * len(shown)
    per = max(raw_chars, 1) / total
    out = []
    for k in shown:
        a = placement.starts[k]
        n = max(0, int(a / per) - start)
        while (start + n) * per <= a:
            n += 1
        while n > 0 and (start + n - 1) * per > a:
            n -= 1
        out.append(n)
    return out


def fields(used: str, text: str, start: int, end: int, total: int) -> dict[str, Any]:
    return {
        "format": used,
        "text": text,
        "offset": start,
        "total_chars": total,
        "next_offset": end if end < total else None,
    }


def segment(s: list[Any]) -> dict[str, Any]:
    seq, start_ms, end_ms, speaker, text = s
    return {"seq": seq, "start_ms": start_ms, "end_ms": end_ms, "speaker": speaker, "text": text}


# -- inside one transcript (search_transcripts with transcript_id) --------------------------

# The live transcript searched inside; its text is not read.
INSIDE = f"SELECT {HIT_COLUMNS} FROM transcripts AS t WHERE t.id = :id AND t.deleted_at IS NULL"
# Its segments that may match, in spoken order: by the segment index within the range of its segment ids ...
INSIDE_FTS = (
    "SELECT s.seq, s.speaker, s.text FROM segments_fts AS g JOIN segments AS s ON s.id = g.rowid"
    " WHERE g.segments_fts MATCH :match AND g.rowid BETWEEN :lo AND :hi AND s.transcript_id = :id ORDER BY s.seq"
)
# ... else all of them, by the (transcript_id, seq) index.
INSIDE_ALL = "SELECT seq, speaker, text FROM segments WHERE transcript_id = :id ORDER BY seq"
# A page of its segments, by seq.
INSIDE_PAGE = (
    "SELECT s.seq, s.start_ms, s.end_ms, s.speaker, s.text FROM json_each(:seqs) AS j"
    " CROSS JOIN segments AS s ON s.transcript_id = :id AND s.seq = j.value ORDER BY s.seq"
)
# The text get_transcript shows by default (formatted, else raw): a transcript without segments is searched in it.
SHOWN_TEXT = "SELECT coalesce(formatted_text, raw_text, '') AS text FROM transcripts WHERE rowid = :rid"


async def inside(db: Reader, transcript_id: str) -> sqlite3.Row | None:
    """The live transcript transcript_id (rid, id, title, created_at, source); None if gone or in the trash."""
    return await db.one(INSIDE, {"id": transcript_id})


async def said_in(db: Reader, transcript_id: str, span: tuple[int, int], match: str | None) -> list[sqlite3.Row]:
    """A transcript's segments (seq, speaker, text) in spoken order: those match finds by the segment index
    (span: the range of their ids), or all of them when match is None."""
    if match is None:
        return await db.all(INSIDE_ALL, {"id": transcript_id})
    return await db.all(INSIDE_FTS, {"id": transcript_id, "match": match, "lo": span[0], "hi": span[1]})


async def segments_at(db: Reader, transcript_id: str, seqs: list[int]) -> list[sqlite3.Row]:
    """A transcript's segments with these seqs, in spoken order."""
    return await db.all(INSIDE_PAGE, {"id": transcript_id, "seqs": json.dumps(seqs)})


async def shown_text(db: Reader, rid: int) -> str:
    """The text of the transcript at rowid rid that get_transcript shows by default."""
    row = await db.one(SHOWN_TEXT, {"rid": rid})
    text = row["text"] if row else ""
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)  # a BLOB where TEXT is due
