"""A planted or broken semantic index (issue 45, findings 4-6 and 8): refused or rebuilt with one clear line, never
trusted, never a crash, never a hang; a search meanwhile goes by words and says why.

Real processes over real pipes: the index built by `magnotia-mcp index` with the small model the test dependency
tokenlearn-static-model ships, then changed on disk as an attacker (or a broken disk) would; a throwaway HOME and
cache folder. A hang fails on a bounded read (the client's timeout, a subprocess timeout), never on a clock.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import static_model

from magnotia_mcp.search.semantic import indexfile
from tests.semantic import stores
from tests.support.server import Launcher, ServerProcess

MODEL = Path(static_model.__file__).parent / "model"
QUERY = "new head of development"  # none of its words are in LEAD_DE's German: found by meaning only
# The server's address space, capped: what it needs to search this store is well under (its peak VmSize here is
# ~0.5 GiB with one BLAS thread and two malloc arenas); reading a mark without end runs into it.
ADDRESS_SPACE = 1 << 30
CAPPED = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({0}, {0})); os.execv(sys.argv[1], sys.argv[1:])"
)


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: Launcher) -> None:
    if launcher.kind not in ("package", "script"):
        pytest.skip("the one-file build and the image have no semantic extra")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(indexfile.CACHE_ENV, str(tmp_path / "cache"))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """A command of ours as a process; one that hangs fails the test on the timeout."""
    return subprocess.run(
        [sys.executable, "-m", "magnotia_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=90,
        check=False,
    )


def indexed(tmp_path: Path) -> Path:
    db = stores.write(tmp_path / "store" / "magnotia.db")
    done = cli("index", "--db", str(db), "--model", str(MODEL))
    assert done.returncode == 0, done.stderr
    return db


@pytest.fixture
def serve(launcher: Launcher) -> Iterator[Any]:
    """Start servers on stores (capped: within ADDRESS_SPACE); each is killed at the end (one may be stuck)."""
    started: list[ServerProcess] = []

    def start(db: Path, *, capped: bool = False) -> ServerProcess:
        argv = launcher.argv(db)
        env = None
        if capped:
            argv = [sys.executable, "-c", CAPPED.format(ADDRESS_SPACE), *argv]
            env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}
        proc = ServerProcess(argv, env=env)
        started.append(proc)
        proc.initialize()
        return proc

    yield start
    for proc in started:
        proc.proc.kill()
        proc.proc.wait()


def search(server: ServerProcess) -> dict[str, Any]:
    """The answer to a search by meaning (a hang fails on the client's bounded read)."""
    return server.result("search_transcripts", {"query": QUERY, "limit": 3})


def by_meaning(server: ServerProcess) -> None:
    """The index is used: the transcript only meaning finds is found."""
    result = search(server)
    assert result["semantic"]["used"] is True, result
    assert [hit["transcript_id"] for hit in result["hits"]] == [stores.LEAD_DE], result


def by_words(server: ServerProcess, *why: str) -> None:
    """The index is not used, and the answer says why (each of why is in it)."""
    result = search(server)
    assert result["semantic"]["used"] is False, result
    for words in why:
        assert words in result["semantic"]["why"], result
    assert stores.LEAD_DE not in [hit["transcript_id"] for hit in result["hits"]]


def doctor(db: Path) -> dict[str, Any]:
    done = cli("doctor", "--db", str(db), "--json")
    shown: dict[str, Any] = json.loads(done.stdout)["semantic_index"]
    return shown


def rebuilt(db: Path, why: str) -> None:
    """`index` starts afresh, saying why in one line, and the index it leaves is searched by meaning."""
    done = cli("index", "--db", str(db), "--model", str(MODEL))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith("started afresh:")]
    assert len(said) == 1, done.stdout
    assert why in said[0], done.stdout
    assert "(5 embedded, 0 already up to date" in done.stdout
    assert doctor(db)["state"] == "ready"


def rewrite(db: Path, *statements: str) -> None:
    conn = sqlite3.connect(indexfile.location(db), isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


# -- 4: the `.current` mark ------------------------------------------------------------------------------------------


def mark(db: Path) -> Path:
    return Path(f"{indexfile.location(db)}.current")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_the_current_mark_is_not_waited_on(tmp_path: Path, serve: Any) -> None:
    db = indexed(tmp_path)
    mark(db).unlink()
    os.mkfifo(mark(db))
    server = serve(db)
    by_meaning(server)
    by_meaning(server)  # and the next: nothing is left waiting on it


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/zero and RLIMIT_AS as Linux has them")
@pytest.mark.parametrize("planted", ["link_to_dev_zero", "huge_sparse_file"])
def test_a_current_mark_without_end_is_not_read_whole(tmp_path: Path, serve: Any, planted: str) -> None:
    """A mark is a few hundred bytes: one that reads without end (a link to /dev/zero, a file of 4 GiB with no
    blocks) is not current, and is never read into memory (the server runs within ADDRESS_SPACE)."""
    db = indexed(tmp_path)
    mark(db).unlink()
    if planted == "link_to_dev_zero":
        mark(db).symlink_to("/dev/zero")
    else:
        with open(mark(db), "wb") as f:
            f.truncate(4 << 30)
    server = serve(db, capped=True)
    by_meaning(server)
    by_meaning(server)


# -- 5: an index whose schema is not ours ----------------------------------------------------------------------------

ENDLESS_DOCS = (
    "CREATE VIEW docs (id, stamp, created_at, chunks, kinds, seqs, scales, vectors) AS "
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) "
    "SELECT 'x' || i, '', '', 1, x'00', zeroblob(8), zeroblob(4), zeroblob(64) FROM n"
)


def test_an_index_whose_docs_is_an_endless_view_is_never_read(tmp_path: Path, serve: Any) -> None:
    """The view passes every check of the rows' table by name; reading it never ends. Refused before a row is read:
    the server searches by words saying why, doctor says so, `index` rebuilds with one line."""
    db = indexed(tmp_path)
    rewrite(db, "DROP TABLE docs", ENDLESS_DOCS)
    server = serve(db)
    by_words(server, "cannot be used", "view docs", "magnotia-mcp index")
    by_words(server, "cannot be used")  # not "still loading": the load ended, refused
    shown = doctor(db)
    assert shown["state"] == "unusable", shown
    assert "view docs" in shown["why"], shown
    rebuilt(db, "view docs")
    server = serve(db)
    by_meaning(server)


@pytest.mark.parametrize(
    ("statements", "why"),
    [
        (["CREATE TRIGGER copy AFTER INSERT ON docs BEGIN SELECT 1; END"], "trigger copy"),
        (["CREATE VIEW everything AS SELECT * FROM docs"], "view everything"),
        (["CREATE INDEX by_stamp ON docs (stamp)"], "index by_stamp"),
        (["CREATE TABLE notes (x)"], "table notes"),
        (["DROP TABLE meta", "CREATE VIEW meta (key, value) AS SELECT 'format', '3'"], "view meta"),
        (["ALTER TABLE docs ADD COLUMN extra BLOB"], "table docs"),
        (["DROP TABLE docs"], "no table docs"),
    ],
)
def test_an_index_with_objects_we_do_not_make_is_rebuilt(tmp_path: Path, statements: list[str], why: str) -> None:
    db = indexed(tmp_path)
    rewrite(db, *statements)
    shown = doctor(db)
    assert shown["state"] == "unusable", shown
    assert why in shown["why"], shown
    rebuilt(db, why)


# -- 6: vectors of another width than the model's --------------------------------------------------------------------


def narrowed(db: Path) -> None:
    """The index rewritten as if its model gave 32 dimensions, not the model's 64: every row fits its meta."""
    rewrite(
        db,
        "UPDATE meta SET value = '32' WHERE key = 'dims'",
        "UPDATE docs SET vectors = substr(vectors, 1, 32 * chunks)",
    )


def test_an_index_of_another_width_than_its_model_is_not_trusted(tmp_path: Path, serve: Any) -> None:
    db = indexed(tmp_path)
    narrowed(db)
    server = serve(db)
    by_words(server, "32 dimensions", "64", "magnotia-mcp index")
    shown = doctor(db)
    assert shown["state"] == "unusable", shown
    assert "32 dimensions" in shown["why"], shown
    rebuilt(db, "32 dimensions")
    by_meaning(serve(db))


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        ("UPDATE meta SET value = 'wide' WHERE key = 'dims'", "width"),
        ("UPDATE meta SET value = '-64' WHERE key = 'dims'", "width"),
        ("UPDATE meta SET value = '99999999999999999999' WHERE key = 'dims'", "width"),
        ("DELETE FROM meta WHERE key = 'dims'", "width"),
        ("UPDATE docs SET scales = zeroblob(4) WHERE chunks > 1", "do not fit"),
        ("UPDATE docs SET kinds = 'text' WHERE chunks > 0", "do not fit"),
        ("UPDATE docs SET chunks = -1 WHERE chunks > 0", "do not fit"),
        ("UPDATE docs SET chunks = 4611686018427387904 WHERE chunks > 0", "do not fit"),
    ],
)
def test_an_index_whose_numbers_do_not_add_up_is_rebuilt(tmp_path: Path, serve: Any, damage: str, why: str) -> None:
    """Every number read from the file (its width, each row's count of windows and the sizes of its arrays) is
    checked before it sizes anything: an index whose numbers do not add up is not trusted, anywhere."""
    db = indexed(tmp_path)
    rewrite(db, damage)
    by_words(serve(db), "cannot be used", why)
    shown = doctor(db)
    assert shown["state"] == "unusable", shown
    assert why in shown["why"], shown
    rebuilt(db, why)


# -- 8: a source as wide as one likes ----------------------------------------------------------------------------------


def test_a_wide_source_in_the_index_costs_no_memory_per_transcript(tmp_path: Path, serve: Any) -> None:
    """The index holds each transcript's source for the source filter: only dictation, meeting and file are ones a
    search filters by, so any other is held as unknown (the store's word decides), not in an array as wide as the
    widest. 4,000 transcripts and one source of 300 KB would hold 1.2 GB; the server runs within ADDRESS_SPACE."""
    db = indexed(tmp_path)
    copies = [(f"c0000000-0000-4000-8000-{k:012d}",) for k in range(4000)]
    rewrite(
        db,
        f"INSERT OR REPLACE INTO sources (doc, source) VALUES ('{stores.EXPORT}', '{'x' * 300_000}')",
    )
    conn = sqlite3.connect(indexfile.location(db))
    with conn:  # copies of a transcript far from the query, each of a source the filter below keeps
        conn.executemany(
            f"INSERT INTO docs ({indexfile.DOC_COLUMNS}) SELECT ?, stamp, created_at, chunks, kinds, seqs, scales,"
            " vectors FROM docs WHERE id = ?",
            [(doc, stores.EXPORT) for (doc,) in copies],
        )
        conn.executemany("INSERT INTO sources (doc, source) VALUES (?, 'meeting')", copies)
    conn.close()
    server = serve(db, capped=True)
    by_meaning(server)
    result = server.result("search_transcripts", {"query": QUERY, "limit": 3, "source": "meeting"})
    assert [hit["transcript_id"] for hit in result["hits"]] == [stores.LEAD_DE], result
