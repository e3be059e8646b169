"""magnotia_mcp.text: windows that rebuild the whole text, list previews, and the text block of a tool result."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from magnotia_mcp.text import PREVIEW_CHARS, StoredBlob, preview, result_text, stored_text, window_end
from tests.support.textchecks import breaks_cluster
from tests.unit.texts import WINDOW_TEXTS

# -- windows ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(WINDOW_TEXTS))
@pytest.mark.parametrize("max_chars", [1, 2, 3, 5, 7, 64])
def test_windows_rebuild_the_whole_text_and_never_split_a_cluster(name: str, max_chars: int) -> None:
    """Walking window_end from 0 to the end covers the text exactly, cutting only between clusters."""
    text = WINDOW_TEXTS[name]
    offset, pieces = 0, []
    while offset < len(text):
        end = window_end(text, offset, max_chars)
        assert end > offset, "a window must make progress"
        assert not breaks_cluster(text, end), (offset, end, text[end - 2 : end + 2])
        piece = text[offset:end]
        piece.encode("utf-16-le")  # no lone surrogates in UTF-16 terms
        if end - offset > max_chars:  # only a single cluster longer than the window may overflow it
            assert all(breaks_cluster(text, i) for i in range(offset + 1, end))
        pieces.append(piece)
        offset = end
    assert "".join(pieces) == text


# -- previews -------------------------------------------------------------------------


def test_preview_is_short_cut_at_a_word_and_marked() -> None:
    """A long text previews as at most 200 characters, ending at a word with an ellipsis."""
    text = "word " * 100
    out = preview(text)
    assert len(out) <= PREVIEW_CHARS
    assert out.endswith("…")
    assert out[:-1].rstrip().endswith("word")
    assert preview("  short\n\ttext  ") == "short text"
    long_word = "x" * 500
    assert len(preview(long_word)) <= PREVIEW_CHARS


# -- the text block of a tool result ----------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [
        pytest.param({"transcripts": [], "next_cursor": None}, id="empty-page"),
        pytest.param(
            {"transcripts": [{"id": "a", "title": 'say "hi" é 🎉', "n": 1.5}, {"id": "b"}], "next_cursor": "c"},
            id="page",
        ),
        pytest.param({"id": "x", "text": "line one\nline two", "segments": [{"seq": 0}], "tasks": []}, id="nested"),
        pytest.param({}, id="no-fields"),
    ],
)
def test_result_text_is_json_equal_to_the_structured_result(result: dict[str, Any]) -> None:
    """Parsing the text gives back exactly the result object."""
    assert json.loads(result_text(result)) == result


def test_result_text_gives_each_field_and_each_list_item_its_own_line() -> None:
    """A page of n items is n + 5 lines (braces, list brackets, next_cursor): no line per leaf value."""
    items = [{"id": str(i), "title": f"t{i}", "preview": "p"} for i in range(50)]
    text = result_text({"transcripts": items, "next_cursor": None})
    lines = text.splitlines()
    assert len(lines) == 50 + 5
    assert lines[0] == "{"
    assert lines[-1] == "}"
    assert lines[2] == '    {"id": "0", "title": "t0", "preview": "p"},'


# -- BLOBs where the schema says TEXT -----------------------------------------------------


def test_a_stored_blob_sorts_as_sqlite_orders_the_column_and_shows_as_its_text() -> None:
    """Texts and BLOBs in one TEXT column: Python's order of the values read equals SQLite's ORDER BY."""
    values: list[str | bytes] = ["", "2026-05-20", "yesterday", "é", b"", b"\x00\x01", b"2026-05-20", b"\xff", "\x00"]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (created_at TEXT NOT NULL, id TEXT NOT NULL)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(v, f"id{k}") for k, v in enumerate(values)])
    for order in ("", " DESC"):
        rows = conn.execute(f"SELECT created_at, id FROM t ORDER BY created_at{order}, id{order}").fetchall()
        read = [(stored_text(created), id_) for created, id_ in rows]
        assert sorted(read, reverse=bool(order)) == read
    assert json.dumps(StoredBlob(b"2026-05-20\xff")) == '"2026-05-20\\ufffd"'
    assert StoredBlob(b"x") == StoredBlob(b"x") != "x"
    assert len({StoredBlob(b"x"), StoredBlob(b"x"), "x"}) == 2
    assert stored_text("x") == "x"
    assert stored_text(None) is None
