"""The server keeps the semantic index current on a thread of its own: searches never wait for it.

In-process, on real stores and a real index built by the command: the refresh's update is held on an
event where a test needs to see what happens while it runs, so what is seen is decided by order. The
server-level view (a new transcript found by meaning after a while, over pipes) is in
tests/e2e/test_semantic_search.py.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import ts
from magnotia_mcp.search.semantic import build, indexfile, nearest, refresh
from tests.semantic import stores
from tests.semantic.conftest import Index


def indexed(db: Path) -> set[str]:
    conn = sqlite3.connect(indexfile.location(db))
    try:
        return {row[0] for row in conn.execute("SELECT id FROM docs")}
    finally:
        conn.close()


@pytest.fixture
def ready(index: Index, model_dir: Path, tmp_path: Path) -> tuple[Path, nearest.Searcher]:
    """The test store, indexed by the command, and its index loaded as a search loads it."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    return db, nearest.searcher(db, wait=60)


def wait_for(thread: threading.Thread | None) -> None:
    assert thread is not None
    thread.join(120)
    assert not thread.is_alive()


def test_without_its_mark_the_first_search_checks_every_stamp_and_writes_nothing(
    ready: tuple[Path, nearest.Searcher],
) -> None:
    """An index whose mark is gone (an older version's, or a folder it could not be written to) is checked against
    the store by the first search: nothing to do, nothing written to the index, and the mark is back."""
    db, found = ready
    mark = Path(f"{indexfile.location(db)}.current")
    assert mark.is_file()
    mark.unlink()
    before = indexfile.location(db).stat().st_mtime_ns
    wait_for(refresh.after_search(db, found))
    assert indexfile.location(db).stat().st_mtime_ns == before
    assert mark.is_file()
    assert refresh.after_search(db, found) is None  # the store has not moved since: no run
    assert not refresh.behind(db, found)


def test_a_mark_of_another_store_state_is_not_trusted(ready: tuple[Path, nearest.Searcher]) -> None:
    """The app committed after the mark was written (before any server ran): the first search checks, and finds
    the new meeting."""
    db, found = ready
    stores.add_meeting(db)
    wait_for(refresh.after_search(db, found))
    assert stores.NEW in indexed(db)
    assert indexfile.remove(db)
    assert not Path(f"{indexfile.location(db)}.current").exists()  # --drop takes the mark with the index


def test_new_and_trashed_transcripts_are_followed_without_holding_up_a_search(
    ready: tuple[Path, nearest.Searcher], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, found = ready
    # The first search after `index`: the store has not moved since, as the command's mark says: no run.
    assert refresh.after_search(db, found) is None
    assert not refresh.behind(db, found)

    stores.add_meeting(db)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(31), stores.LEAD_DE))
    conn.close()
    assert refresh.behind(db, found)  # the store moved past the loaded index: answers say not complete

    release = threading.Event()
    entered = threading.Event()
    real = build.update

    def held(*args: Any, **kwargs: Any) -> build.Report:
        entered.set()
        assert release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "update", held)
    run = refresh.after_search(db, found)
    assert entered.wait(60)
    # While the run is held, searches are answered from the loaded index, and no second run starts.
    assert found.near("new head of development", 5).found[0].doc == stores.LEAD_DE
    assert refresh.after_search(db, found) is run
    # The index file changes (as after each batch the run commits): the loaded index still answers, unreloaded.
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('touched', '1')")
    conn.close()
    assert nearest.searcher(db, wait=0) is found
    assert nearest._loads[str(db)].stamp == found.index.stamp  # and no load of the changed file was started
    release.set()
    wait_for(run)
    assert stores.NEW in indexed(db)
    assert stores.LEAD_DE not in indexed(db)  # trashed: its vectors are gone from our file too
    assert refresh.behind(db, found)  # the index file moved on; this searcher is the old one
    nearest.searcher(db, wait=60)  # starts loading the new file (the old index answers until it is in)
    assert nearest._loads[str(db)].done.wait(60)
    fresh = nearest.searcher(db, wait=60)
    assert fresh is not found
    assert not refresh.behind(db, fresh)
    assert fresh.near("new head of development", 5).found[0].doc == stores.NEW


def test_an_index_it_cannot_trust_is_left_for_the_command(
    ready: tuple[Path, nearest.Searcher], capsys: pytest.CaptureFixture[str]
) -> None:
    db, found = ready
    where = indexfile.location(db)
    conn = sqlite3.connect(where)
    with conn:  # as another build of magnotia-mcp would leave it
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'format'")
    conn.close()
    kept = where.read_bytes()
    stores.add_meeting(db)
    wait_for(refresh.after_search(db, found))
    assert where.read_bytes() == kept  # not rebuilt by the server: `magnotia-mcp index` does that, saying so
    assert "run `magnotia-mcp index`" in capsys.readouterr().err


def test_an_index_it_cannot_write_now_is_used_as_it_is(
    ready: tuple[Path, nearest.Searcher], capsys: pytest.CaptureFixture[str]
) -> None:
    """Another writer holds the index (an `index` run): the refresh gives up, says so, and searches go on."""
    db, found = ready
    assert refresh.after_search(db, found) is None  # just after `index`: current
    assert not refresh.behind(db, found)
    writer = sqlite3.connect(indexfile.location(db), isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")  # held past the refresh's wait for the lock (5 s)
        stores.add_meeting(db)
        wait_for(refresh.after_search(db, found))
        writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert stores.NEW not in indexed(db)
    assert "could not be brought up to date" in capsys.readouterr().err
    assert refresh.behind(db, found)  # and answers say the index is not complete
    assert found.near("new head of development", 5).found[0].doc == stores.LEAD_DE


def test_an_index_written_before_it_listed_speakers_gets_them_from_the_servers_run(
    ready: tuple[Path, nearest.Searcher],
) -> None:
    """The server's run is the command's update: an index without the list of who spoke where (written by an older
    version) gets it along with what the store added, and the search after the reload scores a speaker's windows
    alone."""
    db, _ = ready
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        conn.execute("DROP TABLE speakers")
        conn.execute("DELETE FROM meta WHERE key = 'speakers'")
    conn.close()
    stores.add_meeting(db)  # the store moves: the next search starts a run
    loaded = nearest.searcher(db, wait=60)
    assert loaded.near("new head of development", 5, "jonas").speaker is None  # it cannot say yet
    wait_for(refresh.after_search(db, loaded))
    assert indexed(db) >= {stores.NEW, stores.LEAD_DE}
    nearest.searcher(db, wait=60)  # starts loading the new file (the old index answers until it is in)
    assert nearest._loads[str(db)].done.wait(60)
    fresh = nearest.searcher(db, wait=60)
    assert fresh is not loaded
    near = fresh.near("new head of development", 5, "jonas")
    assert near.speaker == "jonas"
    assert [f.doc for f in near.found] == [stores.LEAD_DE]  # Jonas spoke only there; Mara's meeting is not his
    assert fresh.near("new head of development", 5, "mara").found[0].doc == stores.NEW


def test_a_speakers_list_is_used_only_from_the_file_the_index_was_read_from(
    ready: tuple[Path, nearest.Searcher],
) -> None:
    """While a run writes the file (a refresh, after each batch), the loaded index still answers: the list in the
    file may place windows the loaded one does not hold, so a speaker's search goes by all windows until the reload."""
    db, found = ready
    assert found.near("new head of development", 5, "jonas").speaker == "jonas"
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('touched', '1')")
    conn.close()
    near = found.near("new head of development", 5, "jonas")
    assert near.speaker is None
    assert near.found[0].doc == stores.LEAD_DE  # the nearest overall; the plan keeps Jonas's among them
