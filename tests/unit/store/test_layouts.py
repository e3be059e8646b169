"""Long transcripts read by window, on a real store: the same answers as reading them whole.

A transcript whose raw text is over ``layouts.LONG_TEXT_BYTES`` is read by
window (SQL ``substr`` and the segments by seq range, placed with a cached
layout); a shorter one is read whole and cut in Python. The two paths must
agree on every window, format, time range and segment, so each case here reads
the same long transcript both ways: as it is, and with the threshold raised so
that it is read whole.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.errors import ToolError
from magnotia_mcp.search import plan
from magnotia_mcp.search.querylang import parse
from magnotia_mcp.store import layouts, transcripts, windows
from magnotia_mcp.store.layouts import Placement
from magnotia_mcp.store.reader import Reader
from tests.support.readers import open_reader

SEGMENTS = 4_000
LATE = "Guest"  # first speaks in the last segment: a speaker list must reach the end


def _meeting(rng: random.Random) -> list[tuple[str | None, str]]:
    words = ["budget", "plan", "café", "e\u0301te\u0301", "👍🏽", "review", "naïve", "ship", "x", "quarterly"]
    out: list[tuple[str | None, str]] = []
    for k in range(SEGMENTS - 1):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 14)))
        if k % 997 == 5:
            text += " the zephyrine idea"
        out.append((rng.choice(["Ana", "Bo", None]), text))
    out.append((LATE, "and that is all from me"))
    return out


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(7)
    b = StoreBuilder(tmp_path_factory.mktemp("layouts") / "magnotia.db")
    segments = _meeting(rng)
    raw = " ".join(text for _, text in segments)
    assert len(raw.encode()) > 2 * layouts.LONG_TEXT_BYTES
    formatted = "\n\n".join(f"**{sp or 'Someone'}:** {text.capitalize()}" for sp, text in segments)
    b.transcript(
        id="long", source="meeting", raw_text=raw, formatted_text=formatted, created_at=ts(10), segments=segments
    )
    # The raw text is not the segments joined by one space: positions are spread, still in order.
    b.transcript(
        id="edited",
        source="meeting",
        raw_text="Intro. " + "\n".join(text for _, text in segments) + " Outro.",
        created_at=ts(9),
        segments=segments,
    )
    # A NUL in the text: SQLite's length() and substr() stop there, so it is read whole.
    b.transcript(id="nul", raw_text=raw[:40_000] + "\x00" + raw[40_000:], created_at=ts(8), segments=segments)
    b.transcript(id="no-segments", raw_text=raw, created_at=ts(7), segments=[])
    b.close()
    return b.path


@pytest.fixture(scope="module")
def reader(store_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Reader]:
    yield from open_reader(store_path, loop)


def read(loop: asyncio.AbstractEventLoop, reader: Reader, *, whole: bool, **kwargs: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"fmt": "raw", "max_chars": 20_000, "include_segments": True, **kwargs}
    saved = layouts.LONG_TEXT_BYTES
    layouts.LONG_TEXT_BYTES = 1 << 62 if whole else saved
    try:
        return loop.run_until_complete(transcripts.get_transcript(reader, **args))
    finally:
        layouts.LONG_TEXT_BYTES = saved


WINDOWS = [
    pytest.param({"offset": 0}, id="start"),
    pytest.param({"offset": 12_345, "max_chars": 1}, id="one-char"),
    pytest.param({"offset": 60_001, "max_chars": 7}, id="seven-chars"),
    pytest.param({"offset": 150_000, "max_chars": 30_000}, id="middle"),
    pytest.param({"offset": 10**9}, id="past-the-end"),
    pytest.param({"start_ms": 0, "end_ms": 1}, id="first-moment"),
    pytest.param({"start_ms": 2_000_000, "end_ms": 2_600_000}, id="ten-minutes"),
    pytest.param({"start_ms": 5_000_000}, id="from-a-time"),
    pytest.param({"end_ms": 90_000}, id="until-a-time"),
    pytest.param({"start_ms": 10**12}, id="after-the-recording"),
    pytest.param({"start_ms": 2_000_000, "end_ms": 9_000_000, "max_chars": 500}, id="time-capped-by-max-chars"),
]


@pytest.mark.parametrize("fmt", ["raw", "formatted"])
@pytest.mark.parametrize("tid", ["long", "edited", "nul"])
@pytest.mark.parametrize("window", WINDOWS)
def test_a_long_transcript_reads_by_window_as_it_reads_whole(
    loop: asyncio.AbstractEventLoop, reader: Reader, tid: str, fmt: str, window: dict[str, Any]
) -> None:
    """Text, offsets, segments, speakers and tasks: identical to the whole read, for every kind of window."""
    by_window = read(loop, reader, whole=False, transcript_id=tid, fmt=fmt, **window)
    whole = read(loop, reader, whole=True, transcript_id=tid, fmt=fmt, **window)
    assert by_window == whole
    assert by_window["speakers"][-1] == LATE


@pytest.mark.parametrize("column", ["raw_text", "formatted_text"])
def test_marks_place_every_character_and_a_window_is_read_by_bytes_from_them(
    loop: asyncio.AbstractEventLoop, reader: Reader, column: str
) -> None:
    """Each mark is the characters and bytes before the same place; a window from any mark, beside one or between
    two is the text's own characters, as many as asked or up to the end. A text with a NUL has none (read whole)."""
    text = _stored(loop, reader, "long", column)
    data = text.encode()
    lay = loop.run_until_complete(layouts.layout(reader, "long"))
    assert lay is not None
    marks = lay.raw_marks if column == "raw_text" else lay.formatted_marks
    assert marks is not None
    assert len(marks.chars) > len(data) // layouts.MARK_BYTES > 8
    assert (marks.chars[-1], marks.bytes[-1]) == (len(text), len(data))
    for chars, at in zip(marks.chars, marks.bytes, strict=True):
        assert len(data[:at].decode()) == chars
    used = "raw" if column == "raw_text" else "formatted"
    rng = random.Random(3)
    starts = {c + d for c in marks.chars for d in (-1, 0, 1)} | {rng.randrange(len(text)) for _ in range(50)}
    for start in sorted(s for s in starts if 0 <= s <= len(text)):
        for n in (1, 7, 3_000):
            params = {"id": "long", "start": start, "n": n, "first": -1, "last": -1}
            got = loop.run_until_complete(windows.piece_of(reader, used, marks, params))
            assert got is not None
            assert got[0] == text[start : start + n], (start, n)
    nul = loop.run_until_complete(layouts.layout(reader, "nul"))
    assert nul is not None
    assert nul.raw_marks is None


def _stored(loop: asyncio.AbstractEventLoop, reader: Reader, tid: str, column: str) -> str:
    row = loop.run_until_complete(reader.one(f"SELECT {column} AS text FROM transcripts WHERE id = :id", {"id": tid}))
    assert row is not None
    return str(row["text"])


@pytest.mark.parametrize("fmt", ["raw", "formatted"])
def test_walking_a_long_transcript_by_next_offset_gives_back_the_whole_text(
    loop: asyncio.AbstractEventLoop, reader: Reader, fmt: str
) -> None:
    """Windows of 20,000 characters, chained: their texts concatenate to the whole, every segment is seen."""
    whole = read(loop, reader, whole=True, transcript_id="long", fmt=fmt, max_chars=100_000_000)
    assert whole["next_offset"] is None
    parts: list[str] = []
    seen: set[int] = set()
    offset: int | None = 0
    while offset is not None:
        window = read(loop, reader, whole=False, transcript_id="long", fmt=fmt, offset=offset)
        assert window["offset"] == offset
        parts.append(window["text"])
        seen.update(s["seq"] for s in window["segments"])
        offset = window["next_offset"]
    assert len(parts) > 5
    assert "".join(parts) == whole["text"]
    assert seen == set(range(SEGMENTS))


def test_the_segments_of_a_raw_window_are_the_ones_whose_text_it_shows(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """The raw text is the segments joined by spaces: every segment returned overlaps the window exactly."""
    window = read(loop, reader, whole=False, transcript_id="long", offset=100_000, max_chars=3_000)
    whole = read(loop, reader, whole=True, transcript_id="long", max_chars=100_000_000)
    position = 0
    placed: dict[int, tuple[int, int]] = {}
    for s in whole["segments"]:
        placed[s["seq"]] = (position, position + len(s["text"]))
        position += len(s["text"]) + 1
    lo, hi = window["offset"], window["offset"] + len(window["text"])
    expected = [seq for seq, (a, b) in placed.items() if b > lo and a < hi]
    assert [s["seq"] for s in window["segments"]] == expected


def test_a_time_window_holds_what_was_said_between_the_two_times(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """From the first segment that ends after start_ms to the last that starts before end_ms, text and all."""
    start_ms, end_ms = 3_000_000, 3_300_000
    window = read(loop, reader, whole=False, transcript_id="long", start_ms=start_ms, end_ms=end_ms)
    whole = read(loop, reader, whole=True, transcript_id="long", max_chars=100_000_000)
    said = [s for s in whole["segments"] if s["end_ms"] > start_ms and s["start_ms"] < end_ms]
    assert len(said) > 3
    assert [s["seq"] for s in window["segments"]] == [s["seq"] for s in said]
    assert window["text"] == " ".join(s["text"] for s in said)
    assert window["next_offset"] == window["offset"] + len(window["text"])


def test_a_time_window_on_a_transcript_without_segments_says_to_use_offset(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    for whole in (False, True):
        with pytest.raises(ToolError, match="no time-stamped segments; read it with offset"):
            read(loop, reader, whole=whole, transcript_id="no-segments", start_ms=0)


def test_a_list_page_has_a_long_transcripts_speakers_and_preview(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """The list reads a long row's speakers and preview through the layout cache: the same page as read in SQL."""
    page, _, _ = loop.run_until_complete(transcripts.list_transcripts(reader, limit=10))
    speakers = {r["id"]: r["speakers"] for r in page}
    assert speakers["long"][-1] == LATE
    assert set(speakers["long"]) == {"Ana", "Bo", LATE}
    saved = layouts.LONG_TEXT_BYTES
    layouts.LONG_TEXT_BYTES = 1 << 62
    try:
        in_sql, _, _ = loop.run_until_complete(transcripts.list_transcripts(reader, limit=10))
    finally:
        layouts.LONG_TEXT_BYTES = saved
    assert page == in_sql


def _hits(loop: asyncio.AbstractEventLoop, reader: Reader, text: str, *, whole: bool) -> dict[str, dict[str, Any]]:
    saved = layouts.LONG_TEXT_BYTES
    layouts.LONG_TEXT_BYTES = 1 << 62 if whole else saved
    try:
        found = loop.run_until_complete(plan.search_transcripts(reader, parse(text), limit=10))
    finally:
        layouts.LONG_TEXT_BYTES = saved
    return {h["transcript_id"]: h for h in found["hits"]}


def test_a_search_hit_on_a_long_transcript_is_shaped_from_its_matching_segments(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """Moments, matched terms and score as when read whole; the moments quote the matching segments."""
    by_segments = _hits(loop, reader, "zephyrine OR nowhere", whole=False)
    read_whole = _hits(loop, reader, "zephyrine OR nowhere", whole=True)
    assert by_segments.keys() == read_whole.keys() >= {"long", "edited", "nul"}
    for tid, hit in by_segments.items():
        other = read_whole[tid]
        for field in ("matched_terms", "moments", "score"):
            assert hit[field] == other[field], (tid, field)
        assert "**zephyrine**" in (hit.get("snippet") or hit["moments"][0]["snippet"])
    assert min(m["seq"] for m in by_segments["long"]["moments"]) == 5
    assert len(by_segments["long"]["moments"]) == 3


def test_a_common_word_in_a_long_transcript_takes_its_moments_from_the_first_matching_segments(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """More than MATCHING segments match: the moments are the best of the first MATCHING, the rest as read whole."""
    by_segments = _hits(loop, reader, "zephyrine plan", whole=False)["long"]
    read_whole = _hits(loop, reader, "zephyrine plan", whole=True)["long"]
    for field in ("matched_terms", "score"):
        assert by_segments[field] == read_whole[field], field
    moments = by_segments["moments"]
    assert len(moments) == 3
    # The best moments have both words; read whole, the same, from all the segments.
    assert all("**zephyrine**" in m["snippet"] and "**plan**" in m["snippet"] for m in moments[:1])
    assert moments[0] == read_whole["moments"][0]


def test_placement_spreads_what_the_segments_do_not_cover() -> None:
    """Joined by one character: exact; by more: spread evenly; a text shorter than its segments: shrunk."""
    joined = Placement([0, 1, 2], [3, 4, 5], [0, 1, 2], [1, 2, 3], chars=3 + 1 + 4 + 1 + 5)
    assert list(zip(joined.starts, joined.ends, strict=True)) == [(0, 3), (4, 8), (9, 14)]
    spread = Placement([0, 1, 2], [3, 4, 5], [0, 1, 2], [1, 2, 3], chars=3 + 4 + 5 + 10)
    assert list(zip(spread.starts, spread.ends, strict=True)) == [(0, 3), (8, 12), (17, 22)]
    shrunk = Placement([0, 1], [10, 10], [0, 1], [1, 2], chars=10)
    assert list(zip(shrunk.starts, shrunk.ends, strict=True)) == [(0, 5), (5, 10)]


def test_placement_finds_times_even_where_they_go_back() -> None:
    """Out-of-order times: the window runs from the first segment ending after t0 to the last starting before t1."""
    p = Placement([0, 1, 2, 3], [1, 1, 1, 1], [0, 5_000, 3_000, 9_000], [6_000, 5_500, 4_000, 9_500], chars=7)
    assert p.between(5_800, None) == (0, 7)  # segment 0 runs until 6,000
    assert p.between(5_800, 4_500) == (0, 5)  # segments 0 to 2: segment 2 starts at 3,000
    assert p.between(6_000, 8_000) is None  # all ended by 6,000; the next starts at 9,000
    assert p.between(9_500, None) is None
