"""`magnotia-mcp index`: builds, updates, resumes, rebuilds what it cannot trust, and never touches the store."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from devkit.storefactory import ts
from magnotia_mcp.cli.doctor import semantic_line
from magnotia_mcp.search.semantic import build, indexfile, loaded, nearest
from magnotia_mcp.search.semantic.build import update
from magnotia_mcp.search.semantic.model import StaticModel, fingerprint
from magnotia_mcp.store import embedded
from tests.semantic import stores
from tests.semantic.conftest import Index, run_cli


def folder_state(folder: Path) -> dict[str, tuple[int, str]]:
    return {
        p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in sorted(folder.iterdir())
    }


def indexed(db: Path) -> dict[str, int]:
    """Chunks per transcript in the store's index."""
    conn = sqlite3.connect(indexfile.location(db))
    try:
        return dict(conn.execute("SELECT id, chunks FROM docs").fetchall())
    finally:
        conn.close()


def test_build_then_update_leaves_the_store_folder_as_it_was(
    index: Index, model_dir: Path, cache: Path, tmp_path: Path
) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    before = folder_state(db.parent)
    done = index(db, "--model", str(model_dir))
    assert done.returncode == 0, done.stderr
    assert "5 transcripts (5 embedded, 0 already up to date, 0 removed" in done.stdout
    assert "indexing: 5/5 transcripts" in done.stderr  # the progress, on stderr
    assert folder_state(db.parent) == before  # nothing written beside or into the store
    where = indexfile.location(db)
    assert where.is_relative_to(cache)
    assert not where.is_relative_to(db.parent)
    assert stat.S_IMODE(where.stat().st_mode) == 0o600  # vectors tell what was said
    chunks = indexed(db)
    assert set(chunks) == {stores.BUDGET, stores.LEAD, stores.BUDGET_PT, stores.LEAD_DE, stores.EXPORT}
    assert stores.TRASHED not in chunks  # the trash is never embedded
    again = index(db)  # the model it was built with, remembered
    assert again.returncode == 0, again.stderr
    assert "(0 embedded, 5 already up to date, 0 removed" in again.stdout
    assert folder_state(db.parent) == before


def test_new_edited_trashed_and_purged_transcripts_are_followed(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
            " VALUES ('n1', 'New idea', 'dictation', 'Offline summaries with a local model.', ?, ?)",
            (ts(10), ts(10)),
        )
        conn.execute(
            "UPDATE segments SET text = text || ' And one more thing.' WHERE transcript_id = ?", (stores.LEAD,)
        )
        conn.execute("UPDATE transcripts SET updated_at = ? WHERE id = ?", (ts(11), stores.LEAD))
        conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(12), stores.BUDGET_PT))
        conn.execute("DELETE FROM transcripts WHERE id = ?", (stores.EXPORT,))
        conn.execute("UPDATE transcripts SET deleted_at = NULL WHERE id = ?", (stores.TRASHED,))
    conn.close()
    done = index(db)
    assert done.returncode == 0, done.stderr
    # n1, the edited LEAD and the restored TRASHED embedded; BUDGET_PT (trashed) and EXPORT (purged) removed.
    assert "5 transcripts (3 embedded, 2 already up to date, 2 removed as trashed or deleted)" in done.stdout
    assert set(indexed(db)) == {stores.BUDGET, stores.LEAD, stores.LEAD_DE, stores.TRASHED, "n1"}


def test_an_interrupted_build_goes_on_where_it_stopped(
    index: Index, model_dir: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    monkeypatch.setattr("magnotia_mcp.search.semantic.build.BATCH", 2)
    model = StaticModel.load(model_dir)
    meta = {"model_name": "m", "model_path": str(model_dir), "model_sha256": fingerprint(model_dir), "dims": "64"}
    calls: list[int] = []

    def stop_after_first_batch(done: int, total: int) -> None:
        calls.append(done)
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        update(db, model, meta, stop_after_first_batch)
    assert calls == [0, 2]
    first = indexed(db)
    assert len(first) == 2  # the first batch was committed: the newest two
    assert set(first) == {stores.EXPORT, stores.LEAD_DE}
    done = index(db)
    assert done.returncode == 0, done.stderr
    assert "(3 embedded, 2 already up to date" in done.stdout
    assert len(indexed(db)) == 5


@pytest.mark.parametrize(
    "damage",
    ["garbage", "another_sqlite_file", "another_store", "truncated"],
)
def test_an_index_that_cannot_be_trusted_is_rebuilt(damage: str, index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    where = indexfile.location(db)
    if damage == "garbage":
        where.write_bytes(os.urandom(8192))
    elif damage == "another_sqlite_file":
        where.unlink()
        sqlite3.connect(where).execute("CREATE TABLE t (x)").connection.close()
        where.chmod(0o600)  # private, as the user's own index is: its content is what is not to be trusted
    elif damage == "another_store":
        conn = sqlite3.connect(where)
        with conn:
            conn.execute("UPDATE meta SET value = '/elsewhere/magnotia.db' WHERE key = 'store'")
        conn.close()
    else:
        where.write_bytes(where.read_bytes()[:1500])
    done = index(db, "--model", str(model_dir))
    assert done.returncode == 0, done.stderr
    assert "started afresh: the old index could not be trusted" in done.stdout
    assert "(5 embedded, 0 already up to date" in done.stdout
    assert len(indexed(db)) == 5


def test_another_model_starts_afresh(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    other = tmp_path / "other-model"
    shutil.copytree(model_dir, other)
    (other / "config.json").write_text('{"normalize": true, "note": "retrained"}')
    done = index(db, "--model", str(other))
    assert done.returncode == 0, done.stderr
    assert "it was built with another model" in done.stdout
    assert "(5 embedded" in done.stdout


def test_drop_removes_the_index(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    done = index(db, "--drop")
    assert done.returncode == 0
    assert "removed the semantic index" in done.stdout
    assert not indexfile.location(db).exists()
    again = index(db, "--drop")
    assert again.returncode == 0
    assert "has no semantic index" in again.stdout


def test_errors_say_what_to_do(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    no_model = index(db)
    assert no_model.returncode == 1
    assert "pass --model DIR" in no_model.stderr
    not_a_model = index(db, "--model", str(tmp_path))
    assert not_a_model.returncode == 1
    assert "is not a model folder" in not_a_model.stderr
    no_store = index(tmp_path / "nowhere" / "magnotia.db", "--model", str(model_dir))
    assert no_store.returncode == 1
    assert "no Magnotia database" in no_store.stderr
    assert not indexfile.location(tmp_path / "nowhere" / "magnotia.db").exists()
    helped = run_cli("index", "--help")
    assert helped.returncode == 0
    for word in ("--model", "--drop", "--db", "MAGNOTIA_MCP_CACHE_DIR", "MAGNOTIA_MCP_INDEX_MEMORY_MIB", "semantic"):
        assert word in helped.stdout, word
    assert f"up to {loaded.IN_MEMORY} MiB" in helped.stdout  # the default the help states is the one the server takes


def test_doctor_shows_the_index_state(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")

    def doctor() -> dict[str, Any]:
        done = run_cli("doctor", "--db", str(db), "--json")
        return json.loads(done.stdout)["semantic_index"]  # type: ignore[no-any-return]

    assert doctor()["state"] == "absent"
    assert "semantic index: none; search finds by words" in run_cli("doctor", "--db", str(db)).stdout
    assert index(db, "--model", str(model_dir)).returncode == 0
    ready = doctor()
    assert (ready["state"], ready["transcripts"], ready["of"], ready["extra_installed"]) == ("ready", 5, 5, True)
    assert ready["simd_scoring"] is True  # simsimd has a wheel for every Python the tests run on
    assert "scored by numpy" not in run_cli("doctor", "--db", str(db)).stdout
    assert ready["model_path"] == str(model_dir)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE transcripts SET deleted_at = NULL WHERE id = ?", (stores.TRASHED,))
    conn.close()
    assert doctor()["of"] == 6  # one more live transcript than the index holds
    assert doctor()["state"] == "partial"
    indexfile.location(db).write_bytes(b"junk" * 1000)
    broken = doctor()
    assert broken["state"] == "unusable"
    assert "run `magnotia-mcp index` to rebuild it" in broken["why"]


def test_a_cache_folder_inside_the_store_folder_is_refused(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    before = folder_state(db.parent)
    monkeypatch.setenv(indexfile.CACHE_ENV, str(db.parent / "cache"))
    done = run_cli("index", "--db", str(db), "--model", str(model_dir))
    assert done.returncode == 1
    assert "the index would go into the store's folder" in done.stderr
    assert folder_state(db.parent) == before


def test_a_cache_folder_that_cannot_be_written_says_so(
    model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv(indexfile.CACHE_ENV, str(blocker))
    done = run_cli("index", "--db", str(db), "--model", str(model_dir))
    assert done.returncode == 1
    assert "cannot write the index at" in done.stderr
    assert "Traceback" not in done.stderr


def test_doctor_says_when_numpy_scores() -> None:
    """Where simsimd has no wheel (a Python it does not build for), the line says the search is slower, and why."""
    index = {
        "state": "ready",
        "transcripts": 5,
        "of": 5,
        "chunks": 9,
        "model_path": "/m",
        "path": "/i",
        "extra_installed": True,
        "speakers_listed": True,
    }
    assert "scored by numpy" in semantic_line({**index, "simd_scoring": False})
    assert "scored by numpy" not in semantic_line({**index, "simd_scoring": True})


def speakers(db: Path) -> dict[str, dict[str, list[int]]]:
    """By transcript, who the store's index says spoke in it, and in which of its windows (their places)."""
    conn = sqlite3.connect(indexfile.location(db))
    try:
        said: dict[str, dict[str, list[int]]] = {}
        for speaker, doc, windows in conn.execute("SELECT speaker, doc, windows FROM speakers"):
            said.setdefault(doc, {})[speaker] = np.frombuffer(windows, dtype=np.int32).tolist()
        return said
    finally:
        conn.close()


def test_who_spoke_where_is_listed_followed_and_given_to_an_index_written_before(
    index: Index, model_dir: Path, tmp_path: Path
) -> None:
    """The index lists who spoke in each transcript (labels folded as a speaker filter compares them), for a search
    restricted to a speaker (plan._spoken); edits and the trash are followed; an index written before it listed
    speakers gets them from the next run, without embedding anything again."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    # By window: the title is window 0; the planning meeting's two windows each hold a segment of Ana's and Ben's.
    first = {
        stores.BUDGET: {"ana": [1, 2], "ben": [1, 2]},
        stores.LEAD: {"chloe": [1], "ana": [1]},
        stores.BUDGET_PT: {"beatriz": [1]},
        stores.LEAD_DE: {"jonas": [1]},
    }  # EXPORT has no segments; TRASHED is not indexed
    assert speakers(db) == first
    conn = sqlite3.connect(db)
    with conn:  # Chloé's words given to Dana, a label in odd case and spacing; Beatriz's meeting trashed
        conn.execute("UPDATE segments SET speaker = '  DANA ' WHERE transcript_id = ? AND seq = 0", (stores.LEAD,))
        conn.execute("UPDATE transcripts SET updated_at = ? WHERE id = ?", (ts(11), stores.LEAD))
        conn.execute("UPDATE transcripts SET deleted_at = ? WHERE id = ?", (ts(12), stores.BUDGET_PT))
        add = "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, speaker, text) VALUES (?, ?, 0, 1, ?, ?)"
        conn.execute(add, (stores.LEAD, 5, "Ana", " ".join(["plan"] * 35)))  # a window of its own, and part of one
        conn.execute(add, (stores.LEAD, 7, "Ben", "   "))  # no words: in no window
        conn.execute(add, (stores.LEAD, 9, "  ", "x"))  # a blank label names nobody
    conn.close()
    done = index(db)
    assert "(1 embedded, 3 already up to date, 1 removed" in done.stdout, done.stdout
    now = {
        stores.BUDGET: {"ana": [1, 2], "ben": [1, 2]},
        stores.LEAD: {"dana": [1], "ana": [1, 2, 3]},
        stores.LEAD_DE: {"jonas": [1]},
    }
    assert speakers(db) == now
    # As an index written before this table was: no speakers, and its meta without their word.
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        conn.execute("DROP TABLE speakers")
        conn.execute("DELETE FROM meta WHERE key = 'speakers'")
    conn.close()
    assert indexfile.spoken(indexfile.location(db), "ana", 100) is None  # it cannot say: a search asks no more of it
    said = "does not yet list who spoke where"
    assert said in run_cli("doctor", "--db", str(db)).stdout
    done = index(db)
    assert done.returncode == 0, done.stderr
    assert "(0 embedded, 4 already up to date, 0 removed" in done.stdout  # nothing embedded again
    assert "listed who spoke where in 3 transcripts (an index from an earlier version; no embedding)" in done.stdout
    assert "listed who spoke where" not in index(db).stdout  # once
    assert speakers(db) == now
    assert said not in run_cli("doctor", "--db", str(db)).stdout
    assert sorted(indexfile.spoken(indexfile.location(db), "ana", 100) or {}) == sorted([stores.BUDGET, stores.LEAD])


def test_a_created_at_of_another_type_is_indexed(index: Index, model_dir: Path, tmp_path: Path) -> None:
    """The index orders what it embeds by created_at, newest first: a blob or a number there (a store may hold one)
    sorts as the oldest, and never stops the run (sorting bytes with text raised TypeError)."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE transcripts SET created_at = CAST('2026-06-11' AS BLOB) WHERE id = ?", (stores.LEAD,))
        conn.execute("UPDATE transcripts SET created_at = 1.5 WHERE id = ?", (stores.BUDGET,))
    conn.close()
    done = index(db, "--model", str(model_dir))
    assert done.returncode == 0, done.stderr
    assert "5 transcripts (5 embedded" in done.stdout
    assert set(indexed(db)) == {stores.BUDGET, stores.LEAD, stores.BUDGET_PT, stores.LEAD_DE, stores.EXPORT}


def test_a_run_that_finds_the_speakers_listed_lists_nothing(index: Index, model_dir: Path, tmp_path: Path) -> None:
    """Two runs may both see an index without the list (the command and a server's refresh): the second, holding the
    write lock once the first has committed, finds it listed and leaves it as it is."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    before = speakers(db)
    source = sqlite3.connect(db, isolation_level=None)
    conn = sqlite3.connect(indexfile.location(db), isolation_level=None)
    try:
        assert build._list_speakers(source, conn) is None
    finally:
        conn.close()
        source.close()
    assert speakers(db) == before


def test_an_index_written_before_it_held_sources_gets_them_without_embedding(
    index: Index, model_dir: Path, tmp_path: Path
) -> None:
    """An index from an earlier version has no table of sources: a server reads it as one whose transcripts may be
    of any source (the store's word decides), and the next run lists them all, embedding nothing, once."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    where = indexfile.location(db)
    conn = sqlite3.connect(where)
    with conn:
        conn.execute("DROP TABLE sources")
    conn.close()
    old = nearest._load(db, indexfile.stamp(where)).index  # as a server reads it
    files = loaded.passing(old, (None, None, "file"))  # no transcript is a file: the index cannot say so
    assert files is not None
    assert len(old.docs) == 5
    assert {old.docs[d] for d in files.tolist()} == set(old.docs)
    done = index(db)
    assert done.returncode == 0, done.stderr
    assert "brought the date or source of 5 transcripts up to date (no embedding)" in done.stdout, done.stdout
    assert "(0 embedded, 5 already up to date, 0 removed" in done.stdout
    assert "brought the date" not in index(db).stdout  # once
    conn = sqlite3.connect(db)
    want = dict(conn.execute("SELECT id, source FROM transcripts WHERE deleted_at IS NULL").fetchall())
    conn.close()
    conn = sqlite3.connect(where)
    try:
        assert dict(conn.execute("SELECT doc, source FROM sources").fetchall()) == want
    finally:
        conn.close()
    now = nearest._load(db, indexfile.stamp(where)).index
    files = loaded.passing(now, (None, None, "file"))
    assert files is not None
    assert files.tolist() == []
    dictated = loaded.passing(now, (None, None, "dictation"))
    assert dictated is not None
    assert (
        {now.docs[d] for d in dictated.tolist()} == {stores.EXPORT} == {d for d, s in want.items() if s == "dictation"}
    )


def test_an_index_whose_stamps_count_characters_moves_them_to_bytes_without_embedding(
    index: Index, model_dir: Path, tmp_path: Path
) -> None:
    """Stamps count the sizes of what is embedded in bytes; an index from before counted characters. Its next run
    reads both, moves each stamp that is current to bytes, embeds only what was edited since, and says so once."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    store = sqlite3.connect(db)
    old = dict(store.execute(f"SELECT t.id, {embedded.CHARACTERS} FROM transcripts t WHERE t.deleted_at IS NULL"))
    new = dict(store.execute(f"SELECT t.id, {embedded.STAMP} FROM transcripts t WHERE t.deleted_at IS NULL"))
    store.close()
    differ = {doc for doc in new if new[doc] != old[doc]}
    assert stores.BUDGET_PT in differ  # "orçamento": its bytes are more than its characters
    assert stores.EXPORT not in differ  # plain ASCII: the same either way
    where = indexfile.location(db)
    conn = sqlite3.connect(where)
    with conn:  # as an index from before wrote it
        conn.executemany("UPDATE docs SET stamp = ? WHERE id = ?", [(stamp, doc) for doc, stamp in old.items()])
        conn.execute("UPDATE docs SET stamp = 'edited since' WHERE id = ?", (stores.LEAD,))
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'format'")
        vectors = dict(conn.execute("SELECT id, vectors FROM docs"))
    conn.close()
    done = index(db)
    assert done.returncode == 0, done.stderr
    assert "(1 embedded, 4 already up to date, 0 removed" in done.stdout, done.stdout
    assert f"counted the sizes of {len(differ - {stores.LEAD})} transcripts in bytes" in done.stdout
    conn = sqlite3.connect(where)
    try:
        assert dict(conn.execute("SELECT id, stamp FROM docs")) == new
        assert conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone() == (indexfile.FORMAT,)
        now = dict(conn.execute("SELECT id, vectors FROM docs"))
    finally:
        conn.close()
    assert {doc for doc in now if now[doc] != vectors[doc]} <= {stores.LEAD}  # the others' vectors untouched
    again = index(db)
    assert "(0 embedded, 5 already up to date, 0 removed" in again.stdout
    assert "counted the sizes" not in again.stdout  # once
