"""Odd but valid store shapes, end to end: each answers every tool, resource and prompt, never -32603.

Each test builds the exact shape a property in tests/properties/test_store_shapes.py
(or issue 18) found, on a real file, and reads it over the real server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.protocol import REVISIONS, URI_PREFIX, URI_TEMPLATE, at_least
from tests.support.server import ServerProcess

Start = Callable[..., ServerProcess]
NewStore = Callable[..., StoreBuilder]

SILENT = "00000000-0000-4000-8000-0000000000e0"  # a dictation where nothing was heard
UNFORMATTED = "00000000-0000-4000-8000-0000000000e1"  # raw text, formatted text ''
WORKSHOP = "00000000-0000-4000-8000-0000000000e2"  # over 64 KiB (the windowed path), formatted text ''


def ok(response: dict[str, Any]) -> dict[str, Any]:
    """A result that is not an error; its structured content (or the parsed text) for tool calls."""
    assert "result" in response, response
    return response["result"]  # type: ignore[no-any-return]


def tool(server: ServerProcess, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = ok(server.call(name, arguments))
    assert result.get("isError") is not True, result
    return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]


def silent_store(new_store: NewStore, *, fts: bool = True) -> StoreBuilder:
    b = new_store(fts=fts)
    b.transcript(id=SILENT, raw_text="", formatted_text=None, segments=[], created_at=ts(3), duration_ms=0)
    b.task(title="Follow up on the silent note", transcript_id=SILENT)
    return b


@pytest.mark.parametrize("revision", REVISIONS)
def test_an_empty_transcript_is_read_at_every_revision(start_server: Start, new_store: NewStore, revision: str) -> None:
    """Issue 18, finding 1: raw_text '', formatted_text NULL, no segments was -32603 'float division by zero'."""
    db = silent_store(new_store).close()
    server = start_server(db)
    server.open(revision)
    for args in (
        {"id": SILENT},
        {"id": SILENT, "format": "formatted"},
        {"id": SILENT, "format": "raw", "include_segments": True},
        {"id": SILENT, "offset": 5, "max_chars": 1},
    ):
        got = tool(server, "get_transcript", args)
        assert (got["text"], got["offset"], got["total_chars"], got["next_offset"]) == ("", 0, 0, None), got
        assert got["format"] == "raw"
        assert got["speakers"] == []
        assert [t["title"] for t in got["tasks"]] == ["Follow up on the silent note"]
        if "include_segments" in args:
            assert got["segments"] == []
    # A time window needs segments: a tool error that says so, not a crash.
    timed = server.call("get_transcript", {"id": SILENT, "start_ms": 0})
    if at_least(revision, "2025-11-25"):
        assert timed["result"]["isError"] is True, timed
        assert "read it with offset instead" in timed["result"]["content"][0]["text"]
    else:
        assert timed["error"]["code"] == -32602, timed


def test_an_empty_transcript_is_listed_read_as_a_resource_and_prompted(
    start_server: Start, new_store: NewStore
) -> None:
    db = silent_store(new_store).close()
    server = start_server(db)
    server.open("2025-11-25")
    (listed,) = tool(server, "list_transcripts", {})["transcripts"]
    assert (listed["id"], listed["preview"], listed["speakers"]) == (SILENT, "", [])
    assert tool(server, "search_transcripts", {"query": "anything"})["hits"] == []
    (task,) = tool(server, "list_tasks", {"transcript_id": SILENT})["tasks"]
    assert task["transcript"] == {"id": SILENT, "title": "", "created_at": ts(3), "source": "dictation"}

    (contents,) = ok(server.request("resources/read", {"uri": URI_PREFIX + SILENT}))["contents"]
    assert contents["text"].startswith("# Untitled dictation of 2026-05-03\n")
    assert "- Duration: 0:00" in contents["text"]
    assert "- [ ] Follow up on the silent note" in contents["text"]
    for name in ("summarize_transcript", "action_items"):
        got = ok(server.request("prompts/get", {"name": name, "arguments": {"transcript_id": SILENT}}))
        assert got["messages"][0]["content"]["resource"] == contents
    completion = {"ref": {"type": "ref/resource", "uri": URI_TEMPLATE}, "argument": {"name": "id", "value": ""}}
    assert ok(server.request("completion/complete", completion))["completion"]["values"] == [SILENT]


def test_an_empty_formatted_text_is_read_with_its_segments(start_server: Start, new_store: NewStore) -> None:
    """formatted_text '' beside a raw text: total 0 made the raw-to-formatted scale 0, and the window divided by it."""
    b = new_store()
    b.transcript(
        id=UNFORMATTED,
        source="meeting",
        raw_text="hello there",
        formatted_text="",
        segments=[("Ana", "hello"), ("Bo", "there")],
        created_at=ts(4),
    )
    db = b.close()
    server = start_server(db)
    server.open("2025-11-25")
    got = tool(server, "get_transcript", {"id": UNFORMATTED, "format": "formatted", "include_segments": True})
    assert (got["format"], got["text"], got["total_chars"], got["next_offset"]) == ("formatted", "", 0, None)
    # The empty window is the whole transcript: every segment is in it.
    assert [s["text"] for s in got["segments"]] == ["hello", "there"]
    timed = tool(server, "get_transcript", {"id": UNFORMATTED, "format": "formatted", "start_ms": 1500})
    assert timed["text"] == ""
    # The resource renders a meeting from its segments.
    (contents,) = ok(server.request("resources/read", {"uri": URI_PREFIX + UNFORMATTED}))["contents"]
    assert "[00:00] Ana: hello\n[00:01] Bo: there\n" in contents["text"]


def test_a_workshop_size_transcript_with_an_empty_formatted_text(start_server: Start, new_store: NewStore) -> None:
    """The same over 64 KiB, where the text is read by window (store/layouts.py)."""
    said = [("Ana" if k % 2 else None, f"point number {k} about the budget") for k in range(3000)]
    raw = " ".join(text for _, text in said)
    assert len(raw.encode()) > 64 * 1024
    b = new_store()
    b.transcript(id=WORKSHOP, source="meeting", raw_text=raw, formatted_text="", segments=said, created_at=ts(5))
    db = b.close()
    server = start_server(db)
    server.open("2025-11-25")
    got = tool(server, "get_transcript", {"id": WORKSHOP, "format": "formatted", "include_segments": True})
    assert (got["format"], got["text"], got["total_chars"], got["next_offset"]) == ("formatted", "", 0, None)
    # 3,000 segments do not fit the answer's budget: those left out are read on by time, as the note says.
    seen = [s["seq"] for s in got["segments"]]
    assert 0 < len(seen) < 3000
    for _ in range(3000):
        note = got.get("note", "")
        if "start_ms=" not in note:
            break
        start_ms = int(note.split("start_ms=")[1].split()[0])
        got = tool(
            server,
            "get_transcript",
            {"id": WORKSHOP, "format": "formatted", "include_segments": True, "start_ms": start_ms},
        )
        assert got["segments"][-1]["seq"] > seen[-1], "reading on did not move on"
        seen += [s["seq"] for s in got["segments"] if s["seq"] > seen[-1]]
    assert seen == list(range(3000))
    assert (
        tool(server, "get_transcript", {"id": WORKSHOP, "format": "formatted", "start_ms": 0, "end_ms": 1})["text"]
        == ""
    )
    (contents,) = ok(server.request("resources/read", {"uri": URI_PREFIX + WORKSHOP}))["contents"]
    # Its segments' lines, as many as fit, then where to read on by time.
    assert "] Ana: point number 1 about the budget\n" in contents["text"]
    assert f"id={WORKSHOP}, start_ms=" in contents["text"]


def test_a_transcript_over_64_kib_is_read_as_a_resource_and_prompted(start_server: Start, new_store: NewStore) -> None:
    """The resource reads the whole text: past 64 KiB that asked SQLite for sys.maxsize + 64 characters (-32603)."""
    raw = "words of a long dictation " * 3000
    assert len(raw.encode()) > 64 * 1024
    b = new_store()
    b.transcript(id=WORKSHOP, raw_text=raw, created_at=ts(6))
    db = b.close()
    server = start_server(db)
    server.open("2025-11-25")
    (contents,) = ok(server.request("resources/read", {"uri": URI_PREFIX + WORKSHOP}))["contents"]
    # Too long for one answer's budget (docs/tools.md#size-of-answers): its start, and where to read on.
    body = contents["text"].split("\n\n", 2)[2]
    assert raw.startswith(body[: body.index("\n")])
    assert f"id={WORKSHOP}, offset=" in contents["text"]
    got = ok(server.request("prompts/get", {"name": "summarize_transcript", "arguments": {"transcript_id": WORKSHOP}}))
    embedded = got["messages"][0]["content"]["resource"]
    assert (embedded["uri"], embedded["mimeType"]) == (contents["uri"], contents["mimeType"])
    assert embedded["text"].split("\n\n", 2)[:2] == contents["text"].split("\n\n", 2)[:2]


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18"])
def test_a_time_window_without_segments_is_an_argument_error_before_2025_11_25(
    start_server: Start, new_store: NewStore, revision: str
) -> None:
    """Before 2025-11-25 a tool error is a JSON-RPC error: this one was -32603, which means the store failed."""
    db = silent_store(new_store).close()
    server = start_server(db)
    server.open(revision)
    for args in ({"id": SILENT, "start_ms": 0}, {"id": SILENT, "end_ms": 10}):
        response = server.call("get_transcript", args)
        assert response["error"]["code"] == -32602, response
        assert "no time-stamped segments; read it with offset instead" in response["error"]["message"]


@pytest.mark.parametrize("fts", [True, False], ids=["fts", "scan"])
def test_text_that_is_not_utf8_is_searched_by_speaker_and_scanned(
    start_server: Start, new_store: NewStore, fts: bool
) -> None:
    """Bytes that are not UTF-8 reached the SQL functions search registers: -32603 'user-defined function raised'."""
    b = new_store(fts=fts)
    tid = b.transcript(source="meeting", raw_text="budget talk", segments=[("Ana", "budget talk")], created_at=ts(7))
    b.execute(
        "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text)"
        " VALUES (?, 1, 5000, 6000, CAST(X'416e61ff' AS TEXT), CAST(X'62756467657420ff' AS TEXT))",
        (tid,),
    )
    b.execute(
        "INSERT INTO transcripts (id, title, source, raw_text, formatted_text, created_at, updated_at)"
        " VALUES ('bad', CAST(X'4361666580' AS TEXT), 'dictation', CAST(X'62756467657420ff21' AS TEXT),"
        " CAST(X'ff' AS TEXT), ?, ?)",
        (ts(8), ts(8)),
    )
    db = b.close()
    server = start_server(db)
    server.open("2025-11-25")
    hits = tool(server, "search_transcripts", {"query": "budget", "speaker": "ana"})["hits"]
    assert [h["transcript_id"] for h in hits] == [tid]
    hits = tool(server, "search_transcripts", {"query": "budget", "speaker": "Ana\ufffd"})["hits"]
    assert [(h["transcript_id"], h["moments"][0]["seq"]) for h in hits] == [(tid, 1)]
    hits = tool(server, "search_transcripts", {"query": "budget"})["hits"]
    assert {h["transcript_id"] for h in hits} == {tid, "bad"}
    assert (
        tool(server, "search_transcripts", {"query": "budget", "sort": "newest"})["hits"][0]["transcript_id"] == "bad"
    )
