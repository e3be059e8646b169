"""The pool and the open: how a store is opened, and what a lend re-checks when the store changes (issue 10)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.errors import StoreError
from magnotia_mcp.store.opening import _authorize, open_readonly
from magnotia_mcp.store.pool import Store
from magnotia_mcp.store.reader import Reader
from tests.support.app import Player

T = TypeVar("T")


@pytest.fixture
def run(loop: asyncio.AbstractEventLoop) -> Any:
    def run(work: Coroutine[Any, Any, T]) -> T:
        return loop.run_until_complete(work)

    return run


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def wal_store(folder: Path) -> Path:
    b = StoreBuilder(folder / "magnotia.db")
    b.transcript(title="First", raw_text="budget", created_at=ts(1))
    return b.close()


async def lend(store: Store) -> Reader:
    """One lend, given back at once: what the next call would get."""
    async with store.reader() as reader:
        return reader


def test_a_wal_store_with_no_wal_beside_it_opens_immutable_and_creates_nothing(tmp_path: Path) -> None:
    db = wal_store(tmp_path)
    conn, info = open_readonly(db)
    try:
        assert info.immutable
        assert info.fingerprint is not None
        assert conn.execute("SELECT title FROM transcripts").fetchall() == [("First",)]
    finally:
        conn.close()
    assert files(tmp_path) == ["magnotia.db"]


def test_a_wal_store_the_app_has_open_opens_mode_ro(tmp_path: Path) -> None:
    db = wal_store(tmp_path)
    app = Player(db)
    try:
        conn, info = open_readonly(db)
        conn.close()
        assert not info.immutable
        assert info.fingerprint is None
        assert (info.user_version, info.has_fts, info.has_segment_fts) == (1, True, True)
    finally:
        app.close()
    assert files(tmp_path) == ["magnotia.db"]  # the app, last to close, tidied up


def test_a_rollback_journal_store_opens_mode_ro(tmp_path: Path) -> None:
    db = wal_store(tmp_path)
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    reader, info = open_readonly(db)
    reader.close()
    assert not info.immutable
    assert files(tmp_path) == ["magnotia.db"]


def test_the_authorizer_lets_the_schema_cookie_be_read_not_written() -> None:
    assert _authorize(sqlite3.SQLITE_PRAGMA, "schema_version", None, None, None) == sqlite3.SQLITE_OK
    assert _authorize(sqlite3.SQLITE_PRAGMA, "schema_version", "7", None, None) == sqlite3.SQLITE_DENY
    assert _authorize(sqlite3.SQLITE_PRAGMA, "writable_schema", None, None, None) == sqlite3.SQLITE_DENY


def test_a_lend_sees_the_store_as_it_now_is_and_the_generation_moves_with_it(run: Any, tmp_path: Path) -> None:
    """Commits move the generation; dropping the index, or a newer schema version, reopens with fresh facts."""
    db = wal_store(tmp_path)
    app = Player(db)
    store = Store(db)
    try:
        first = run(lend(store))
        assert not first.info.immutable
        generation = first.generation
        assert run(lend(store)) is first
        assert first.generation == generation  # nothing changed: nothing moves
        app.insert("Second", "more budget", ts(2))
        assert run(lend(store)) is first  # same schema: the same connection
        assert first.generation > generation
        app.drop_fts()
        after_drop = run(lend(store))
        assert after_drop is not first
        assert (after_drop.has_fts, after_drop.info.has_segment_fts) == (False, False)
        app.rebuild_fts()
        assert run(lend(store)).has_fts
        app.user_version(2)
        with pytest.raises(StoreError, match="schema version 2"):
            run(lend(store))
        app.user_version(1)
        assert run(lend(store)).info.user_version == 1
    finally:
        run(store.close())
        app.close()


def test_an_immutable_reader_is_dropped_when_the_app_starts(run: Any, tmp_path: Path) -> None:
    db = wal_store(tmp_path)
    store = Store(db)
    try:
        closed = run(lend(store))
        assert closed.info.immutable
        generation = closed.generation
        app = Player(db)  # a -wal appears
        try:
            live = run(lend(store))
            assert live is not closed
            assert not live.info.immutable
            assert live.generation > generation
        finally:
            app.close()
    finally:
        run(store.close())


def test_a_statement_during_which_an_immutable_file_changed_is_an_error_to_retry(run: Any, tmp_path: Path) -> None:
    """Rows read while the app checkpoints into an immutable open may be torn: the call is refused, not answered."""
    db = wal_store(tmp_path)
    store = Store(db)
    try:

        async def read_while_changed() -> None:
            async with store.reader() as reader:
                assert reader.info.immutable
                stat = db.stat()
                os.utime(db, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # as a checkpoint would
                with pytest.raises(StoreError, match="changed while it was being read"):
                    await reader.all("SELECT title FROM transcripts")
                assert reader.retired

        run(read_while_changed())
        assert run(lend(store)).info.immutable  # a fresh open, of the file as it is now
    finally:
        run(store.close())


def test_idle_mode_ro_connections_close_and_immutable_ones_stay(run: Any, tmp_path: Path) -> None:
    """close_idle lets go of what would stop the app from tidying up; an immutable open holds no lock and stays."""
    live_db = wal_store(tmp_path / "live")
    closed_db = wal_store(tmp_path / "closed")
    app = Player(live_db)
    live, closed = Store(live_db), Store(closed_db)
    try:
        live_reader, closed_reader = run(lend(live)), run(lend(closed))
        run(live.close_idle())
        run(closed.close_idle())
        assert run(lend(live)) is not live_reader
        assert run(lend(closed)) is closed_reader
        run(live.close_idle())
    finally:
        run(live.close())
        run(closed.close())
    app.close()
    assert files(tmp_path / "live") == ["magnotia.db"]  # the app's connection was the last


def test_a_reopen_after_an_idle_close_keeps_the_generation_unless_the_app_wrote_meanwhile(
    run: Any, tmp_path: Path
) -> None:
    """Caches outlive a pause: the files' stamp (-wal, WAL index header, main file) tells whether anything changed."""
    db = wal_store(tmp_path)
    app = Player(db)
    store = Store(db)
    try:
        first = run(lend(store))
        generation = first.generation
        run(store.close_idle())
        second = run(lend(store))
        assert second is not first
        assert second.generation == generation  # nothing was written while no connection was open
        run(store.close_idle())
        app.insert("Second", "more budget", ts(2))
        third = run(lend(store))
        assert third is not second
        assert third.generation > generation
    finally:
        run(store.close())
        app.close()
