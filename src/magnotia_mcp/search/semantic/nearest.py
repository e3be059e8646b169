"""The transcripts nearest a query in meaning, from the store's semantic index held in memory.

The index is read once into arrays and read again only when its file changed; the model is
loaded once per process and checked against the sha256 the index was built with. Both are kept
per store. Everything here is synchronous CPU and file work: the server runs it on a worker
thread, never on the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from magnotia_mcp.search.semantic import indexfile, scoring
from magnotia_mcp.search.semantic.build import quantized
from magnotia_mcp.search.semantic.chunks import TEXT, TITLE, chunks, segment
from magnotia_mcp.search.semantic.found import CITED, Chunk, Found, Near
from magnotia_mcp.search.semantic.loaded import Loaded, Unavailable, read
from magnotia_mcp.search.semantic.model import ModelError, StaticModel, fingerprint

if TYPE_CHECKING:
    from magnotia_mcp.store.hits import Contents

# Below this cosine a chunk is not taken as a match at all: nearest neighbours always exist, and
# without a floor a query about nothing in the store would still "find" its least unrelated chunks.
FLOOR = 0.3


# Seconds a search waits for the load it started before it goes by words (the load goes on): a 10k-transcript
# index loads in about 6 s here; a larger one is used from the first search after it is in.
WAIT = 10.0


class _Load:
    """One load of a store's index and model on a thread of its own (a daemon: it never holds up an exit)."""

    def __init__(self, store: Path, stamp: tuple[object, ...]) -> None:
        self.stamp = stamp
        self.done = threading.Event()
        self.result: Searcher | None = None
        self.error: Unavailable | None = None
        threading.Thread(target=self._run, args=(store,), name="magnotia-index-load", daemon=True).start()

    def _run(self, store: Path) -> None:
        try:
            self.result = _load(store, self.stamp)
        except Unavailable as exc:
            self.error = exc
        except Exception as exc:  # any failure: the search must still be answered, by words, saying why
            self.error = Unavailable(f"the semantic index could not be loaded ({exc!r}); run `magnotia-mcp index`")
        finally:
            self.done.set()


_lock = threading.Lock()
_ready: dict[str, Searcher] = {}
_loads: dict[str, _Load] = {}
_models: dict[tuple[str, str], StaticModel] = {}
# Stores whose index the server is bringing up to date (refresh.py): it commits batch after batch, and a
# reload after each would read the whole index again and again; the loaded one answers until it is done.
refreshing: set[str] = set()


def _load(store: Path, stamp: tuple[object, ...]) -> Searcher:
    """The store's index and its model, the model first: its load's working memory (for a 500k-piece vocabulary,
    ~65 MiB: the tokenizer file, the trie's build) is handed back before the index's arrays are filled, so the
    two never add up in the server's peak (10k at 256 dimensions, in-process: 215 -> 166 MiB)."""
    path = indexfile.location(store)
    try:
        found = indexfile.open_existing(store)
    except OSError as exc:
        raise Unavailable(f"the semantic index cannot be read ({exc.strerror}); run `magnotia-mcp index`") from None
    except indexfile.Unusable as exc:
        raise Unavailable(f"the semantic index cannot be used: {exc}; run `magnotia-mcp index` to rebuild it") from None
    if found is None:
        raise Unavailable("there is no semantic index for this store; `magnotia-mcp index --model DIR` builds one")
    conn, meta = found
    dims = int(meta.get("dims", "0"))
    try:
        if dims <= 0:
            raise Unavailable("the semantic index is damaged (no width); run `magnotia-mcp index`")
        model = _load_model(meta)
        index = read(conn, path, stamp, meta, dims)
    finally:
        conn.close()
    return Searcher(index, model)


def _load_model(meta: dict[str, str]) -> StaticModel:
    key = (meta.get("model_path", ""), meta.get("model_sha256", ""))
    model = _models.get(key)
    if model is not None:
        return model
    folder = Path(key[0])
    try:
        if fingerprint(folder) != key[1]:
            raise Unavailable(
                f"the model at {folder} is not the one the semantic index was built with; "
                "run `magnotia-mcp index --model DIR` with the model to use"
            )
        model = StaticModel.load(folder, lean=True)  # a query at a time: our Unigram, a tenth of the memory
    except (ModelError, OSError) as exc:
        raise Unavailable(
            f"the semantic index's model cannot be loaded ({exc}); run `magnotia-mcp index --model DIR`"
        ) from None
    _models[key] = model
    return model


class Searcher:
    """A store's index and model, ready to answer ``nearest``."""

    def __init__(self, index: Loaded, model: StaticModel) -> None:
        self.index = index
        self.model = model

    @property
    def covered(self) -> int:
        """The transcripts the index holds (those without a word have no window, and count)."""
        return self.index.covered

    def near(self, text: str, limit: int) -> Near:
        """The transcripts nearest text, and a way to pick, among a chunk's segments, the one nearest it."""
        query = self.model.embed([text])[0]

        def closest(groups: list[list[str]]) -> list[int]:
            # A window inside one segment (most are: a segment is often longer than a window) needs no embedding:
            # 386 of the 439 groups the bench's 10k searches cited. Only the segments of the others are embedded.
            texts = [text for group in groups if len(group) > 1 for text in group]
            try:
                near: list[float] = (self.model.embed(texts) @ query).tolist() if texts else []
            except ModelError:  # the model's file changed under the server: each window cites its first segment
                near, groups = [], [group[:1] for group in groups]
            picks: list[int] = []
            at = 0
            for group in groups:
                if len(group) > 1:
                    part = near[at : at + len(group)]
                    picks.append(max(range(len(group)), key=part.__getitem__))  # the first of equals, as argmax
                    at += len(group)
                else:
                    picks.append(0)
            return picks

        def again(doc: str, contents: Contents) -> Found | None:
            title, text, segments = contents
            pieces = chunks(title, text, [segment(*s) for s in segments])
            if not pieces:
                return None
            # Rounded as the index would hold them, and scored as it scores its own: the scores it would give.
            try:
                scales, rows = quantized(self.model.embed([p.text for p in pieces]))
            except ModelError:  # the model's file changed under the server: neither what it was nor what it is
                return None
            scores = scoring.exact(rows, scales, np.arange(len(pieces), dtype=np.int64), query)
            titled = int(pieces[0].kind == TITLE)
            windows = [
                Chunk(
                    float(scores[i]),
                    pieces[i].kind,
                    pieces[i].first_seq,
                    pieces[i].last_seq,
                    i - titled if pieces[i].kind == TEXT else None,
                )
                for i in np.argsort(-scores, kind="stable").tolist()
                if scores[i] >= FLOOR
            ]
            return Found(doc, windows[0].score, windows) if windows else None

        return Near(self._nearest(query, limit), closest, again)

    def _nearest(self, query: NDArray[np.float32], limit: int) -> list[Found]:
        """Up to limit transcripts whose best chunk is at least FLOOR near the query, nearest first."""
        index = self.index
        if not index.docs:
            return []
        if not query.any():
            return []
        best, slack = scoring.best(index.vectors, index.scales, index.starts, query)
        among, rough, offsets = _settle(index, query, best, slack, limit)
        answered = _top(best[among], limit)
        cited = _cited(index, query, [(int(among[k]), int(offsets[k])) for k in answered], rough, slack)
        return [
            Found(index.docs[among[k]], float(best[among[k]]), cited[i], index.marks[among[k]])
            for i, k in enumerate(answered)
        ]


def _settle(
    index: Loaded, query: NDArray[np.float32], best: NDArray[np.float32], slack: float, limit: int
) -> tuple[NDArray[np.intp], NDArray[np.float32], NDArray[np.int64]]:
    """Put in best the exact best (scoring.exact) of each transcript that scores off by slack could reorder. Their
    indexes, ascending (the only transcripts _top then needs to look at), and their windows' scores as best gave
    them (scoring.rough), one transcript after another, and where each one's start.

    Which transcripts, with kth the limit-th best here: at least limit transcripts are at least kth here, so at
    least kth - slack exactly. One among the limit nearest by exact scores is thus at least kth - slack and at
    least FLOOR exactly, so at least kth - 2 slack and FLOOR - slack here: it is rescored. Any transcript not
    rescored is below kth - 2 slack here (under all the limit nearest) or below FLOOR - slack (under FLOOR).
    So _top picks what it would from exact scores, and every score a search answers with is exact.

    Which of their windows: a transcript's exactly best window w is within 2 slack of its best here, since
    rough(w) >= exact(w) - slack >= exact(b) - slack >= rough(b) - 2 slack for its best window here, b. Only those
    are scored exactly: 3% of the windows at the median of the bench's 10k searches, not all of them.
    """
    kth = float(np.partition(best, len(best) - limit)[len(best) - limit]) if limit < len(best) else -np.inf
    near = np.flatnonzero(best >= max(kth - 2 * slack, FLOOR - slack))
    if not near.size:
        return near, np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
    firsts = index.starts[near]
    counts = index.ends[near] - firsts
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    windows = np.repeat(firsts - offsets, counts) + np.arange(int(counts.sum()))
    rough = scoring.rough(index.vectors, index.scales, windows, query)
    doubt = rough >= np.repeat(np.maximum.reduceat(rough, offsets) - 2 * slack, counts)
    # Each transcript keeps at least its best window here, and its rows stay in order: reduceat by their counts.
    kept = np.add.reduceat(doubt, offsets)
    at = np.concatenate(([0], np.cumsum(kept)[:-1])).astype(np.int64)
    best[near] = np.maximum.reduceat(scoring.exact(index.vectors, index.scales, windows[doubt], query), at)
    return near, rough, offsets


def _cited(
    index: Loaded,
    query: NDArray[np.float32],
    docs: list[tuple[int, int]],
    rough: NDArray[np.float32],
    slack: float,
) -> list[Callable[[int | None], list[Chunk]]]:
    """For each transcript answered (docs: its index, and where its windows' scores start in rough, as _settle
    gave them), its windows at FLOOR or above, exactly scored, best first: pick(n) the first n, pick(None) all.

    Only the windows the rounding leaves in doubt are scored exactly: for the CITED a hit shows (_in_doubt), of
    every transcript answered at once, here on the worker thread (a hit's chunks are picked on the event loop);
    for all of them at FLOOR or above (a speaker's search, on a worker thread too) when first asked.
    """
    if not docs:
        return []
    los = np.array([index.starts[d] for d, _ in docs], dtype=np.int64)
    counts = np.array([index.ends[d] for d, _ in docs], dtype=np.int64) - los
    ats = np.array([at for _, at in docs], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    within = np.arange(int(counts.sum())) - np.repeat(offsets, counts)  # each window's place in its transcript
    part = rough[np.repeat(ats, counts) + within]
    doubt = _in_doubt(part, offsets, counts, CITED, slack)
    rows = (np.repeat(los, counts) + within)[doubt]
    scores = scoring.exact(index.vectors, index.scales, rows, query)
    bounds = np.concatenate(([0], np.cumsum(np.add.reduceat(doubt, offsets))))

    def cited(k: int) -> Callable[[int | None], list[Chunk]]:
        lo, hi = int(los[k]), int(los[k] + counts[k])
        own, mine = rows[bounds[k] : bounds[k + 1]], scores[bounds[k] : bounds[k + 1]]
        whole = False  # own: all its windows that may be at FLOOR exactly

        def pick(most: int | None) -> list[Chunk]:
            nonlocal own, mine, whole
            if (most is None or most > CITED) and not whole:
                mine_rough = rough[int(ats[k]) : int(ats[k]) + hi - lo]
                own = lo + np.flatnonzero(mine_rough >= FLOOR - slack)
                mine, whole = scoring.exact(index.vectors, index.scales, own, query), True
            order = np.argsort(-mine, kind="stable")[:most]  # equals in the order of their rows, as among all
            return [index.cite(int(own[i]), lo, float(mine[i])) for i in order[mine[order] >= FLOOR]]

        return pick

    return [cited(k) for k in range(len(docs))]


def _in_doubt(
    rough: NDArray[np.float32], offsets: NDArray[np.int64], counts: NDArray[np.int64], most: int, slack: float
) -> NDArray[np.bool_]:
    """Which windows, scored roughly (within slack; transcript k's from offsets[k], counts[k] of them), may be
    among their transcript's most best exactly at FLOOR or above. One at FLOOR exactly is at FLOOR - slack here.
    One under its transcript's most-th best here, r, by more than 2 slack is under r - slack exactly, where most
    windows are at least: it is not among the most best.

    The most-th best of every transcript at once: most - 1 times, each transcript's best (its first, on ties) is
    set aside (a transcript with fewer windows ends at -inf: all of its windows are in doubt).
    """
    group = np.repeat(np.arange(len(counts)), counts)
    left = rough.copy()
    for _ in range(most - 1):
        top = np.maximum.reduceat(left, offsets)
        at = np.flatnonzero(left == top[group])
        _, first = np.unique(group[at], return_index=True)
        left[at[first]] = -np.inf
    floor = np.maximum(np.maximum.reduceat(left, offsets) - 2 * slack, FLOOR - slack)
    return rough >= floor[group]


def _top(best: NDArray[np.float32], limit: int) -> list[int]:
    """The indexes of the limit highest of best that reach FLOOR, highest first, the lower index first on ties.

    A partition finds the limit-th score, and only the items that reach it are sorted, not every transcript's
    score: in-process at 10k, a search's nearest 40 went from 5.17 to 4.59 ms.
    """
    if limit < len(best):
        kth = np.partition(best, len(best) - limit)[len(best) - limit]
        among = np.flatnonzero(best >= max(kth, FLOOR))
    else:
        among = np.flatnonzero(best >= FLOOR)
    return [int(d) for d in among[np.argsort(-best[among], kind="stable")][:limit]]


def searcher(store: Path, wait: float = WAIT) -> Searcher:
    """The store's index and model; Unavailable says why this search must go by words.

    Loading runs on a thread of its own and no call waits for it longer than wait: a large index takes
    seconds to load (it is read whole into memory), and a search answers by words meanwhile, saying so.
    When the index file changed, the one already loaded answers until the new one is in.
    """
    key = str(store)
    stamp = indexfile.stamp(indexfile.location(store))
    with _lock:
        ready = _ready.get(key)
        if ready is not None and (ready.index.stamp == stamp or key in refreshing):
            return ready
        load = _loads.get(key)
        if load is None or load.stamp != stamp:
            load = _loads[key] = _Load(store, stamp)
    if ready is not None and not load.done.is_set():
        return ready  # the file changed: the last index answers while the new one loads
    if not load.done.wait(wait):
        raise Unavailable(
            "the semantic index is still loading (a large one takes a few seconds); this search went by words"
        )
    if load.error is not None:
        raise load.error
    assert load.result is not None
    with _lock:
        _ready[key] = load.result
    return load.result
