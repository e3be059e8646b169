"""Where a transcript's segments sit in its text, and what a long transcript costs to know once.

Segments carry times, not character positions, so positions are derived: the
segments are laid end to end in ``seq`` order, and the rest of the raw text's
characters (the app joins segments with a space) are spread evenly between
them. Where the raw text is the segments joined by one separator, as the app
writes it, every position is exact; where it is not (an edited text), the
positions stay in order and within the text. The formatted text has no such
mapping: positions there are the raw positions scaled to its length.

A window of a long transcript (a 10-hour meeting: 1.6M characters, 21,000
segments) must cost what the window costs, but some facts follow the whole
transcript: its lengths in characters, its speakers, where its characters sit
in its bytes and its times (``Layout``), and where each segment sits
(``Placement``, read only for segments or a time). For a transcript whose raw text is over ``LONG_TEXT_BYTES`` they are
read once each (10 to 30 ms each for that meeting, measured at 100k) and kept,
in a small LRU, until the store changes: the cache is keyed on the reader's
``generation``. Shorter transcripts (nearly all) are read whole in one
statement and never come here.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from operator import add
from typing import TYPE_CHECKING, Any, NamedTuple

from magnotia_mcp.lru import LRU

if TYPE_CHECKING:  # only for annotations: importing the reader pulls in asyncio and sqlite3
    from magnotia_mcp.store.reader import Reader

# Raw text longer than this (in bytes, which SQLite knows without reading the text) is read by window.
LONG_TEXT_BYTES = 65_536
# Layouts kept: a few long meetings a model reads window by window. The largest
# (21,000 segments) takes about 1 MiB.
CACHED = 8


class Placement:
    """Character spans of a transcript's segments in its raw text, and lookups by position and by time."""

    __slots__ = ("_first_end_ms", "_last_start_ms", "end_ms", "ends", "seqs", "start_ms", "starts")

    def __init__(
        self, seqs: Sequence[int], lengths: Sequence[int], start_ms: Sequence[int], end_ms: Sequence[int], chars: int
    ) -> None:
        # Arrays of machine integers: a 21,000-segment meeting's placement takes 1 MiB, not 5.
        self.seqs = array("q", seqs)
        self.start_ms = array("q", start_ms)
        self.end_ms = array("q", end_ms)
        starts, ends = _spans(lengths, chars)
        self.starts, self.ends = array("q", starts), array("q", ends)
        self._first_end_ms: array[int] | None = None
        self._last_start_ms: array[int] | None = None

    def __len__(self) -> int:
        return len(self.seqs)

    def around(self, start: float, end: float) -> tuple[int, int]:
        """Indexes [i, j) of the segments that may overlap raw characters [start, end) (a superset)."""
        i = max(0, bisect_right(self.ends, start) - 1)
        j = min(len(self.seqs), bisect_left(self.starts, end) + 1)
        return i, max(i, j)

    def overlaps(self, k: int, start: float, end: float) -> bool:
        """Whether segment k overlaps raw characters [start, end); an empty one, whether it sits inside."""
        a, b = self.starts[k], self.ends[k]
        return (b > start and a < end) or (a == b and start <= a < end)

    def between(self, start_ms: int, end_ms: int | None) -> tuple[int, int] | None:
        """Raw characters from the first segment that ends after start_ms to the last that starts before end_ms."""
        if self._first_end_ms is None or self._last_start_ms is None:
            # Running max of end times, running min (from the end) of start times: monotonic even
            # where the app's times are not, so a bisection finds exactly "the first segment that
            # ends after t" and "the last segment that starts before t".
            self._first_end_ms = array("q", accumulate(self.end_ms, max))
            self._last_start_ms = array("q", reversed(array("q", accumulate(reversed(self.start_ms), min))))
        i = bisect_right(self._first_end_ms, start_ms)
        j = len(self.seqs) if end_ms is None else bisect_left(self._last_start_ms, end_ms)
        if i >= len(self.seqs) or j <= i:
            return None
        return self.starts[i], max(self.ends[j - 1], self.starts[i])


def _spans(lengths: Sequence[int], chars: int) -> tuple[list[int], list[int]]:
    """Start and end of each segment in a raw text of chars characters (see the module docstring)."""
    n = len(lengths)
    total = sum(lengths)
    cum = list(accumulate(lengths, initial=0))
    if total > chars:  # the text is shorter than its segments: shrink them to fit
        scaled = [c * chars // total for c in cum]
        return scaled[:-1], scaled[1:]
    spare = chars - total
    if n > 1 and spare == n - 1:  # joined with one character, as the app writes it
        gaps: Sequence[int] = range(n)
    else:
        gaps = [k * spare // (n - 1) for k in range(n)] if n > 1 else [0] * n
    starts = list(map(add, cum, gaps))
    return starts, list(map(add, starts, lengths))


class Marks(NamedTuple):
    """Where a text's characters sit in its UTF-8 bytes, about every MARK_BYTES: a window is read by its bytes from
    the nearest mark before it, as SQLite's substr() on a text decodes every character before the window."""

    chars: array[int]  # characters before each mark
    bytes: array[int]  # bytes before each mark


class Layout(NamedTuple):
    """What reading any window of a long transcript needs to know about the whole of it."""

    raw_chars: int
    formatted_chars: int | None  # None: not formatted yet
    # SQLite's length() and substr() stop at a NUL character: such a text is read whole.
    raw_nul: bool
    formatted_nul: bool
    speakers: list[str]
    # None: the text is read by characters (not UTF-8 text, a NUL, no such text).
    raw_marks: Marks | None = None
    formatted_marks: Marks | None = None


MARK_BYTES = 16_384
_MARKED_PIECE = 16 * MARK_BYTES  # read at once: 7 statements for the 10-hour meeting's 1.8 MB, little memory
_PIECE = {  # utf8: the store keeps text as UTF-8 (a UTF-16 store's bytes are not what the marks count)
    column: f"SELECT typeof({column}) = 'text' AND hex(CAST('é' AS BLOB)) = 'C3A9' AS utf8,"
    f" substr(CAST({column} AS BLOB), :at + 1, :n) AS piece FROM transcripts WHERE id = :id"
    for column in ("raw_text", "formatted_text")
}

# A text's length, and whether it holds a NUL. One statement per text: SQLite loads the
# whole value for each function call, so one text at a time keeps the peak memory down.
# The times are stored after both texts: reaching them walks every page of both, so they are kept too.
TEXT_FACTS = {
    column: f"SELECT length({column}) AS chars, coalesce(instr({column}, char(0)) > 0, 0) AS nul,"
    " created_at, updated_at FROM transcripts WHERE id = :id"
    for column in ("raw_text", "formatted_text")
}
# The segments' lengths and times in seq order, as four flat arrays (half the cost of one
# array of rows, to read and to parse), and the range of their ids.
PLACEMENT = (
    "SELECT json_group_array(seq) AS seqs, json_group_array(length(text)) AS lengths,"
    " json_group_array(start_ms) AS starts, json_group_array(end_ms) AS ends, min(id) AS lo, max(id) AS hi"
    " FROM (SELECT id, seq, text, start_ms, end_ms FROM segments WHERE transcript_id = :id ORDER BY seq)"
)
# The start of the text a list shows (formatted, else raw): reaching the formatted text walks the
# raw text's overflow pages (about 1 ms for the 10-hour meeting), so a long row's is kept too.
HEAD = "SELECT substr(coalesce(formatted_text, raw_text), 1, :n) AS head FROM transcripts WHERE id = :id"
# Only the speakers, for a list page.
SPEAKERS = (
    "SELECT json_group_array(DISTINCT speaker) AS speakers_json FROM (SELECT speaker FROM segments"
    " WHERE transcript_id = :id AND speaker IS NOT NULL ORDER BY seq)"
)
# Only the range of a transcript's segment ids: a segment-index search stays within it.
SEGMENT_IDS = "SELECT min(id) AS lo, max(id) AS hi FROM segments WHERE transcript_id = :id"


# Layouts, and speaker lists (much smaller) of long list rows, each for the store generation it was read in.
_CACHE: LRU[tuple[Any, ...], Any] = LRU(CACHED * 4)


def _key(db: Reader, kind: str, transcript_id: str) -> tuple[Any, ...]:
    return (kind, str(db.path), db.info.identity, db.generation, transcript_id)


async def layout(db: Reader, transcript_id: str) -> Layout | None:
    """The layout of a transcript, from the cache or read now; None if there is no such transcript."""
    key, times = _key(db, "layout", transcript_id), _key(db, "times", transcript_id)  # one generation for both
    found: Layout | None = _CACHE.get(key)
    if found is None:
        raw = await db.one(TEXT_FACTS["raw_text"], {"id": transcript_id})
        if raw is None:
            return None
        formatted = await db.one(TEXT_FACTS["formatted_text"], {"id": transcript_id})
        names = await db.one(SPEAKERS, {"id": transcript_id})
        if formatted is None or names is None:
            return None  # gone in between
        found = Layout(
            raw["chars"],
            formatted["chars"],
            bool(raw["nul"]),
            bool(formatted["nul"]),
            json.loads(names["speakers_json"]),
            None if raw["nul"] else await _marks(db, "raw_text", transcript_id, raw["chars"]),
            None if formatted["nul"] else await _marks(db, "formatted_text", transcript_id, formatted["chars"]),
        )
        _CACHE.put(key, found)
        _CACHE.put(times, (formatted["created_at"], formatted["updated_at"]))
    return found


def known_times(db: Reader, transcript_id: str) -> tuple[Any, Any] | None:
    """A long transcript's created_at and updated_at, when its layout was read in this store generation."""
    return _CACHE.get(_key(db, "times", transcript_id))


async def _marks(db: Reader, column: str, transcript_id: str, chars: int | None) -> Marks | None:
    """A text's marks, read piece by piece; None unless it is UTF-8 text of chars characters as SQLite counts them
    (a BLOB, bytes not UTF-8 or a text changed meanwhile are read by characters, which is right for them)."""
    counted, at = 0, 0
    marks = Marks(array("q", [0]), array("q", [0]))
    while True:
        row = await db.one(_PIECE[column], {"id": transcript_id, "at": at, "n": _MARKED_PIECE + 3})
        if row is None or not row["utf8"] or chars is None:
            return None
        piece: bytes = row["piece"] or b""
        end = len(piece) if len(piece) <= _MARKED_PIECE else _MARKED_PIECE
        lo = 0
        while lo < end:
            hi = min(lo + MARK_BYTES, end)
            while hi < len(piece) and 0x80 <= piece[hi] < 0xC0:  # a mark starts a character, never inside one
                hi += 1
            try:
                counted += len(piece[lo:hi].decode("utf-8"))
            except UnicodeDecodeError:
                return None
            marks.chars.append(counted)
            marks.bytes.append(at + hi)
            lo = hi
        at += lo
        if len(piece) <= _MARKED_PIECE:
            return marks if counted == chars else None


async def placement(db: Reader, transcript_id: str, raw_chars: int) -> Placement:
    """Where a transcript's segments sit in its raw text of raw_chars characters, cached."""
    key = _key(db, "placement", transcript_id)
    found: Placement | None = _CACHE.get(key)
    if found is None:
        row = await db.one(PLACEMENT, {"id": transcript_id})
        assert row is not None  # an aggregate always has its row
        lengths = [n or 0 for n in json.loads(row["lengths"])]  # NULL only for a NULL text: the schema forbids it
        found = Placement(
            json.loads(row["seqs"]), lengths, json.loads(row["starts"]), json.loads(row["ends"]), raw_chars
        )
        _CACHE.put(key, found)
        if row["lo"] is not None:
            _CACHE.put(_key(db, "segment ids", transcript_id), (row["lo"], row["hi"]))
    return found


async def segment_ids(db: Reader, transcript_id: str) -> tuple[int, int] | None:
    """The lowest and highest id of a transcript's segments (None: it has none), cached."""
    key = _key(db, "segment ids", transcript_id)
    found: tuple[int, int] | None = _CACHE.get(key)
    if found is None:
        row = await db.one(SEGMENT_IDS, {"id": transcript_id})
        if row is None or row["lo"] is None:
            return None
        found = (row["lo"], row["hi"])
        _CACHE.put(key, found)
    return found


async def speakers(db: Reader, transcript_id: str) -> list[str]:
    """A long transcript's speakers, from the cache (a layout or a list) or read now."""
    cached: Layout | None = _CACHE.get(_key(db, "layout", transcript_id))
    if cached is not None:
        return cached.speakers
    key = _key(db, "speakers", transcript_id)
    names: list[str] | None = _CACHE.get(key)
    if names is None:
        row = await db.one(SPEAKERS, {"id": transcript_id})
        names = json.loads(row["speakers_json"]) if row else []
        _CACHE.put(key, names)
    return names


async def head(db: Reader, transcript_id: str, chars: int) -> str:
    """The first chars characters of a long transcript's formatted (else raw) text, cached."""
    key = _key(db, f"head {chars}", transcript_id)
    found: str | None = _CACHE.get(key)
    if found is None:
        row = await db.one(HEAD, {"id": transcript_id, "n": chars})
        found = (row["head"] or "") if row else ""
        _CACHE.put(key, found)
    return found


# -- list rows ----------------------------------------------------------------------

# Transcripts whose list facts are kept: a few pages a model goes back and forth over
# (about 150 bytes each, so well under a MiB).
LISTED = 4096


class Listed:
    """Whether each recently listed transcript is long, and its speakers, per store and generation.

    A list row's speakers walk all its segments, and the guard that tells a long row from a short
    one loads the long row's whole text (CAST AS BLOB): done once per transcript and generation, not
    on every page. The list statement asks ``seen`` (registered as ``magnotia_seen`` on the reader's
    connection) per row, so a row already known costs neither. The facts are kept per store
    (path and file identity), each for the one generation they were read in.
    """

    __slots__ = ("_stores",)

    def __init__(self) -> None:
        self._stores: LRU[tuple[str, tuple[int, int]], tuple[int, LRU[str, tuple[bool, tuple[str, ...]]]]] = LRU(4)

    def entries(self, db: Reader) -> LRU[str, tuple[bool, tuple[str, ...]]]:
        """The facts kept for db's store in its current generation (emptied when the generation moved)."""
        key = (str(db.path), db.info.identity)
        found = self._stores.get(key)
        if found is None or found[0] != db.generation:
            found = (db.generation, LRU(LISTED))
            self._stores.put(key, found)
        return found[1]

    def seen(self, db: Reader) -> Callable[[str], int | None]:
        """The SQL function for db's connection: 1 for a known long row, 0 for a known short one, else NULL.

        It runs on the connection's thread: it only reads (the kept facts change on the event loop).
        A row it calls known may be forgotten before the caller looks (another call saw the
        generation move): the caller then reads what the statement left out, as for a long row.
        """
        key = (str(db.path), db.info.identity)

        def seen(transcript_id: str) -> int | None:
            found = self._stores.peek(key)
            entry = found[1].peek(transcript_id) if found is not None else None
            return None if entry is None else int(entry[0])

        return seen


LISTED_FACTS = Listed()


async def speakers_of(
    db: Reader, known: LRU[str, tuple[bool, tuple[str, ...]]], transcript_id: str, names: str | None, long: bool
) -> tuple[str, ...]:
    """A transcript's speakers: names (the JSON array a statement read) when given, else as known
    (``LISTED_FACTS``), else as a long transcript's (``speakers``); kept as known, with whether it is long."""
    if names is not None:
        found = tuple(json.loads(names))
    else:  # known, or long (or forgotten since the statement asked: read as for a long row)
        entry = known.get(transcript_id)
        found = entry[1] if entry is not None else tuple(await speakers(db, transcript_id))
    known.put(transcript_id, (long, found))
    return found
