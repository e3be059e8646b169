"""Checks of the test helpers themselves: the wire validator rejects what it must, the sample store holds what
the tests expect of it. No server runs here."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.sample import Sample, build_sample
from tests.support.wire_schema import WireSchemaError, check_server_message, validate_server_message


def test_wire_schema_rejects_what_it_should() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "x"}], "isError": False}}
    validate_server_message(ok, "2025-11-25", "tools/call")
    cases: list[tuple[dict[str, Any], str, str | None, str]] = [
        ({**ok, "extra": 1}, "2025-11-25", "tools/call", "envelope"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "txt": "x"}]}},
            "2025-11-25",
            "tools/call",
            "text",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": "false"}},
            "2025-11-25",
            "tools/call",
            "isError",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "structuredContent": [1]}},
            "2025-11-25",
            "tools/call",
            "structuredContent",
        ),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "titel": "x"}]},
            },
            "2025-06-18",
            "tools/list",
            "titel",
        ),
        (ok, "2026-07-28", "tools/call", "resultType"),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}},
            "2026-07-28",
            "tools/list",
            "ttlMs",
        ),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "2026-07-28", "initialize", "does not have"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, "2025-11-25", None, "request_method"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "m"}}, "2026-07-28", "tools/list", "data"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, "2025-11-25", "tools/list", "code"),
        (
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
            "2025-06-18",
            None,
            "progressToken",
        ),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping"}, "2026-07-28", None, "does not exist"),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, "2025-11-25", "ping", "envelope"),
    ]
    for message, revision, method, words in cases:
        problems = check_server_message(message, revision, method)
        assert problems, (message, revision)
        assert words in " ".join(problems), (words, problems)
    with pytest.raises(WireSchemaError, match="2026-07-28"):
        validate_server_message(ok, "2026-07-28", "tools/call")
    # Lax mode takes what the models take: unknown members are ignored there.
    assert check_server_message({**ok, "extra": 1}, "2025-11-25", "tools/call", strict=False) == []


@pytest.mark.parametrize("fts", [pytest.param(True, id="indexed"), pytest.param(False, id="no-index")])
def test_sample_store_is_what_the_tests_expect(tmp_path: Path, fts: bool) -> None:
    """The rows in the file are the ones Sample describes: live ids newest first, the trash, segments and tasks."""
    sample: Sample = build_sample(tmp_path / "magnotia.db", fts=fts)
    assert sample.path.name == "magnotia.db"  # the container finds its store by this name
    conn = sqlite3.connect(sample.path)
    try:
        live = conn.execute(
            "SELECT id FROM transcripts WHERE deleted_at IS NULL ORDER BY created_at DESC, id DESC"
        ).fetchall()
        assert [r[0] for r in live] == sample.live
        assert len(set(sample.live)) == 3
        trashed = conn.execute("SELECT id FROM transcripts WHERE deleted_at IS NOT NULL").fetchall()
        assert [r[0] for r in trashed] == [sample.trashed]
        titles = dict(conn.execute("SELECT id, title FROM transcripts").fetchall())
        assert titles == sample.titles
        sources = dict(conn.execute("SELECT id, source FROM transcripts").fetchall())
        assert (sources[sample.meeting], sources[sample.dictation], sources[sample.file]) == (
            "meeting",
            "dictation",
            "file",
        )
        speakers = conn.execute(
            "SELECT speaker FROM segments WHERE transcript_id = ? ORDER BY seq", (sample.meeting,)
        ).fetchall()
        assert [r[0] for r in speakers] == ["Ana", "Bo", "Ana"]
        tasks = conn.execute("SELECT transcript_id, title, status FROM tasks ORDER BY title").fetchall()
        assert tasks == [(sample.meeting, "Book the room", "done"), (sample.meeting, "Send the budget draft", "open")]
        has_index = conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE '%fts%'").fetchone()[0] > 0
        assert has_index is fts
    finally:
        conn.close()
