"""A long transcript's windows are its exact characters, however many bytes each takes, end to end.

A window of a long transcript is read by its bytes from the nearest mark (``layouts.Marks``), and its times come
from what the first window read (``layouts.known_times``). Over stdio and HTTP, on real stores:

- a text of characters of one to four bytes each (and two code points that make one emoji), raw and formatted:
  every window, at offsets on and around the marks and at random, is exactly the stored text's characters
  [offset, offset + len(text)), and windows read in a chain give the whole text back;
- a long text that is not UTF-8 is read by characters as before, the same as SQLite cuts it;
- the first and later windows say the same created_at and updated_at, and a change to the store shows at once.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.store.layouts import MARK_BYTES
from tests.support.server import ServerProcess, SharedServers

Start = Callable[..., ServerProcess]

pytestmark = pytest.mark.transports("stdio", "http")

WIDE = "00000000-0000-4000-8000-0000000000a1"
BROKEN = "00000000-0000-4000-8000-0000000000a2"
# One to four bytes a character, and 👍🏽 (two code points, eight bytes), among plain words.
WORDS = ("budget", "café", "naïve", "Zürich", "€100", "日本語", "😀", "👍🏽", "x", "hiring", "São Paulo", "ö")


def _text(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


RAW = _text(1, 60_000)
FORMATTED = "\n\n".join(f"**Ana:** {line}" for line in _text(2, 60_000).split(" hiring "))
BROKEN_BYTES = ("caf\xe9 ".encode("latin-1") + "naïve €100 ".encode()) * 9_000  # Latin-1 among UTF-8: not UTF-8


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = StoreBuilder(tmp_path_factory.mktemp("long-windows") / "magnotia.db")
    assert len(RAW.encode()) > 4 * len(RAW) // 3 > 64 * 1024  # long, and many characters of more than one byte
    b.transcript(id=WIDE, title="Wide", source="meeting", raw_text=RAW, formatted_text=FORMATTED, created_at=ts(3))
    b.transcript(id=BROKEN, title="Broken", source="file", raw_text="placeholder", created_at=ts(4))
    b.conn.execute("UPDATE transcripts SET raw_text = CAST(? AS TEXT) WHERE id = ?", (BROKEN_BYTES, BROKEN))
    return b.close()


@pytest.fixture
def srv(shared_servers: SharedServers, store: Path) -> ServerProcess:
    return shared_servers.get(store, "2025-11-25")


def window(srv: ServerProcess, tid: str, fmt: str, offset: int, max_chars: int = 3_000) -> dict[str, object]:
    return srv.result("get_transcript", {"id": tid, "format": fmt, "offset": offset, "max_chars": max_chars})


def _offsets(text: str) -> list[int]:
    """Offsets on and beside each mark (as characters: a mark is every MARK_BYTES bytes or so), and at random."""
    marks, at = [], 0
    for k, ch in enumerate(text):
        if at // MARK_BYTES != (at + len(ch.encode())) // MARK_BYTES:
            marks += [k - 1, k, k + 1]
        at += len(ch.encode())
    rng = random.Random(7)
    return sorted({0, len(text) - 1, *marks[:30], *(rng.randrange(len(text)) for _ in range(15))})


@pytest.mark.parametrize(("fmt", "text"), [("raw", RAW), ("formatted", FORMATTED)])
def test_every_window_is_the_stored_characters(srv: ServerProcess, fmt: str, text: str) -> None:
    offsets = _offsets(text)
    assert len(offsets) > 40
    for offset in offsets:
        got = window(srv, WIDE, fmt, offset)
        assert got["format"] == fmt
        assert got["total_chars"] == len(text)
        shown = got["text"]
        assert isinstance(shown, str)
        assert shown
        assert got["offset"] == offset
        assert shown == text[offset : offset + len(shown)], offset


def test_a_chain_of_windows_gives_the_text_back(srv: ServerProcess) -> None:
    parts: list[str] = []
    offset: object = 0
    while offset is not None:
        assert isinstance(offset, int)
        got = window(srv, WIDE, "formatted", offset, 20_000)
        parts.append(str(got["text"]))
        offset = got["next_offset"]
    assert len(parts) > 5
    assert "".join(parts) == FORMATTED


def test_a_long_text_that_is_not_utf8_is_cut_where_sqlite_cuts_it(srv: ServerProcess, store: Path) -> None:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        for offset in (0, 5, MARK_BYTES, 3 * MARK_BYTES + 1, 100_000):
            got = window(srv, BROKEN, "raw", offset, 2_000)
            expected = conn.execute(
                "SELECT substr(raw_text, ? + 1, length(?)) FROM transcripts WHERE id = ?",
                (offset, str(got["text"]), BROKEN),
            ).fetchone()[0]
            assert got["text"] == expected, offset
            assert "caf\ufffd" in str(got["text"])
    finally:
        conn.close()


def test_times_are_the_stored_ones_before_and_after_a_change(start_server: Start, tmp_path: Path) -> None:
    b = StoreBuilder(tmp_path / "magnotia.db")
    b.transcript(id=WIDE, title="Wide", source="meeting", raw_text=RAW, created_at=ts(3), updated_at=ts(2))
    db = b.close()
    server = start_server(db)
    server.initialize("2025-11-25")
    first = window(server, WIDE, "raw", 0)
    again = window(server, WIDE, "raw", 50_000)
    assert (first["created_at"], first["updated_at"]) == (ts(3), ts(2))
    assert (again["created_at"], again["updated_at"]) == (ts(3), ts(2))
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE transcripts SET updated_at = ?, title = 'Renamed' WHERE id = ?", (ts(1), WIDE))
    conn.close()
    changed = window(server, WIDE, "raw", 50_000)
    assert (changed["title"], changed["created_at"], changed["updated_at"]) == ("Renamed", ts(3), ts(1))
    assert changed["text"] == again["text"]
