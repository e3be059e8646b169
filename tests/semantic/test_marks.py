"""A transcript's mark (semantic.found.mark): the index's, from the stamp it stored, and the search's, from the
store's row, agree until the transcript is edited, whatever the row holds.

A search scores again every transcript whose two marks differ (search.plan._fresh): marks that disagree on a row
nobody edited would make every search embed it again, and marks that agree after an edit would cite what the
index embedded, not what the store says. Drawn rows through real files: the store written with sqlite3, the
index built by ``build.update`` with the test model, the search's side read with the server's own SQL.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devkit.storefactory import StoreBuilder
from magnotia_mcp.search.semantic import build, indexfile, nearest
from magnotia_mcp.search.semantic.found import mark
from magnotia_mcp.search.semantic.model import StaticModel
from magnotia_mcp.store.hits import NEAR_KEYS

# updated_at as an app, or something else, may write it: a "|" (the stamp's separator), an empty text, a number
# (stored as text: the column's affinity), bytes that are not UTF-8 written as TEXT (those starting 0xff), a BLOB.
UPDATED = st.one_of(
    st.text(st.sampled_from("2026-05-09T14:03:12.042Z|| é"), max_size=30),
    st.integers(-(2**40), 2**40),
    st.binary(max_size=8).map(lambda b: b"\xff" + b),
    st.binary(max_size=8).map(lambda b: b"\xfe" + b),
)
FORMATTED = st.one_of(st.none(), st.just(""), st.just("Formatted: the budget for the launch."))
EDITS = ("updated_at", "formatted", "a segment more", "a segment less")


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Iterator[Path]]:
    root = tmp_path_factory.mktemp("marks")
    old = os.environ.get(indexfile.CACHE_ENV)
    os.environ[indexfile.CACHE_ENV] = str(root / "cache")
    try:
        yield (root / f"store{k}" for k in count())
    finally:
        if old is None:
            del os.environ[indexfile.CACHE_ENV]
        else:
            os.environ[indexfile.CACHE_ENV] = old


@pytest.fixture(scope="module")
def model(model_dir: Path) -> tuple[StaticModel, dict[str, str]]:
    loaded = StaticModel.load(model_dir)
    return loaded, build.describe(model_dir, loaded)


def _write(db: Path, sql: str, *params: Any) -> None:
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(sql, params)
    conn.close()


def _marks(db: Path, ids: list[str]) -> dict[str, int]:
    """By id, the mark a search reads from the store (NEAR_KEYS, decoded as the server's reader decodes)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        rows = conn.execute(NEAR_KEYS, {"ids": json.dumps(ids)}).fetchall()
    finally:
        conn.close()
    return {r["id"]: mark(r["updated"], bool(r["formatted"]), r["said"]) for r in rows}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(updated=UPDATED, formatted=FORMATTED, segments=st.integers(0, 3), edit=st.sampled_from(EDITS))
def test_the_marks_agree_until_an_edit(
    folders: Iterator[Path],
    model: tuple[StaticModel, dict[str, str]],
    updated: object,
    formatted: str | None,
    segments: int,
    edit: str,
) -> None:
    db = next(folders) / "magnotia.db"
    b = StoreBuilder(db)
    said: list[tuple[str | None, str]] = [("Ana", f"We cut the budget by a third, point {k}.") for k in range(segments)]
    tid = b.transcript(title="Budget", raw_text="We cut the marketing budget.", formatted_text=formatted, segments=said)
    b.close()
    value = "CAST(? AS TEXT)" if isinstance(updated, bytes) and updated[:1] == b"\xff" else "?"
    _write(db, f"UPDATE transcripts SET updated_at = {value} WHERE id = ?", updated, tid)
    build.update(db, model[0], model[1])
    index = nearest.searcher(db, wait=60).index
    kept = index.marks[index.docs.index(tid)]
    assert _marks(db, [tid]) == {tid: kept}
    # Edited as the app may edit it: the search's mark moves.
    if edit == "updated_at":
        later = "2026-12-04T10:00:00.000Z"
        _write(db, "UPDATE transcripts SET updated_at = ? WHERE id = ?", later if updated != later else "later", tid)
    elif edit == "formatted":  # formatted, or its formatted text dropped (the raw one is embedded again)
        _write(db, "UPDATE transcripts SET formatted_text = ? WHERE id = ?", None if formatted is not None else "", tid)
    elif edit == "a segment more":
        _write(
            db, "INSERT INTO segments (transcript_id, seq, start_ms, end_ms, text) VALUES (?, 99, 0, 1, 'Yes.')", tid
        )
    else:
        _write(db, "DELETE FROM segments WHERE transcript_id = ? AND seq = 0", tid)
        if not segments:  # none to take away: no edit
            assert _marks(db, [tid]) == {tid: kept}
            return
    assert _marks(db, [tid]) != {tid: kept}
