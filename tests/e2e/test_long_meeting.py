"""A long meeting end to end: read by window and by time, listed and searched, over the real server.

The meeting's raw text (the segments joined by spaces, as the app writes it)
is well over the size the server reads whole, so each of these goes through
the window path: its text and segments are read by window, not whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.protocol import LATEST_LEGACY
from tests.support.server import ServerProcess, SharedServers

MEETING = "00000000-0000-4000-8000-00000000000a"
SEGMENTS = 3_000
WORDS = ("budget", "roadmap", "hiring", "café", "👍🏽", "review", "naïve", "launch")

pytestmark = pytest.mark.transports("stdio", "http")


def _said(k: int) -> tuple[str | None, str]:
    text = " ".join(WORDS[(k * 7 + i * 3) % len(WORDS)] for i in range(3 + k % 9))
    if k in (17, 1_500, 2_990):
        text += " the periwinkle plan"
    speaker = "Latecomer" if k == SEGMENTS - 1 else ("Ana", "Bo", None)[k % 3]
    return speaker, text


SAID = [_said(k) for k in range(SEGMENTS)]
RAW = " ".join(text for _, text in SAID)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = StoreBuilder(tmp_path_factory.mktemp("long-meeting") / "magnotia.db")
    assert len(RAW.encode()) > 128 * 1024
    b.transcript(
        id=MEETING,
        title="Offsite",
        source="meeting",
        raw_text=RAW,
        formatted_text="\n\n".join(f"**{sp or 'Someone'}:** {text}" for sp, text in SAID),
        created_at=ts(30),
        segments=SAID,
    )
    b.transcript(title="Short note", raw_text="periwinkle paint for the hall", created_at=ts(20))
    b.close()
    return b.path


@pytest.fixture
def srv(shared_servers: SharedServers, store: Path) -> ServerProcess:
    return shared_servers.get(store, LATEST_LEGACY)


def _spans() -> list[tuple[int, int, int, int]]:
    """(start char, end char, start_ms, end_ms) of each segment, as the store factory times them."""
    out, pos, ms = [], 0, 0
    for _, text in SAID:
        end_ms = ms + 1000 + 50 * len(text)
        out.append((pos, pos + len(text), ms, end_ms))
        pos += len(text) + 1
        ms = end_ms
    return out


def test_chained_windows_of_a_long_meeting_give_back_its_text_and_every_segment(srv: ServerProcess) -> None:
    """Windows of 10,000 characters: the texts concatenate to the raw text, each segment shows, in order."""
    parts: list[str] = []
    seqs: list[int] = []
    offset: int | None = 0
    while offset is not None:
        window = srv.result(
            "get_transcript",
            {"id": MEETING, "format": "raw", "offset": offset, "max_chars": 10_000, "include_segments": True},
        )
        assert window["total_chars"] == len(RAW)
        lo, hi = window["offset"], window["offset"] + len(window["text"])
        spans = _spans()
        assert [s["seq"] for s in window["segments"]] == [
            k for k, (a, b, _, _) in enumerate(spans) if b > lo and a < hi
        ]
        parts.append(window["text"])
        seqs += [s["seq"] for s in window["segments"] if not seqs or s["seq"] > seqs[-1]]
        offset = window["next_offset"]
    assert len(parts) > 10
    assert "".join(parts) == RAW
    assert seqs == list(range(SEGMENTS))


def test_what_was_said_between_two_times_comes_from_the_segments(srv: ServerProcess) -> None:
    """start_ms/end_ms: the segments said in that time, and the text they make, whole."""
    spans = _spans()
    start_ms, end_ms = spans[1_000][2] + 10, spans[1_040][2]
    window = srv.result(
        "get_transcript",
        {"id": MEETING, "format": "raw", "start_ms": start_ms, "end_ms": end_ms, "include_segments": True}
        | {"max_tokens": 20_000},  # text and segments both, whole
    )
    said = [k for k, (_, _, a, b) in enumerate(spans) if b > start_ms and a < end_ms]
    assert said == list(range(1_000, 1_040))
    assert [s["seq"] for s in window["segments"]] == said
    assert window["text"] == " ".join(SAID[k][1] for k in said)
    assert window["offset"] == spans[1_000][0]
    assert window["speakers"] == ["Ana", "Bo", "Latecomer"]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        pytest.param({"offset": 5, "start_ms": 0}, "offset or start_ms/end_ms, not both", id="offset-and-time"),
        pytest.param({"start_ms": 5_000, "end_ms": 5_000}, "must be after start_ms", id="empty-time-range"),
        pytest.param({"start_ms": -1}, "start_ms", id="negative"),
    ],
)
def test_a_time_window_that_cannot_be_read_says_why(
    srv: ServerProcess, arguments: dict[str, Any], problem: str
) -> None:
    response = srv.call("get_transcript", {"id": MEETING, **arguments})
    result = response["result"]
    assert result["isError"] is True
    assert problem in result["content"][0]["text"]


def test_a_long_meeting_lists_with_all_its_speakers(srv: ServerProcess) -> None:
    listed = srv.result("list_transcripts", {})["transcripts"]
    assert listed[0]["id"] == MEETING
    assert listed[0]["speakers"] == ["Ana", "Bo", "Latecomer"]
    assert listed[0]["preview"].startswith("**Ana:** " + SAID[0][1][:20])


def test_a_search_hit_on_a_long_meeting_points_at_the_moments_it_was_said(srv: ServerProcess) -> None:
    """The moments come from the segments that match, in spoken order; they quote it, so no snippet repeats them."""
    hits = {h["transcript_id"]: h for h in srv.result("search_transcripts", {"query": "periwinkle"})["hits"]}
    meeting = hits[MEETING]
    assert [m["seq"] for m in meeting["moments"]] == [17, 1_500, 2_990]
    assert all("**periwinkle**" in m["snippet"] for m in meeting["moments"])
    assert "snippet" not in meeting
    assert "segment" not in meeting
    assert meeting["matched_terms"] == ["periwinkle"]
