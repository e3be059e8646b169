"""The transcripts nearest a query in meaning, from the store's semantic index held in memory.

The index is read once into arrays and read again only when its file changed; the model is loaded once per process
and checked against the sha256 the index was built with. Both are kept per store. Everything here is synchronous CPU
and file work: the server runs it on a worker thread, never on the event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from magnotia_mcp.search.semantic import indexfile, scoring
from magnotia_mcp.search.semantic.build import quantized
from magnotia_mcp.search.semantic.chunks import TEXT, TITLE, chunks, segment
from magnotia_mcp.search.semantic.found import CITED, Chunk, Found, Near
from magnotia_mcp.search.semantic.loaded import UNFILTERED, Filters, Loaded, Unavailable, passing, read
from magnotia_mcp.search.semantic.model import ModelError, StaticModel, fingerprint

if TYPE_CHECKING:
    from magnotia_mcp.store.hits import Contents

# Below this cosine a chunk is no match at all: nearest neighbours always exist, and without a floor a query about
# nothing in the store would still "find" its least unrelated chunks.
FLOOR = 0.3


# A speaker's search scores only their windows when they are under this share of all (1/10): Searcher.near.
SPOKEN_SHARE = 10


# Seconds a search waits for the load it started before going by words (the load goes on): 10k load in ~6 s here.
WAIT = 10.0


class _Load:
    """One load of a store's index and model on a thread of its own (a daemon: it never holds up an exit)."""

    def __init__(self, store: Path, stamp: tuple[object, ...]) -> None:
        self.stamp = stamp
        self.done = threading.Event()
        self.result: Searcher | None = None
        self.error: Unavailable | None = None
        self.waiting: list[threading.Event] = []  # the searches waiting for it: each woken when it ends
        threading.Thread(target=self._run, args=(store,), name="magnotia-index-load", daemon=True).start()

    def _run(self, store: Path) -> None:
        try:
            self.result = _load(store, self.stamp)
        except Unavailable as exc:
            self.error = exc
        except Exception as exc:  # any failure: the search must still be answered, by words, saying why
            self.error = Unavailable(f"the semantic index could not be loaded ({exc!r}); run `magnotia-mcp index`")
        finally:
            with _lock:
                self.done.set()
                for woken in self.waiting:
                    woken.set()


_lock = threading.Lock()
_ready: dict[str, Searcher] = {}
_loads: dict[str, _Load] = {}
_models: dict[tuple[str, str], StaticModel] = {}
# Stores whose index the server is bringing up to date (refresh.py): a reload after each batch it commits would
# read the whole index again and again; the loaded one answers until it is done.
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
    except indexfile.Unsafe as exc:  # the message says the fix; a rebuild is not one
        raise Unavailable(str(exc)) from None
    except indexfile.Unusable as exc:
        raise Unavailable(f"the semantic index cannot be used: {exc}; run `magnotia-mcp index` to rebuild it") from None
    if found is None:
        raise Unavailable("there is no semantic index for this store; `magnotia-mcp index --model DIR` builds one")
    conn, meta = found
    dims = int(meta["dims"])  # a width indexfile checked
    try:
        model = _load_model(meta)
        if model.dims != dims:  # every search would fail on the vectors' sizes: never trusted
            why = f"it holds vectors of {dims} dimensions where its model gives {model.dims}"
            raise Unavailable(f"the semantic index cannot be used: {why}; run `magnotia-mcp index` to rebuild it")
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

    def near(self, text: str, limit: int, speaker: str | None = None, filters: Filters = UNFILTERED) -> Near:
        """The transcripts nearest text, and a way to pick, among a chunk's segments, the one nearest it; with a
        speaker (a folded label), by the windows the index says they spoke in, when it lists them (Near.speaker);
        with filters (since, until, source), among those the index says may pass them (the store's word is the
        plan's)."""
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

        # Restricted to a speaker, and the index lists the windows they spoke in: only those are scored, gathered
        # into an index of their own, unless they are more than a tenth of all (a label in most meetings: then most
        # of the nearest overall are theirs anyway, and copying them would cost up to 26 MB at 100k). Only from the
        # file this index was read from: one a refresh is writing lists places among windows not loaded yet.
        by = self
        most = len(self.index.vectors) // SPOKEN_SHARE
        listed = indexfile.spoken(self.index.path, speaker, most) if speaker is not None else None
        if listed is not None and indexfile.stamp(self.index.path) == self.index.stamp:
            by = Searcher(self.index.part(listed), self.model)

        def among(ids: Collection[str], most: int) -> Near:  # asked once a search: its answer has no among of its own
            found = by._nearest(query, most, by.index.positions(ids))
            return Near(found, closest, again, None, len(found) >= most, speaker if by is not self else None)

        # Filters: only those they may keep are scored (scoring.best_among gathers their windows when few).
        found = by._nearest(query, limit, passing(by.index, filters))
        return Near(found, closest, again, among, len(found) >= limit, speaker if by is not self else None)

    def _nearest(self, query: NDArray[np.float32], limit: int, picks: NDArray[np.intp] | None = None) -> list[Found]:
        """Up to limit transcripts whose best chunk is at least FLOOR near the query, nearest first: of all
        transcripts, or of those at picks in docs (ascending)."""
        index = self.index
        if not index.docs or not query.any():
            return []
        if picks is None:
            best, slack = scoring.best(index.vectors, index.scales, index.starts, query, index)
        else:
            best, slack = scoring.best_among(index.vectors, index.scales, index.starts, index.ends, picks, query, index)
        settled = _settle(index, query, best, slack, limit)
        index.release()  # the rows _settle and best_among gathered: a hit's cited ones are read again when shown
        near = settled.near
        return [
            Found(index.docs[near[k]], float(best[near[k]]), settled.cited(k), index.marks[near[k]])
            for k in _top(best[near], limit)
        ]


class _Settled(NamedTuple):
    """The transcripts _settle rescored, and what it scored of their windows, one transcript after another."""

    loaded: Loaded
    query: NDArray[np.float32]
    slack: float
    near: NDArray[np.intp]  # the transcripts, ascending
    offsets: NDArray[np.int64]  # where each one's windows start in rough
    rough: NDArray[np.float32]  # all their windows, scored as best scored them (scoring.rough)
    rows: NDArray[np.int64]  # those in doubt (_in_doubt), and their exact scores
    exact: NDArray[np.float32]
    bounds: NDArray[np.int64]  # where each one's start in rows

    def cited(self, k: int) -> Callable[[int | None], list[Chunk]]:
        """The k-th transcript's windows at FLOOR or above, exactly scored, best first: pick(n) the first n,
        pick(None) all. Its CITED best are among the windows in doubt, scored already; all of them (a speaker's
        search asks, on a worker thread) are those at FLOOR - slack or above here, scored when first asked."""
        index, lo = self.loaded, int(self.loaded.starts[self.near[k]])
        own, mine = self.rows[self.bounds[k] : self.bounds[k + 1]], self.exact[self.bounds[k] : self.bounds[k + 1]]
        whole = False

        def pick(most: int | None) -> list[Chunk]:
            nonlocal own, mine, whole
            if (most is None or most > CITED) and not whole:
                at = int(self.offsets[k])
                mine_rough = self.rough[at : at + int(index.ends[self.near[k]]) - lo]
                own = lo + np.flatnonzero(mine_rough >= FLOOR - self.slack)
                mine, whole = scoring.exact(index.vectors, index.scales, own, self.query), True
            order = np.argsort(-mine, kind="stable")[:most]  # equals in the order of their rows, as among all
            return [index.cite(int(own[i]), lo, float(mine[i])) for i in order[mine[order] >= FLOOR]]

        return pick


def _settle(index: Loaded, query: NDArray[np.float32], best: NDArray[np.float32], slack: float, limit: int) -> _Settled:
    """Put in best the exact best (scoring.exact) of each transcript that scores off by slack could reorder; those
    transcripts (the only ones _top then needs to look at), and their windows scored.

    Which transcripts, with kth the limit-th best here: at least limit transcripts are at least kth here, so at
    least kth - slack exactly. One among the limit nearest by exact scores is thus at least kth - slack and at
    least FLOOR exactly, so at least kth - 2 slack and FLOOR - slack here: it is rescored. Any transcript not
    rescored is below kth - 2 slack here (under all the limit nearest) or below FLOOR - slack (under FLOOR).
    So _top picks what it would from exact scores, and every score a search answers with is exact.

    Which of their windows: those that may be among its CITED best exactly (_in_doubt), its best among them. Over
    the bench's 10k searches, 219 of 14k windows at the median, 1.1k of 33k at p90.
    """
    # kth among those at FLOOR - slack or above only: near is the same set (when more than limit are, kth is too;
    # else only FLOOR's bound counts). numpy's partition slows ~10x on many equal values: a search among some's -inf.
    floor = FLOOR - slack
    above = best[best >= floor]
    kth = float(np.partition(above, len(above) - limit)[len(above) - limit]) if limit < len(above) else -np.inf
    near = np.flatnonzero(best >= max(kth - 2 * slack, floor))
    if not near.size:  # nothing reaches the floor (and offsets below would be [0], for no transcript)
        none = np.zeros(0, dtype=np.int64)
        return _Settled(index, query, slack, near, none, np.zeros(0, dtype=np.float32), none, best[:0], none)
    windows, offsets, counts = scoring.rows_of(index.starts, index.ends, near)
    rough = scoring.rough(index.vectors, index.scales, windows, query, index)
    doubt = _in_doubt(rough, offsets, counts, CITED, slack)
    rows = windows[doubt]
    exact = scoring.exact(index.vectors, index.scales, rows, query, index)
    # Each transcript keeps at least its best window here, and its rows stay in order: reduceat by their counts.
    bounds = np.concatenate(([0], np.cumsum(np.add.reduceat(doubt, offsets)))).astype(np.int64)
    best[near] = np.maximum.reduceat(exact, bounds[:-1])
    return _Settled(index, query, slack, near, offsets, rough, rows, exact, bounds)


def _in_doubt(
    rough: NDArray[np.float32], offsets: NDArray[np.int64], counts: NDArray[np.int64], most: int, slack: float
) -> NDArray[np.bool_]:
    """Which windows, scored roughly (within slack; transcript k's from offsets[k], counts[k] of them), may be
    among their transcript's most best exactly: all those within 2 slack of its most-th best here, r. One under
    r - 2 slack here is under r - slack exactly, where at least most windows are: it is not among the most best.
    (Its best exactly is among them too: at least the best here less 2 slack, so at least r - 2 slack here.)

    Every transcript's most-th best at once: most - 1 times, each one's best here is set aside, ties and all, so r
    may come out lower than it is (more windows in doubt, never fewer); one with too few windows ends at -inf.
    """
    group = np.repeat(np.arange(len(counts)), counts)
    left = rough.copy()
    for _ in range(most - 1):
        left[left == np.maximum.reduceat(left, offsets)[group]] = -np.inf
    return rough >= (np.maximum.reduceat(left, offsets) - 2 * slack)[group]


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


def searcher(store: Path, wait: float | None = None, given_up: threading.Event | None = None) -> Searcher:
    """The store's index and model; Unavailable says why this search must go by words. Loading runs on a thread of
    its own and no call waits for it longer than wait (WAIT), nor once given_up is set: a large index takes seconds
    to load (it is read whole into memory), and a search answers by words meanwhile, saying so. When the index file
    changed, the one already loaded answers until the new one is in."""
    key = str(store)
    stamp = indexfile.stamp(indexfile.location(store))
    with _lock:
        ready = _ready.get(key)
        if ready is not None and (ready.index.stamp == stamp or key in refreshing):
            return ready
        load = _loads.get(key)
        if load is None or load.stamp != stamp:
            load = _loads[key] = _Load(store, stamp)
        # Woken when the load ends, or when the search gives up (cancelled: a stopping server waits for no load).
        load.waiting.append(woken := given_up or threading.Event())
    if ready is not None and not load.done.is_set():
        return ready  # the file changed: the last index answers while the new one loads
    if not load.done.is_set():
        woken.wait(WAIT if wait is None else wait)
    if not load.done.is_set():
        raise Unavailable("the semantic index is still loading (a large one takes a few seconds)")
    if load.error is not None:
        raise load.error
    assert load.result is not None
    with _lock:
        _ready[key] = load.result
    return load.result
