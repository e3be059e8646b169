"""Store faults and the read-only promise, end to end.

A missing, foreign, corrupt, newer or locked store must never kill or hang
the server: initialize is answered and tool calls say what is wrong and what
to do (-32603). The server never creates the store and never changes a byte
of it; the app may write at any time and the next call sees its commits.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.server import Launcher, ServerProcess

Start = Callable[..., ServerProcess]
NewStore = Callable[..., StoreBuilder]
TOOL_CALLS = [
    pytest.param("list_transcripts", {}, id="list_transcripts"),
    pytest.param("get_transcript", {"id": "x"}, id="get_transcript"),
    pytest.param("search_transcripts", {"query": "budget"}, id="search_transcripts"),
    pytest.param("list_tasks", {}, id="list_tasks"),
]
STORE_FAULT_TIMEOUT = 10.0  # seconds: only so that a hang fails the test instead of stalling the run


def store_error(
    server: ServerProcess, tool: str = "list_transcripts", arguments: Mapping[str, object] | None = None
) -> str:
    """Call a tool that must fail with -32603 (a store fault must not hang the call); returns the message."""
    response = server.call(tool, arguments if arguments is not None else {}, timeout=STORE_FAULT_TIMEOUT)
    assert "error" in response, response
    assert response["error"]["code"] == -32603, response
    return str(response["error"]["message"])


def snapshot(directory: Path) -> dict[str, tuple[str, int]]:
    """Every file in directory: its sha256 and mtime."""
    out = {}
    for path in sorted(directory.iterdir()):
        if path.is_file():
            out[path.name] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns)
    return out


def assert_untouched(before: dict[str, tuple[str, int]], directory: Path) -> None:
    """Every file is as it was, and nothing was added: not even an empty -wal or -shm beside a WAL store."""
    assert snapshot(directory) == before


def small_store(path: Path, titles: tuple[str, ...] = ("First",), *, journal: str = "wal") -> Path:
    b = StoreBuilder(path)
    for i, title in enumerate(titles):
        b.transcript(title=title, raw_text=f"{title} text about the budget", created_at=ts(1 + i))
    b.task(title="A task")
    b.close()
    if journal != "wal":
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA journal_mode = {journal}")
        conn.close()
    return path


def titles(server: ServerProcess) -> list[str]:
    return [t["title"] for t in server.result("list_transcripts", {"limit": 100})["transcripts"]]


# -- a missing store -------------------------------------------------------------------


@pytest.mark.parametrize(("tool", "arguments"), TOOL_CALLS)
def test_a_missing_store_still_initializes_and_each_tool_says_what_to_do(
    start_server: Start, tmp_path: Path, launcher: Launcher, tool: str, arguments: dict[str, object]
) -> None:
    """No file: initialize and tools/list work; a tool call is -32603 naming the path and the fix."""
    db = tmp_path / "empty-dir" / "magnotia.db"
    db.parent.mkdir()
    server = start_server(db)
    assert server.initialize("2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
    assert len(server.request("tools/list")["result"]["tools"]) == 4
    message = store_error(server, tool, arguments)
    assert launcher.served_path(db) in message
    assert "Magnotia app" in message
    assert "--db" in message
    assert server.request("ping")["result"] == {}
    assert list(db.parent.iterdir()) == [], "the server must never create the store (or anything beside it)"


def test_a_store_created_after_start_is_used_without_a_restart(start_server: Start, tmp_path: Path) -> None:
    """The first call fails for want of a store; once the app creates it, the next call works."""
    db = tmp_path / "later" / "magnotia.db"
    db.parent.mkdir()
    server = start_server(db)
    server.initialize("2025-11-25")
    store_error(server)
    store_error(server, "search_transcripts", {"query": "budget"})
    small_store(db, ("Created later",))
    assert titles(server) == ["Created later"]
    assert server.result("search_transcripts", {"query": "budget"})["hits"][0]["title"] == "Created later"


def test_the_default_location_is_not_created_when_missing(
    start_server: Start, tmp_path: Path, launcher: Launcher
) -> None:
    """With no --db and no MAGNOTIA_DB, the app's data dir is used and never created by the server."""
    if not launcher.local:
        pytest.skip("the container always serves /data/magnotia.db")
    server = start_server(None)
    server.initialize("2025-06-18")
    expected = tmp_path / "xdg-data" / "com.magnotia.app" / "magnotia.db"  # XDG_DATA_HOME set by conftest
    assert str(expected) in store_error(server)
    assert not (tmp_path / "xdg-data").exists()


def test_magnotia_db_names_the_store_when_there_is_no_flag(
    start_server: Start, tmp_path: Path, launcher: Launcher
) -> None:
    """$MAGNOTIA_DB points the server at a store; the resolved path is logged on stderr."""
    if not launcher.local:
        pytest.skip("the container sets its own store location")
    db = small_store(tmp_path / "env" / "magnotia.db", ("From the environment",))
    server = start_server(None, env={"MAGNOTIA_DB": str(db)})
    server.initialize("2025-06-18")
    assert titles(server) == ["From the environment"]
    assert str(db) in server.stderr


# -- files that are not a usable store ---------------------------------------------------------


def _not_sqlite(path: Path) -> None:
    path.write_bytes(b"This is a text file, not a database.\n" * 200)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('hello')")
    conn.commit()
    conn.close()


def _newer(path: Path) -> None:
    small_store(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 2")
    conn.commit()
    conn.close()


def _truncated(path: Path) -> None:
    small_store(path, tuple(f"T{i}" for i in range(50)), journal="delete")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3 + 17])


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(_not_sqlite, ("not a readable SQLite database",), id="not-sqlite"),
        pytest.param(_empty, ("not a Magnotia store",), id="empty-file"),
        pytest.param(_foreign, ("not a Magnotia store", "transcripts"), id="sqlite-but-not-magnotia"),
        pytest.param(_newer, ("schema version 2", "upgrade"), id="newer-user-version"),
        pytest.param(_truncated, ("SQLite",), id="truncated"),
    ],
)
def test_a_file_that_is_not_a_usable_store_is_a_clear_error_and_stays_untouched(
    start_server: Start, tmp_path: Path, launcher: Launcher, make: Callable[[Path], None], says: tuple[str, ...]
) -> None:
    """Each kind of bad file gets -32603 naming the path and the problem; the file and its directory are unchanged."""
    db = tmp_path / "bad" / "magnotia.db"
    db.parent.mkdir()
    make(db)
    before = snapshot(db.parent)
    server = start_server(db)
    server.initialize("2025-06-18")
    for tool, arguments in (("list_transcripts", {}), ("search_transcripts", {"query": "x"}), ("list_tasks", {})):
        message = store_error(server, tool, arguments)
        assert launcher.served_path(db) in message
        for phrase in says:
            assert phrase in message, message
    assert server.request("ping")["result"] == {}
    server.close()
    assert_untouched(before, db.parent)


def test_a_bad_file_replaced_by_a_real_store_works_on_the_next_call(start_server: Start, tmp_path: Path) -> None:
    """After the fault is fixed (the file atomically replaced), the next call succeeds without a restart."""
    db = tmp_path / "fixme" / "magnotia.db"
    db.parent.mkdir()
    _newer(db)
    server = start_server(db)
    server.initialize("2025-06-18")
    store_error(server)
    good = small_store(tmp_path / "staging" / "magnotia.db", ("Fixed",), journal="delete")
    os.replace(good, db)
    assert titles(server) == ["Fixed"]


def test_a_directory_given_as_the_store_is_a_clear_error(
    start_server: Start, tmp_path: Path, launcher: Launcher
) -> None:
    """--db naming a directory says so."""
    if not launcher.local:
        pytest.skip("the container mounts a directory and serves the file in it")
    db = tmp_path / "adir"
    db.mkdir()
    server = start_server(db)
    server.initialize("2025-06-18")
    assert "directory" in store_error(server)


def test_a_store_removed_and_recreated_while_serving_is_followed(start_server: Start, tmp_path: Path) -> None:
    """The app deleting the store makes calls fail cleanly; a new store at the path is picked up."""
    db = small_store(tmp_path / "moving" / "magnotia.db", ("Before",), journal="delete")
    server = start_server(db)
    server.initialize("2025-06-18")
    assert titles(server) == ["Before"]
    db.unlink()
    assert "no Magnotia database" in store_error(server)
    small_store(db, ("After",), journal="delete")
    assert titles(server) == ["After"]


def test_a_store_locked_past_the_busy_timeout_is_an_error_and_then_recovers(
    start_server: Start, tmp_path: Path, launcher: Launcher
) -> None:
    """A writer holding an exclusive lock: the call fails with -32603 (no hang, no crash); afterwards it works."""
    db = small_store(tmp_path / "locked" / "magnotia.db", ("Locked",), journal="delete")
    server = start_server(db)
    server.initialize("2025-06-18")
    assert titles(server) == ["Locked"]
    app = sqlite3.connect(db, isolation_level=None)
    try:
        app.execute("BEGIN EXCLUSIVE")
        app.execute(
            "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
            " VALUES ('n', 'New', 'file', 'x', ?, ?)",
            (ts(20), ts(20)),
        )
        message = store_error(server)  # not a hang: the busy timeout runs out and the call says so
        assert "locked" in message or "busy" in message
        assert launcher.served_path(db) in message
        assert server.request("ping")["result"] == {}
        app.execute("COMMIT")
    finally:
        app.close()
    assert titles(server) == ["New", "Locked"]


# -- the app writing while the server runs ----------------------------------------------------


def test_rows_the_app_commits_are_seen_on_the_next_call(start_server: Start, new_store: NewStore) -> None:
    """A writer in WAL mode commits while the server runs; the next call sees them, uncommitted rows never."""
    b = new_store()
    b.transcript(title="Old", raw_text="old budget", created_at=ts(1))
    db = b.close()
    server = start_server(db)
    server.initialize("2025-06-18")
    assert titles(server) == ["Old"]
    app = sqlite3.connect(db, isolation_level=None)
    try:
        assert app.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        for i in range(3):
            app.execute(
                "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
                " VALUES (?, ?, 'dictation', 'fresh budget', ?, ?)",
                (f"id{i}", f"New {i}", ts(10 + i), ts(10 + i)),
            )
            assert titles(server)[0] == f"New {i}"
        app.execute("BEGIN IMMEDIATE")
        app.execute(
            "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
            " VALUES ('pending', 'Uncommitted', 'dictation', 'pending budget', ?, ?)",
            (ts(20), ts(20)),
        )
        app.execute("INSERT INTO tasks (id, title, created_at) VALUES ('k-pending', 'Uncommitted task', ?)", (ts(20),))
        # The open write transaction does not block readers: these are answers, not "locked" errors.
        assert "Uncommitted" not in titles(server)
        hits = server.result("search_transcripts", {"query": "budget", "limit": 50})["hits"]
        assert {h["title"] for h in hits} == {"Old", "New 0", "New 1", "New 2"}
        assert server.result("list_tasks")["tasks"] == []
        app.execute("COMMIT")
        assert titles(server)[0] == "Uncommitted"
        assert [t["title"] for t in server.result("list_tasks")["tasks"]] == ["Uncommitted task"]
        app.execute("UPDATE transcripts SET deleted_at = ? WHERE id = 'pending'", (ts(21),))
        assert "Uncommitted" not in titles(server)  # moved to the trash: gone at once
    finally:
        app.close()


def test_the_server_never_changes_a_byte_of_the_store(start_server: Start, new_store: NewStore) -> None:
    """A session using every tool leaves the store file's bytes and mtime exactly as they were."""
    b = new_store()
    first = b.transcript(title="Budget", raw_text="budget text", formatted_text="Budget text.", created_at=ts(1))
    b.task(transcript_id=first, title="Pay")
    db = b.close()
    before = snapshot(db.parent)
    server = start_server(db)
    server.initialize("2025-06-18")
    server.result("list_transcripts")
    server.result("get_transcript", {"id": first, "include_segments": True})
    server.result("search_transcripts", {"query": "budget"})
    server.result("list_tasks")
    assert server.close() == 0
    assert_untouched(before, db.parent)


def test_a_rollback_journal_store_gets_no_files_beside_it(start_server: Start, tmp_path: Path) -> None:
    """On a store in DELETE journal mode the directory is left exactly as it was: no journal, WAL or SHM."""
    db = small_store(tmp_path / "delete-mode" / "magnotia.db", ("Plain",), journal="delete")
    before = snapshot(db.parent)
    server = start_server(db)
    server.initialize("2025-06-18")
    assert titles(server) == ["Plain"]
    server.result("search_transcripts", {"query": "budget"})
    server.result("list_tasks")
    assert server.close() == 0
    assert snapshot(db.parent) == before


def test_a_store_path_with_odd_characters_is_served(start_server: Start, tmp_path: Path) -> None:
    """Spaces, '?', '#', '%' and non-ASCII in the store's path are part of the path, not of a URI, under LANG=C."""
    db = small_store(tmp_path / "My Stores ?#%20 café Ünïcödé" / "magnotia.db", ("Odd path",))
    server = start_server(db, env={"LANG": "C", "LC_ALL": "C"})
    server.initialize("2025-06-18")
    assert titles(server) == ["Odd path"]
    assert server.result("search_transcripts", {"query": "budget"})["hits"][0]["title"] == "Odd path"
    assert not (tmp_path / "My Stores ").exists()  # nothing created at a truncated path


def test_text_that_is_not_utf8_is_shown_with_replacement_characters(start_server: Start, new_store: NewStore) -> None:
    """A row holding bytes that are not UTF-8 is still listed, read and searched; bad bytes become U+FFFD."""
    b = new_store()
    b.transcript(title="Fine", raw_text="all good budget", created_at=ts(1))
    b.execute(
        "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
        " VALUES ('bad', CAST(X'4361666580' AS TEXT), 'dictation', CAST(X'62756467657420ff21' AS TEXT), ?, ?)",
        (ts(2), ts(2)),
    )
    db = b.close()
    server = start_server(db)
    server.initialize("2025-06-18")
    listed = server.result("list_transcripts", {})["transcripts"]
    assert [t["title"] for t in listed] == ["Cafe\ufffd", "Fine"]
    assert server.result("get_transcript", {"id": "bad"})["text"] == "budget \ufffd!"
    hits = server.result("search_transcripts", {"query": "budget"})["hits"]
    assert {h["transcript_id"] for h in hits} == {"bad", listed[1]["id"]}
