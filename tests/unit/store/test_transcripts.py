"""store.transcripts on a real store: the speakers of list pages and of get_transcript.

``speakers`` is a transcript's distinct non-null segment labels in order of
first appearance (lowest ``seq``), read with the segment index for the rows a
statement returns only. get_transcript reads them in SQL, or from the segments
it already has when include_segments is set: both ways must agree.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.errors import NotFound
from magnotia_mcp.store import transcripts
from magnotia_mcp.store.pool import Store
from magnotia_mcp.store.reader import Reader
from tests.support.readers import open_reader

TRASH = "2026-06-01T00:00:00.000Z"
LONG = 20_000  # segments of the long meeting; its last speaker first speaks in the last one


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = StoreBuilder(tmp_path_factory.mktemp("speakers") / "magnotia.db")
    b.transcript(
        id="meeting",
        source="meeting",
        raw_text="hello there hi again bye later",
        created_at=ts(20),
        segments=[("Bo", "hello"), (None, "there"), ("Ana", "hi"), ("Bo", "again"), (None, "bye"), ("Cy", "later")],
    )
    b.transcript(id="dictation", raw_text="one unlabelled segment", created_at=ts(19))
    b.transcript(id="no-segments", raw_text="imported without segments", created_at=ts(18), segments=[])
    b.transcript(
        id="labels-as-stored",
        raw_text="a b c d",
        created_at=ts(17),
        segments=[("Ana", "a"), ("ana", "b"), ("Ána", "c"), (" Ana", "d"), ("Ana", "e")],
    )
    # Segments written out of seq order: first appearance is by seq, not by row order.
    b.transcript(id="out-of-order", raw_text="x y z", created_at=ts(16), segments=[])
    for seq, speaker in ((2, "Zoe"), (0, "Yan"), (1, "Zoe"), (3, "Xi")):
        b.execute(
            "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?,?,?,?,?,?)",
            ("out-of-order", seq, seq * 1000, seq * 1000 + 900, speaker, "x"),
        )
    b.transcript(
        id="trashed",
        raw_text="secret",
        created_at=ts(21),
        deleted_at=TRASH,
        segments=[("Mallory", "secret")],
    )
    b.transcript(id="long", source="meeting", raw_text="long", created_at=ts(15), segments=[])
    rows = [("long", seq, seq, seq + 1, ("Ana", "Bo", None)[seq % 3], "w") for seq in range(LONG - 1)]
    rows.append(("long", LONG - 1, LONG, LONG + 1, "Late", "w"))
    b.conn.executemany(
        "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?,?,?,?,?,?)", rows
    )
    return b.close()


EXPECTED = {
    "meeting": ["Bo", "Ana", "Cy"],
    "dictation": [],
    "no-segments": [],
    "labels-as-stored": ["Ana", "ana", "Ána", " Ana"],
    "out-of-order": ["Yan", "Zoe", "Xi"],
    "long": ["Ana", "Bo", "Late"],
}
NEWEST_FIRST = ["meeting", "dictation", "no-segments", "labels-as-stored", "out-of-order", "long"]


@pytest.fixture(scope="module")
def reader(store_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Reader]:
    yield from open_reader(store_path, loop)


def listed(loop: asyncio.AbstractEventLoop, reader: Reader, **kwargs: Any) -> list[dict[str, Any]]:
    page, _, _ = loop.run_until_complete(transcripts.list_transcripts(reader, limit=kwargs.pop("limit", 100), **kwargs))
    return page


def got(loop: asyncio.AbstractEventLoop, reader: Reader, tid: str, **kwargs: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"fmt": "raw", "offset": 0, "max_chars": 20000, "include_segments": False, **kwargs}
    return loop.run_until_complete(transcripts.get_transcript(reader, transcript_id=tid, **args))


def test_list_items_carry_speakers_in_order_of_first_appearance(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """Duplicates collapse, NULL labels are skipped, labels are returned as stored; the trash never shows."""
    page = listed(loop, reader)
    assert [t["id"] for t in page] == NEWEST_FIRST
    assert {t["id"]: t["speakers"] for t in page} == EXPECTED
    assert all("Mallory" not in t["speakers"] for t in page)


def test_every_page_size_and_filter_gives_each_row_its_own_speakers(
    loop: asyncio.AbstractEventLoop, reader: Reader
) -> None:
    """Paging and filters change which rows come back, never a row's speakers."""
    for limit in (1, 2, 5):
        after = None
        seen: list[str] = []
        while True:
            page, after, _ = loop.run_until_complete(transcripts.list_transcripts(reader, limit=limit, after=after))
            for item in page:
                assert item["speakers"] == EXPECTED[item["id"]]
            seen += [t["id"] for t in page]
            if after is None:
                break
        assert seen == NEWEST_FIRST
    meetings = listed(loop, reader, source="meeting")
    assert [(t["id"], t["speakers"]) for t in meetings] == [
        ("meeting", EXPECTED["meeting"]),
        ("long", EXPECTED["long"]),
    ]
    since = listed(loop, reader, since=ts(17), until=ts(19))
    assert [(t["id"], t["speakers"]) for t in since] == [
        ("no-segments", []),
        ("labels-as-stored", EXPECTED["labels-as-stored"]),
    ]


@pytest.mark.parametrize("tid", list(EXPECTED))
def test_get_transcript_has_the_same_speakers_with_or_without_segments(
    loop: asyncio.AbstractEventLoop, reader: Reader, tid: str
) -> None:
    """The whole transcript's speakers, whatever the window: read in SQL, or from the segments."""
    plain = got(loop, reader, tid)
    assert plain["speakers"] == EXPECTED[tid]
    assert "segments" not in plain
    with_segments = got(loop, reader, tid, include_segments=True)
    assert with_segments["speakers"] == EXPECTED[tid]
    narrow = got(loop, reader, tid, include_segments=True, offset=1, max_chars=1)
    assert narrow["speakers"] == EXPECTED[tid]


def test_the_speakers_of_a_trashed_transcript_are_never_read(loop: asyncio.AbstractEventLoop, reader: Reader) -> None:
    for include_segments in (False, True):
        with pytest.raises(NotFound):
            got(loop, reader, "trashed", include_segments=include_segments)


@pytest.mark.parametrize(
    "filters",
    [
        pytest.param({}, id="no-filter"),
        pytest.param({"source": "meeting"}, id="source"),
        pytest.param({"since": ts(1)}, id="since"),
        pytest.param({"since": ts(1), "until": ts(30)}, id="range"),
        pytest.param({"until": ts(30), "source": "file", "after": (ts(20), "x")}, id="until-source-after"),
    ],
)
def test_the_list_reads_speakers_by_index_for_the_page_only(
    loop: asyncio.AbstractEventLoop, reader: Reader, filters: dict[str, Any]
) -> None:
    """The plan: segments are searched on (transcript_id, seq), never scanned, and the list is
    walked in index order with no sort, so the speakers subquery runs for the rows returned only
    (a sort would run it for every row the filters let through, before the LIMIT)."""
    listed(loop, reader, limit=1)  # the statement asks magnotia_seen, registered by the first list
    after = filters.pop("after", None)
    sql = (
        transcripts.LIST_TRANSCRIPTS
        + transcripts._filters(filters.get("since"), filters.get("until"), filters.get("source"))
        + (transcripts.AFTER_TRANSCRIPT if after else "")
        + transcripts.LIVE_ONLY
        + transcripts.NEWEST_FIRST
    )
    params: dict[str, Any] = {"since": None, "until": None, "source": None, "limit": 21, "long": 1 << 16, **filters}
    if after:
        params["after_created"], params["after_id"] = after
    plan = loop.run_until_complete(reader.all("EXPLAIN QUERY PLAN " + sql, params))
    details = [(row[1], row[3]) for row in plan]
    assert any("SEARCH segments USING INDEX sqlite_autoindex_segments_1 (transcript_id=?)" in d for _, d in details)
    assert not any(d.startswith("SCAN segments") for _, d in details), details
    assert any("transcripts USING INDEX transcripts_by_created" in d for parent, d in details if parent == 0), details
    assert not any("TEMP B-TREE" in d for parent, d in details if parent == 0), details


def test_a_listed_rows_kept_speakers_follow_the_store(loop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    """Speakers kept from one page are reused for the same generation only: a segment the app adds
    later (a new speaker) shows on the next page that lists the row, short or long."""
    b = StoreBuilder(tmp_path / "magnotia.db")
    b.transcript(id="short", raw_text="hello", created_at=ts(2), segments=[("Ana", "hello")])
    b.transcript(id="long", raw_text="x" * 70_000, created_at=ts(1), segments=[("Bo", "x")])
    path = b.close()
    store = Store(path)

    async def page() -> dict[str, list[str]]:
        async with store.reader() as db:
            rows, _, _ = await transcripts.list_transcripts(db, limit=10)
        return {t["id"]: t["speakers"] for t in rows}

    try:
        first = {"short": ["Ana"], "long": ["Bo"]}
        assert loop.run_until_complete(page()) == first
        assert loop.run_until_complete(page()) == first  # from what was kept
        with sqlite3.connect(path) as app:
            app.executemany(
                "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text)"
                " VALUES (?, 1, 1, 2, ?, 'y')",
                [("short", "Cy"), ("long", "Di")],
            )
        assert loop.run_until_complete(page()) == {"short": ["Ana", "Cy"], "long": ["Bo", "Di"]}
    finally:
        loop.run_until_complete(store.close())
