"""A search never waits on a long index load: it goes by words and says so, and the load goes on.

In-process, on a real index built by the command: the load is held on an event (standing in for a
large index's seconds of reading), so what a search sees while it runs is decided by order, not time.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp.search.semantic import indexfile, loaded, nearest
from magnotia_mcp.tools import search
from tests.semantic import stores
from tests.semantic.conftest import Index


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
def test_a_row_whose_arrays_do_not_fit_is_never_trusted(
    index: Index, model_dir: Path, tmp_path: Path, damage: str
) -> None:
    """A damaged row makes the whole index unusable, said, rather than read out of bounds or sized by its claim."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    conn = sqlite3.connect(indexfile.location(db))
    with conn:
        assert conn.execute(damage, (stores.LEAD_DE,)).rowcount == 1
    conn.close()
    with pytest.raises(loaded.Unavailable, match="damaged"):
        nearest.searcher(db, wait=60)


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
