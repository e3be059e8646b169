"""A search never waits on a long index load: it goes by words and says so, and the load goes on.

In-process, on a real index built by the command: the load is held on an event (standing in for a
large index's seconds of reading), so what a search sees while it runs is decided by order, not time.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from magnotia_mcp.search.semantic import indexfile, loaded, nearest, scoring
from magnotia_mcp.tools import search
from tests.semantic import stores
from tests.semantic.conftest import Index
from tests.support.mappings import mapped_kib


def test_a_search_during_a_load_goes_by_words_and_the_next_uses_the_index(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    release = threading.Event()
    real = nearest._load
    loads: list[Path] = []

    def held(store: Path, stamp: tuple[Any, ...]) -> nearest.Searcher:
        loads.append(store)
        assert release.wait(60)
        return real(store, stamp)

    monkeypatch.setattr(nearest, "_load", held)
    with pytest.raises(loaded.Unavailable, match="still loading"):
        nearest.searcher(db, wait=0)
    with pytest.raises(loaded.Unavailable, match="still loading"):
        nearest.searcher(db, wait=0)  # the same load, not a second one
    assert loads == [db]
    release.set()
    ready = nearest.searcher(db, wait=60)
    assert ready.covered == 5
    assert nearest.searcher(db, wait=0) is ready  # loaded once, then reused
    found = ready.near("new head of development", 5).found
    assert found[0].doc == stores.LEAD_DE
    assert loads == [db]


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE docs SET vectors = substr(vectors, 1, 10) WHERE id = ?",  # a vector cut short
        "UPDATE docs SET chunks = 1000000000 WHERE id = ?",  # a count no array holds: nothing is sized by it
        "UPDATE docs SET chunks = chunks + 1, vectors = vectors || zeroblob(64) WHERE id = ?",  # the rest too short
        "UPDATE docs SET chunks = '3' WHERE id = ?",  # not a count
    ],
)
@pytest.mark.parametrize("mapped", [False, True])
def test_a_row_whose_arrays_do_not_fit_is_never_trusted(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, mapped: bool
) -> None:
    """A damaged row makes the whole index unusable, said, rather than read out of bounds or sized by its claim; the
    file its rows were being written to (mapped) is not left open."""
    if mapped:
        monkeypatch.setenv(loaded.IN_MEMORY_ENV, "0")
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        assert conn.execute(damage, (stores.LEAD_DE,)).rowcount == 1
    conn.close()
    with pytest.raises(loaded.Unavailable, match="damaged"):
        nearest.searcher(db, wait=60)
    if Path("/proc/self/fd").is_dir():
        folder = str(indexfile.location(db).parent)
        assert not [path for path in _open_files() if path.startswith(folder)]


def _open_files() -> list[str]:
    """What this process's file descriptors name (/proc/self/fd; the listing's own is gone once listed)."""
    named = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):
            named.append(os.readlink(f"/proc/self/fd/{fd}"))
    return named


def test_a_model_cut_short_under_the_server_is_searched_by_words_not_an_error(
    index: Index, model_dir: Path, tmp_path: Path
) -> None:
    """The server reads its model's rows as texts need them: a file cut short since the load (a model folder
    replaced, a disk full) makes the search go by words and say why, and citing fall back to a window's first
    segment, never an error or rows of garbage."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    assert index(db, "--model", str(copy)).returncode == 0
    near, said = search._nearest(db, "new head of development", 5)
    assert near is not None
    assert said["used"] is True
    assert near.closest([["budget for the campaign", "the new head of development"]]) == [1]
    segments: list[tuple[int, int | None, int | None, str | None, str | None]] = [
        (0, 0, 4000, "Ana", "budget for the campaign"),
        (1, 4000, 9000, "Ben", "the new head of development"),
    ]
    edited = ("Sync", "", segments)
    again = near.again(stores.LEAD, edited)  # a transcript edited since the index: scored as it reads now
    assert again is not None
    assert again.score >= nearest.FLOOR
    with open(copy / "model.safetensors", "r+b") as f:
        f.truncate(1024)  # the header and a few rows: every word below reads past it
    assert near.closest([["budget for the campaign", "the new head of development"]]) == [0]
    assert near.again(stores.LEAD, edited) is None  # it can be neither: it is left out
    near, said = search._nearest(db, "new head of development", 5)
    assert near is None
    assert said["used"] is False
    assert "cut short" in said["why"]
    assert "went by words" in said["why"]


def _synthetic(folder: Path, docs: int, each: int) -> loaded.Loaded:
    """An index of docs transcripts of each windows of seeded rows, read as loaded.read reads one."""
    draw = np.random.default_rng(7)
    rows = draw.integers(-127, 128, size=(docs * each, 64), dtype=np.int8)
    index = loaded.Loaded(folder / "index.sqlite", (), {"dims": "64"}, docs * each)
    seqs, kinds = np.zeros((each, 2), dtype=np.int32).tobytes(), bytes(each)
    for d in range(docs):
        scales = (draw.random(each, dtype=np.float32) / 100).tobytes()
        own = rows[d * each : (d + 1) * each].tobytes()
        index.add((f"doc{d:05}", each, kinds, seqs, scales, own, "-", "2026-05-20T10:00:00.000Z", "meeting"))
    return index.done()


class _Spy:
    """Releases rows for index, noting first how many KiB of its mapping were resident."""

    def __init__(self, index: loaded.Loaded, folder: Path) -> None:
        self.index, self.folder, self.seen = index, folder, list[int]()

    @property
    def mapped(self) -> bool:
        return self.index.mapped

    def release(self, lo: int = 0, hi: int | None = None) -> None:
        self.seen.append(mapped_kib(self.folder)[1])
        self.index.release(lo, hi)


@pytest.mark.skipif(not hasattr(os, "posix_fallocate"), reason="rows are mapped where posix_fallocate is (Linux)")
@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads the mapping's resident size from /proc")
def test_the_rows_are_mapped_from_an_unnamed_file_and_a_scan_holds_a_block_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows live in the page cache, not the process: loading, each scan and each gather of rows here and there hand
    back the pages they read, a block at a time, and what is read back is what was written. Nothing is left in the
    folder."""
    monkeypatch.setenv(loaded.IN_MEMORY_ENV, "36")  # MiB: the rows are over it
    monkeypatch.setattr(scoring, "HELD", scoring.ROWS * 64)  # a scan hands back each block (4 by default)
    index = _synthetic(tmp_path, 6000, 100)  # 600k windows: 38.4 MB of rows, several blocks for each thread
    whole = index.vectors.nbytes >> 10
    assert mapped_kib(tmp_path) == (1, 0)  # one mapping, of a file no name reaches, and none of it resident
    assert list(tmp_path.iterdir()) == []
    query = np.random.default_rng(8).standard_normal(64).astype(np.float32)
    query /= np.linalg.norm(query)
    spy = _Spy(index, tmp_path)
    got, _ = scoring.best(index.vectors, index.scales, index.starts, query, spy)
    own = np.array(index.vectors)  # the process's own copy: the pages handed back while loading read back alike
    expected, _ = scoring.best(own, index.scales, index.starts, query)
    np.testing.assert_array_equal(got, expected)
    block = scoring.ROWS * 64 >> 10
    assert len(spy.seen) >= whole // block  # every block handed back
    folio = scoring.FOLIO >> 10  # what a fault may map past a block
    most = (scoring.PARTS + 1) * (block + folio)  # a block per thread
    assert max(spy.seen) <= most < whole, (max(spy.seen), most, whole)
    index.release()
    assert mapped_kib(tmp_path) == (1, 0)
    # A gather of rows scattered over all (every 150th: a query near most transcripts), roughly and exactly: each
    # holds at most MAPPED of whole folios at a time, where one block of it would have mapped them all.
    scattered = np.arange(0, len(index.vectors), 150, dtype=np.int64)
    for gather in (scoring.rough, scoring.exact):
        spy.seen.clear()
        got = gather(index.vectors, index.scales, scattered, query, spy)
        np.testing.assert_array_equal(got, gather(own, index.scales, scattered, query))
        assert len(spy.seen) > 1
        assert max(spy.seen) <= (scoring.MAPPED >> 10) + 2 * folio < whole, (gather, max(spy.seen))
        index.release()  # what a fault mapped about a cut's span, past it: a search releases all when it is done
    scoring.best(index.vectors, index.scales, index.starts, query)  # without release: the measure sees the rows
    assert mapped_kib(tmp_path)[1] > most
    index.release()
    assert mapped_kib(tmp_path)[1] == 0


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads the process's mappings from /proc")
def test_rows_the_folder_cannot_take_are_held_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder out of room (or read-only, or a system without posix_fallocate): the rows are the process's own."""

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    monkeypatch.setenv(loaded.IN_MEMORY_ENV, "0")
    index = _synthetic(tmp_path, 30, 10)
    assert mapped_kib(tmp_path) == (0, 0)
    assert list(tmp_path.iterdir()) == []
    query = np.full(64, 0.125, dtype=np.float32)
    got, _ = scoring.best(index.vectors, index.scales, index.starts, query, index)
    assert got.shape == (30,)
    assert np.isfinite(got).all()


@pytest.mark.skipif(not Path("/proc/self/smaps").is_file(), reason="reads the process's mappings from /proc")
@pytest.mark.parametrize(("given", "mapped"), [("", False), ("37", False), ("36", True), ("0", True), ("lots", False)])
def test_rows_up_to_the_chosen_mib_are_held_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], given: str, mapped: bool
) -> None:
    """$MAGNOTIA_MCP_INDEX_MEMORY_MIB: rows up to it stay in the process (128 MiB by default), more are mapped; a value
    that is not a whole number is said, and the default holds."""
    monkeypatch.setenv(loaded.IN_MEMORY_ENV, given)
    index = _synthetic(tmp_path, 6000, 100)  # 36.6 MiB of rows
    assert (index.vectors.nbytes >> 20) == 36
    assert mapped_kib(tmp_path)[0] == (1 if mapped and hasattr(os, "posix_fallocate") else 0)
    said = capsys.readouterr().err
    assert ("is not a whole number of MiB" in said) == (given == "lots"), said


def test_a_search_during_a_load_says_once_that_it_went_by_words(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reason a search gives while the index loads says what happened once (issue 45, finding 11b)."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    release = threading.Event()
    real, searcher = nearest._load, nearest.searcher

    def held(store: Path, stamp: tuple[Any, ...]) -> nearest.Searcher:
        assert release.wait(60)
        return real(store, stamp)

    monkeypatch.setattr(nearest, "_load", held)
    monkeypatch.setattr(nearest, "searcher", lambda store, **_: searcher(store, wait=0))
    try:
        near, said = search._nearest(db, "new head of development", 5)
    finally:
        release.set()
    assert near is None
    assert said["used"] is False
    assert "still loading" in said["why"]
    assert said["why"].count("went by words") == 1, said["why"]
