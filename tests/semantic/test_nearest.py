"""The nearest transcripts a search asks for are the first of the whole ranking, however few it asks for.

The index picks the limit-th best score by a partition and sorts only what reaches it (nearest._top):
on the judged store's real index, asking for k gives the first k of asking for all, ties included;
and on drawn scores, with many ties and scores under the floor, it is the stable full sort, cut.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.typing import NDArray

from devkit import relevance
from devkit.storefactory import StoreBuilder
from magnotia_mcp.search.semantic import found as found_module
from magnotia_mcp.search.semantic import indexfile, nearest, scoring
from magnotia_mcp.search.semantic import loaded as loaded_module
from magnotia_mcp.search.semantic.chunks import SPOKEN
from magnotia_mcp.search.semantic.loaded import passing
from magnotia_mcp.search.speakers import speaker_key
from magnotia_mcp.tools import search
from tests.semantic import stores
from tests.semantic.conftest import Index


def test_asking_for_fewer_gives_the_first_of_the_whole_ranking(index: Index, model_dir: Path, tmp_path: Path) -> None:
    db = relevance.build_store(tmp_path / "app" / "magnotia.db", fts=True)
    assert index(db, "--model", str(model_dir)).returncode == 0
    found = nearest.searcher(db, wait=60)
    docs = len(found.index.docs)
    texts = [q.text for q in (*relevance.QUERIES, *relevance.MEANING_QUERIES)]
    cut = 0  # rankings longer than a limit asked below: the partition's branch ran on them
    for text in texts:
        whole = found.near(text, docs).found
        for limit in (1, 2, 5, 10):
            assert found.near(text, limit).found == whole[:limit], (text, limit)
            cut += len(whole) > limit
    assert cut >= len(texts)


def _blockwise(
    index: Index,
    model_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    simd: bool,
    rows: int,
    mapped: bool = False,
) -> nearest.Searcher:
    """The judged store's index, built and loaded, scored by SimSIMD (or numpy) a block of rows at a time; mapped,
    its rows in a file (on Linux), gathers cut every two pages and every block handed back."""
    db = relevance.build_store(tmp_path / "app" / "magnotia.db", fts=True)
    assert index(db, "--model", str(model_dir)).returncode == 0
    if mapped:
        monkeypatch.setenv(loaded_module.IN_MEMORY_ENV, "0")
        monkeypatch.setattr(scoring, "FOLIO", 4096)
        monkeypatch.setattr(scoring, "MAPPED", 8192)
    found = nearest.searcher(db, wait=60)
    assert found.index.mapped == (mapped and hasattr(os, "posix_fallocate"))
    assert scoring.simd is not None  # the extra installs it wherever it has a wheel: here
    if not simd:
        monkeypatch.setattr(scoring, "simd", None)
    monkeypatch.setattr(scoring, "ROWS", rows)
    monkeypatch.setattr(scoring, "BLOCK_BYTES", 4 * found.index.dims * rows)
    return found


@pytest.mark.parametrize("simd", [True, False])
@pytest.mark.parametrize("rows_per_block", [1, 7, 1 << 20])
def test_each_transcripts_best_is_its_best_cosine_whatever_the_block(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows_per_block: int, simd: bool
) -> None:
    """Scored a block at a time (one row, a count that leaves a remainder and cuts transcripts, all at once),
    each window's score is its cosine, and each transcript's best is the best of its windows' cosines:
    numpy's to float32's rounding, SimSIMD's to within error(query)."""
    found = _blockwise(index, model_dir, tmp_path, monkeypatch, simd=simd, rows=rows_per_block)
    loaded = found.index
    windows = len(loaded.vectors)
    assert windows > 7  # more than one block of 7, and not a multiple of it
    assert windows % 7
    # Some transcript's windows cross a boundary between blocks of 7: its best is folded from two blocks.
    assert any(lo // 7 != (hi - 1) // 7 for lo, hi in zip(loaded.starts, loaded.ends, strict=True))
    query = found.model.embed(["who takes over as engineering lead"])[0]
    want = (loaded.vectors.astype(np.float64) @ query.astype(np.float64)) * loaded.scales
    bound = scoring.error(query)
    assert (bound > 0) == simd
    each, said = scoring.best(loaded.vectors, loaded.scales, np.arange(windows, dtype=np.int64), query)
    assert bound < said < bound + 1e-5  # and float32's rounding, 4e-6 at 64 dimensions
    np.testing.assert_allclose(each, want, rtol=1e-5, atol=bound + 1e-6)
    bests, _ = scoring.best(loaded.vectors, loaded.scales, loaded.starts, query)
    wanted = [want[lo:hi].max() for lo, hi in zip(loaded.starts, loaded.ends, strict=True)]
    np.testing.assert_allclose(bests, wanted, rtol=1e-5, atol=bound + 1e-6)


def test_simd_scores_are_within_the_bound_and_the_answers_are_numpys(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SimSIMD rounds the query to int8: every score is within error(query) of numpy's, the bound is small and
    not vacuous, and the index answers every judged query exactly as with numpy alone: the same transcripts in
    the same order with the same scores, and the same cited windows."""
    db = relevance.build_store(tmp_path / "app" / "magnotia.db", fts=True)
    assert index(db, "--model", str(model_dir)).returncode == 0
    found = nearest.searcher(db, wait=60)
    loaded = found.index
    every = np.arange(len(loaded.vectors), dtype=np.int64)  # each window its own group: its own score
    texts = [q.text for q in (*relevance.QUERIES, *relevance.MEANING_QUERIES)]
    assert len(texts) > 50
    worst = 0.0  # the largest difference seen, over its bound
    answers = []
    for text, query in zip(texts, found.model.embed(texts), strict=True):
        bound = scoring.error(query)
        assert 0 < bound < 0.02
        off = np.abs(
            scoring.best(loaded.vectors, loaded.scales, every, query)[0]
            - scoring.exact(loaded.vectors, loaded.scales, every, query)
        )
        assert off.max() <= bound + 1e-6
        worst = max(worst, float(off.max()) / bound)
        answers.append([(hit.doc, hit.score, hit.chunks) for hit in found.near(text, 10).found])
    assert worst > 0.05  # the rounding shows
    monkeypatch.setattr(scoring, "simd", None)
    alone = [[(hit.doc, hit.score, hit.chunks) for hit in found.near(text, 10).found] for text in texts]
    assert sum(len(a) for a in alone) > 5 * len(texts)
    for ours, theirs in zip(answers, alone, strict=True):  # the same transcripts in order, citing the same windows
        assert [(doc, [c[1:] for c in chunks]) for doc, _, chunks in ours] == [
            (doc, [c[1:] for c in chunks]) for doc, _, chunks in theirs
        ]
        # Every score answered is scoring.exact's, whichever scored first.
        assert [s for _, s, _ in ours] == [s for _, s, _ in theirs]


@pytest.mark.parametrize(
    ("simd", "rows_per_block", "mapped"), [(True, 1 << 16, False), (True, 7, False), (False, 7, False), (True, 7, True)]
)
def test_answers_are_those_of_scoring_every_window_exactly(
    index: Index,
    model_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    simd: bool,
    rows_per_block: int,
    mapped: bool,
) -> None:
    """Only the windows the rounding leaves in doubt are scored exactly (nearest._settle, _cited), yet every judged
    query gets what scoring every window exactly gives: the same transcripts, in the same order, with the same
    scores, and each with the same windows at the floor or above, in the same order (the few it cites, and all)."""
    found = _blockwise(index, model_dir, tmp_path, monkeypatch, simd=simd, rows=rows_per_block, mapped=mapped)
    loaded = found.index
    every = np.arange(len(loaded.vectors), dtype=np.int64)
    # And a question near nothing in the store (its best cosine is 0.27): no transcript reaches the floor.
    texts = [q.text for q in (*relevance.QUERIES, *relevance.MEANING_QUERIES)] + ["photosynthesis"]
    doubted = 0  # transcripts whose best window by rounded scores is not their best exactly
    empty = 0  # queries answered by no transcript
    for text, query in zip(texts, found.model.embed(texts), strict=True):
        exact = scoring.exact(loaded.vectors, loaded.scales, every, query)
        spans = list(zip(loaded.starts.tolist(), loaded.ends.tolist(), strict=True))
        windows = []
        for lo, hi in spans:
            order = sorted(range(lo, hi), key=lambda i: -exact[i])  # sorted() is stable: the lower row first
            windows.append([loaded.cite(i, lo, float(exact[i])) for i in order if exact[i] >= nearest.FLOOR])
        bests = [float(exact[lo:hi].max()) for lo, hi in spans]
        rounded = scoring.best(loaded.vectors, loaded.scales, every, query)[0]
        doubted += sum(int(np.argmax(rounded[lo:hi])) != int(np.argmax(exact[lo:hi])) for lo, hi in spans)
        for limit in (1, 5, 10, len(spans)):
            want = [(loaded.docs[d], bests[d], windows[d]) for d in reference(bests, limit)]
            hits = found.near(text, limit).found
            # The CITED a hit shows are picked first, on their own (a speaker's search asks for all of them).
            assert [f.chunks for f in hits] == [w[: found_module.CITED] for _, _, w in want], (text, limit)
            assert [(f.doc, f.score, f.windows) for f in hits] == want, (text, limit)
            empty += not want
    # SimSIMD's rounding put another window of some transcripts first: the windows in doubt were needed. (numpy's
    # float32 sums are off by far less, and moved none here.)
    assert (doubted > 0) == simd
    assert empty >= 4  # the question near nothing, at each limit


# GATHER 1: the windows of those asked about are gathered and scored (unless they are all); 2**40: every window is
# scored, and the others set aside.
@pytest.mark.parametrize(("simd", "gather"), [(True, 1), (False, 1), (True, 1 << 40), (False, 1 << 40)])
def test_the_nearest_among_some_are_those_of_scoring_their_windows_exactly(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simd: bool, gather: int
) -> None:
    """Near.among(ids, limit), a filtered search's second ask (plan._within): the nearest among those transcripts
    only, as scoring every window exactly and keeping those gives: the same transcripts in order, with the same
    scores and windows; ids the index does not hold are passed over; and more says whether it found all it asked."""
    found = _blockwise(index, model_dir, tmp_path, monkeypatch, simd=simd, rows=7)
    monkeypatch.setattr(scoring, "GATHER", gather)
    scanned = 0  # calls of scoring.best: a search's, and one among some that scored every window
    scan = scoring.best

    def counted(*args: Any) -> tuple[NDArray[np.float32], float]:
        nonlocal scanned
        scanned += 1
        return scan(*args)

    monkeypatch.setattr(scoring, "best", counted)
    loaded = found.index
    every = np.arange(len(loaded.vectors), dtype=np.int64)
    spans = list(zip(loaded.starts.tolist(), loaded.ends.tolist(), strict=True))
    docs = loaded.docs
    asked = among_scans = 0
    for text in [q.text for q in relevance.MEANING_QUERIES]:
        query = found.model.embed([text])[0]
        exact = scoring.exact(loaded.vectors, loaded.scales, every, query)
        bests = [float(exact[lo:hi].max()) for lo, hi in spans]
        whole = reference(bests, len(docs))
        assert len(whole) >= 4, text  # the judged query finds something to leave out
        for ids in (
            [docs[d] for d in whole[3:]],  # all but the three nearest
            [docs[d] for d in range(0, len(docs), 3)] + ["not-a-transcript"],  # every third, and one not held
            [docs[whole[-1]]],  # one
            [docs[whole[1]], docs[whole[1]], docs[whole[0]]],  # one twice, and the nearest
            ["not-a-transcript"],  # none the index holds
            [],
        ):
            held = {docs.index(d) for d in ids if d in docs}
            kept = [b if d in held else -np.inf for d, b in enumerate(bests)]
            for limit in (1, 3, len(docs)):
                want = reference(kept, limit)
                near = found.near(text, 1)
                assert near.among is not None
                before = scanned
                got = near.among(ids, limit)
                among_scans += scanned - before
                assert [(f.doc, f.score) for f in got.found] == [(docs[d], bests[d]) for d in want], (text, limit)
                for f, d in zip(got.found, want, strict=True):
                    lo, hi = spans[d]
                    order = sorted(range(lo, hi), key=lambda i: -exact[i])
                    assert f.windows == [
                        loaded.cite(i, lo, float(exact[i])) for i in order if exact[i] >= nearest.FLOOR
                    ]
                assert got.more == (len(want) == limit)
                asked += 1
    assert asked >= 9 * len(relevance.MEANING_QUERIES)
    assert (among_scans > 0) == (gather != 1)


@pytest.mark.parametrize(("simd", "mapped"), [(True, False), (False, False), (True, True)])
def test_a_speakers_nearest_are_those_of_scoring_the_windows_they_spoke_in_exactly(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simd: bool, mapped: bool
) -> None:
    """near(text, limit, speaker): the index lists, for each speaker, the windows holding a segment of theirs with
    words (worked out here apart, from the store's segments and the windows' spans), and scores only those: the
    nearest by what they said, as scoring those windows exactly gives, each cited by its own; among too."""
    found = _blockwise(index, model_dir, tmp_path, monkeypatch, simd=simd, rows=7, mapped=mapped)
    monkeypatch.setattr(nearest, "SPOKEN_SHARE", 1)  # a part of any size (the judged store's speakers are many)
    loaded = found.index
    docs = loaded.docs
    conn = sqlite3.connect(f"file:{found.index.meta['store']}?mode=ro", uri=True)
    said: dict[str, dict[str, set[int]]] = {}
    for tid, seq, label, text in conn.execute("SELECT transcript_id, seq, speaker, text FROM segments"):
        if label is not None and (text or "").split():
            said.setdefault(speaker_key(label), {}).setdefault(tid, set()).add(seq)
    conn.close()
    assert len(said) >= 3
    checked = 0
    for key, by_doc in sorted(said.items()):
        theirs: dict[int, list[int]] = {}  # by transcript, the rows of the windows they spoke in
        for d, doc in enumerate(docs):
            lo, hi = int(loaded.starts[d]), int(loaded.ends[d])
            rows = [
                i
                for i in range(lo, hi)
                if loaded.kinds[i] == SPOKEN
                and any(loaded.seqs[i][0] <= q <= loaded.seqs[i][1] for q in by_doc.get(doc, ()))
            ]
            if rows:
                theirs[d] = rows
        listed = indexfile.spoken(loaded.path, key, len(loaded.vectors))
        assert listed is not None
        assert {doc: np.frombuffer(w, dtype=np.int32).tolist() for doc, w in listed.items()} == {
            docs[d]: [i - int(loaded.starts[d]) for i in rows] for d, rows in theirs.items()
        }
        for text in [q.text for q in relevance.MEANING_QUERIES[:6]]:
            query = found.model.embed([text])[0]
            exact = {d: scoring.exact(loaded.vectors, loaded.scales, np.asarray(r), query) for d, r in theirs.items()}
            bests = [float(exact[d].max()) if d in exact else -np.inf for d in range(len(docs))]
            for limit in (1, 3, len(docs)):
                near = found.near(text, limit, key)
                assert near.speaker == key
                want = reference(bests, limit)
                assert [(f.doc, f.score) for f in near.found] == [(docs[d], bests[d]) for d in want], (key, text)
                for f, d in zip(near.found, want, strict=True):
                    lo, rows = int(loaded.starts[d]), theirs[d]
                    order = sorted(range(len(rows)), key=lambda k: -exact[d][k])
                    assert f.windows == [
                        loaded.cite(rows[k], lo, float(exact[d][k])) for k in order if exact[d][k] >= nearest.FLOOR
                    ]
                assert near.among is not None
                some = [docs[d] for d in want[1:]]
                assert [f.doc for f in near.among(some, limit).found] == some
                checked += 1
    assert checked >= 3 * 6 * 3
    assert found.near(relevance.MEANING_QUERIES[0].text, 3, "nobody").found == []  # a label no one has
    monkeypatch.setattr(nearest, "SPOKEN_SHARE", len(loaded.vectors) + 1)  # none may be gathered: all windows
    assert found.near(relevance.MEANING_QUERIES[0].text, 3, sorted(said)[0]).speaker is None


def test_a_filters_nearest_are_those_of_scoring_what_it_keeps_exactly(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """near(text, limit, filters=(since, until, source)): only the transcripts the index says were created then, of
    that source, are scored, so the first ask of a filtered search is the nearest among them (as scoring their
    windows exactly gives), not the nearest overall; their created_at compared as SQLite compares the store's text."""
    found = _blockwise(index, model_dir, tmp_path, monkeypatch, simd=True, rows=7, mapped=True)
    loaded = found.index
    docs = loaded.docs
    conn = sqlite3.connect(f"file:{loaded.meta['store']}?mode=ro", uri=True)
    created = dict(conn.execute("SELECT id, created_at FROM transcripts").fetchall())
    sources = dict(conn.execute("SELECT id, source FROM transcripts").fetchall())
    conn.close()
    times = sorted(created[d] for d in docs)
    every = np.arange(len(loaded.vectors), dtype=np.int64)
    spans = list(zip(loaded.starts.tolist(), loaded.ends.tolist(), strict=True))
    checked = 0
    kinds = sorted({sources[d] for d in docs})
    assert len(kinds) == 3, kinds  # dictation, file, meeting
    ways = [(times[len(times) // 2], None, None), (None, times[len(times) // 3], None), (times[5], times[-5], None)]
    ways += [(None, None, kind) for kind in kinds] + [(times[5], times[-5], kinds[0])]
    for since, until, source in ways:
        kept = {d for d, doc in enumerate(docs) if (since is None or created[doc] >= since)}
        kept &= {d for d, doc in enumerate(docs) if (until is None or created[doc] < until)}
        kept &= {d for d, doc in enumerate(docs) if (source is None or sources[doc] == source)}
        assert 0 < len(kept) < len(docs)
        picks = passing(loaded, (since, until, source))
        assert picks is not None
        assert set(picks.tolist()) == kept
        for text in [q.text for q in relevance.MEANING_QUERIES]:
            query = found.model.embed([text])[0]
            exact = scoring.exact(loaded.vectors, loaded.scales, every, query)
            bests = [float(exact[lo:hi].max()) if d in kept else -np.inf for d, (lo, hi) in enumerate(spans)]
            for limit in (1, 3, len(docs)):
                want = reference(bests, limit)
                got = found.near(text, limit, None, (since, until, source)).found
                assert [(f.doc, f.score) for f in got] == [(docs[d], bests[d]) for d in want], (text, since, source)
                checked += 1
    assert checked >= 7 * 3 * len(relevance.MEANING_QUERIES)
    assert passing(loaded, (None, None, None)) is None  # no filter: every transcript, no list of them


def test_a_created_at_that_does_not_compare_as_text_is_left_to_the_store(
    index: Index, model_dir: Path, tmp_path: Path
) -> None:
    """A created_at the index cannot compare as SQLite compares the store's (a blob, a number, text past 40 bytes)
    keeps its transcript among those a time filter scores: the store's rows decide (plan._live), never the index."""
    b = StoreBuilder(tmp_path / "app" / "magnotia.db")
    said: list[tuple[str | None, str]] = [("Ana", "We'll put less money into campaigns next quarter.")]
    june = b.transcript(title="June", source="meeting", created_at="2026-06-10T09:00:00Z", segments=said)
    old = b.transcript(title="Old", source="meeting", created_at="2025-01-05T09:00:00Z", segments=said)
    blob = b.transcript(title="Blob", source="meeting", segments=said)
    number = b.transcript(title="Number", source="meeting", segments=said)
    long = b.transcript(title="Long", source="meeting", created_at="2024-01-01T00:00:00Z" + " " * 30, segments=said)
    db = b.close()
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE transcripts SET created_at = CAST('2026-06-11' AS BLOB) WHERE id = ?", (blob,))
        conn.execute("UPDATE transcripts SET created_at = 1.5 WHERE id = ?", (number,))
    conn.close()
    assert index(db, "--model", str(model_dir)).returncode == 0
    loaded = nearest.searcher(db, wait=60).index

    def dated(since: str | None, until: str | None) -> set[str]:
        picks = passing(loaded, (since, until, None))
        return set(loaded.docs) if picks is None else {loaded.docs[d] for d in picks.tolist()}

    assert dated("2026-06-01", None) == {june, blob, number, long}
    assert dated(None, "2026-01-01") == {old, blob, number, long}
    assert dated("2025-01-01", "2025-02-01") == {old, blob, number, long}
    assert dated(None, None) == {june, old, blob, number, long}


@pytest.mark.parametrize("simd", [True, False])
@pytest.mark.parametrize("parts", [1, 2, 3, 4])
def test_threads_sharing_the_scan_find_what_one_finds(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: int, simd: bool
) -> None:
    """Up to PARTS threads score a search's windows, each its own rows, cut where a transcript starts: each window is
    scored once, by the caller and helper threads, and every transcript's best is what one thread finds."""
    found = _blockwise(index, model_dir, tmp_path, monkeypatch, simd=simd, rows=7)
    loaded = found.index
    texts = [q.text for q in relevance.MEANING_QUERIES]
    queries = found.model.embed(texts)
    monkeypatch.setattr(scoring, "PARTS", 1)
    alone = [scoring.best(loaded.vectors, loaded.scales, loaded.starts, q) for q in queries]
    monkeypatch.setattr(scoring, "PARTS", parts)
    shares = scoring._parts(loaded.starts, len(loaded.vectors), 7)
    assert len(shares) == parts  # the judged store has enough transcripts for four cuts
    scorer = scoring._scored
    seen: list[tuple[str, int]] = []  # (thread, rows) of each block scored

    def scored(rows: NDArray[np.int8], *rest: Any) -> NDArray[np.float32]:
        seen.append((threading.current_thread().name, len(rows)))
        return scorer(rows, *rest)

    monkeypatch.setattr(scoring, "_scored", scored)
    for query, (bests, bound) in zip(queries, alone, strict=True):
        seen.clear()
        shared, said = scoring.best(loaded.vectors, loaded.scales, loaded.starts, query)
        assert said == bound
        if simd:  # integer sums, scaled row by row: the same bits whoever scores them
            np.testing.assert_array_equal(shared, bests)
        else:  # BLAS's float32 sums of a row may round their last bit otherwise at another place in a block
            np.testing.assert_allclose(shared, bests, rtol=1e-6, atol=1e-6)
        assert sum(rows for _, rows in seen) == len(loaded.vectors)
        helpers = {name for name, _ in seen if name.startswith("magnotia-score")}
        assert bool(helpers) == (parts > 1)
        assert threading.current_thread().name in {name for name, _ in seen}


@given(
    # A group's size: a transcript's windows.
    sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=60),
    rows=st.integers(min_value=1, max_value=50),
    parts=st.integers(min_value=1, max_value=4),
)
def test_shares_cover_every_row_once_and_cut_only_where_a_group_starts(sizes: list[int], rows: int, parts: int) -> None:
    starts = np.cumsum([0, *sizes[:-1]], dtype=np.int64)
    count = sum(sizes)
    old = scoring.PARTS
    scoring.PARTS = parts
    try:
        shares = scoring._parts(starts, count, rows)
    finally:
        scoring.PARTS = old
    assert 1 <= len(shares) <= min(parts, -(-count // rows))
    assert (shares[0][0], shares[0][2]) == (0, 0)  # rows and groups from the first
    assert (shares[-1][1], shares[-1][3]) == (count, len(starts))  # to the last
    for (lo, hi, g, h), after in zip(shares, [*shares[1:], None], strict=True):
        assert (lo < hi, g < h, int(starts[g])) == (True, True, lo)  # not empty, cut where a group starts
        if after is not None:
            assert (after[0], after[2]) == (hi, h)  # the next share goes on where this one ends


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12: its count never falls")
def test_searches_leave_none_its_references(index: Index, model_dir: Path, tmp_path: Path) -> None:
    """simsimd 6.5.16's cdist(out=...) returns None without a reference of its own: on Python < 3.12 each search
    that used it took one of None's, and the real server aborted ("deallocating None") after 12,318 searches."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    found = nearest.searcher(db, wait=60)
    assert scoring.simd is not None
    query = "who takes over as engineering lead"
    assert found.near(query, 5).found  # the searches below score every window, and find
    before = sys.getrefcount(None)
    for _ in range(1000):
        found.near(query, 5)
    assert sys.getrefcount(None) > before - 100


def reference(best: list[float], limit: int) -> list[int]:
    order = sorted(range(len(best)), key=lambda d: -best[d])  # sorted() is stable: the lower index first on ties
    return [d for d in order if best[d] >= nearest.FLOOR][:limit]


@given(
    st.lists(st.sampled_from([-0.5, 0.0, 0.29, 0.3, 0.31, 0.5, 0.5, 0.7, 0.9, 0.9, 1.0]), min_size=1, max_size=60),
    st.integers(min_value=1, max_value=70),
)
def test_the_top_is_the_stable_sort_cut(best: list[float], limit: int) -> None:
    scores = np.asarray(best, dtype=np.float32)
    assert nearest._top(scores, limit) == reference([float(s) for s in scores], limit)


@pytest.mark.parametrize("chosen", [None, "3"])
def test_the_server_asks_one_blas_thread_unless_the_user_chose(
    index: Index, model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chosen: str | None
) -> None:
    """Before the server's first import of numpy (the search's own call), BLAS is told one thread; a choice stands."""
    db = stores.write(tmp_path / "app" / "magnotia.db")
    assert index(db, "--model", str(model_dir)).returncode == 0
    for name in search._BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    if chosen is not None:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", chosen)
    near, said = search._nearest(db, "who leads engineering", 5)
    assert near is not None
    assert said["used"] is True
    assert os.environ["OPENBLAS_NUM_THREADS"] == (chosen or "1")
    assert os.environ["MKL_NUM_THREADS"] == "1"
