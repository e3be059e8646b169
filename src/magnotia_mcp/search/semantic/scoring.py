"""Each transcript's best window cosine with a query: SimSIMD's int8 dot products where installed, else BLAS.

The index holds each window as int8 and a scale (build.quantized). numpy cannot multiply int8 fast, so
without SimSIMD a block of rows at a time is widened into float32 and multiplied by BLAS. SimSIMD
(``simsimd``, the semantic extra's, where it has a wheel) multiplies int8 by int8 in SIMD (AVX-512 VNNI,
AVX2, NEON): the query is rounded to int8 too, so ``best`` is off by at most ``error(query)``. The search
asks ``best`` for every transcript, ``rough`` (the same scores, window by window) for the windows of the
transcripts that bound could reorder, and ``exact`` for those of them it leaves in doubt (nearest._settle), so
it answers what exact scores would.

Blocks of rows, not the whole index at once: a block's scores (256 KiB) stay in cache while they are scaled
and reduced to each transcript's best, and no array of every window's score is made (4.1M windows at 100k:
16.5 MB, written and read three times a search).

Shares of the rows, one per thread (``PARTS``): SimSIMD's kernel costs ~5.5 ns a row whether the row comes from
memory or from cache (a call per row), so it is bound by the cores, not by memory, and a second core halves it.
Each share is cut where a transcript starts, so no two threads fold into one transcript's best.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


def _simsimd() -> ModuleType | None:
    try:
        import simsimd  # noqa: PLC0415 - optional within the extra
    except ImportError:  # the extra installs it wherever it has a wheel (CPython < 3.15)
        return None
    return simsimd


simd = _simsimd()  # None: numpy scores (tests set it so, to compare)


class Paged(Protocol):
    """Rows whose pages may come and go (a Loaded index, when mapped from a file): the rows of a block are released
    once scored, so the process never holds them all."""

    @property
    def mapped(self) -> bool: ...

    def release(self, lo: int = 0, hi: int | None = None) -> None: ...


ROWS = 1 << 16  # rows SimSIMD scores at a time: their scores are 256 KiB
BLOCK_BYTES = 8 << 20  # without it, rows widened at a time: as many as make 8 MiB of float32 (32,768 at 64 dims)
# What a thread's scan of a mapped index holds of it before handing the rows scored back: four blocks at 64 dims.
# Each block handed back alone cost the scan at 100k 1.5 ms more (17.7 ms p50 in-process, against 16.1).
HELD = 16 << 20


def _cores() -> int:
    """The CPUs this process may run on (what os.process_cpu_count, Python 3.13+, says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


# Threads that score one search's windows, ours and helpers: SimSIMD's and BLAS's calls let go of the GIL, and at
# 100k (4.1M windows) the scan alone is 28 ms of a core. Not more than MOST: the search by words runs beside it.
MOST = 4
PARTS = min(MOST, _cores())
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _helpers() -> ThreadPoolExecutor:
    """The helper threads, started when a search first needs them (none in a server without an index)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=MOST - 1, thread_name_prefix="magnotia-score")
        return _pool


def best(
    vectors: NDArray[np.int8],
    scales: NDArray[np.float32],
    starts: NDArray[np.int64],
    query: NDArray[np.float32],
    paged: Paged | None = None,
) -> tuple[NDArray[np.float32], float]:
    """The best cosine with query of each group of rows, and how far from ``exact``'s those may be (``error``,
    and float32's rounding).

    Group d is rows starts[d] up to the next start (or the end): one transcript's windows. starts ascends
    strictly from 0. A group may span blocks: each block's best of it is folded into the one before. With paged, each
    thread releases the rows it has scored every HELD bytes.
    """
    out = np.full(len(starts), -np.inf, dtype=np.float32)
    count = len(vectors)
    dims = vectors.shape[1] if vectors.ndim == 2 else 0
    quantized = _quantized(query) if simd is not None and count else None
    rows = _block(quantized, dims)
    first, *others = _parts(starts, count, rows)
    later = [
        _helpers().submit(
            _fold, vectors[lo:hi], scales[lo:hi], starts[g:h] - lo, query, quantized, rows, out[g:h], paged, lo
        )
        for lo, hi, g, h in others
    ]
    lo, hi, g, h = first
    _fold(vectors[lo:hi], scales[lo:hi], starts[g:h], query, quantized, rows, out[g:h], paged, lo)
    for part in later:
        part.result()
    if quantized is None:
        return out, _rounding(dims)
    out /= quantized[1]
    return out, _bound(query, quantized) + _rounding(dims)


# A search among some groups scores only their rows when they hold under a fifth of all. Gathered on one thread, a
# row cost ~23 ns at 100k (the reads are scattered), against ~4.3 in a scan shared by two threads: even near a fifth
# (at 100k, 13% of the rows: 12.2 ms gathered, 17.7 ms scanning all).
GATHER = 5


def best_among(
    vectors: NDArray[np.int8],
    scales: NDArray[np.float32],
    starts: NDArray[np.int64],
    ends: NDArray[np.int64],
    picks: NDArray[np.intp],
    query: NDArray[np.float32],
    paged: Paged | None = None,
) -> tuple[NDArray[np.float32], float]:
    """As ``best``, with every group but those of picks (ascending; group d is rows starts[d]:ends[d], none empty)
    at -inf. When those hold under 1/GATHER of the rows (a month of three years' meetings), only their rows are
    scored, as ``rough`` scores them (a block at a time, on this thread); else all are, as ``best`` scores them, and
    the others are set aside."""
    out = np.full(len(starts), -np.inf, dtype=np.float32)
    if int((ends[picks] - starts[picks]).sum()) * GATHER >= len(vectors):
        every, slack = best(vectors, scales, starts, query, paged)
        out[picks] = every[picks]
        return out, slack
    if not picks.size:
        return out, 0.0
    rows, offsets, _ = rows_of(starts, ends, picks)
    out[picks] = np.maximum.reduceat(rough(vectors, scales, rows, query, paged), offsets)
    return out, error(query) + _rounding(vectors.shape[1] if vectors.ndim == 2 else 0)


def rows_of(
    starts: NDArray[np.int64], ends: NDArray[np.int64], groups: NDArray[np.intp]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The rows of the given groups (group d: rows starts[d]:ends[d]), one group after another; where each group's
    rows start among them; and how many each has."""
    firsts = starts[groups]
    counts = ends[groups] - firsts
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    return np.repeat(firsts - offsets, counts) + np.arange(int(counts.sum())), offsets, counts


def _block(quantized: tuple[NDArray[np.int8], float] | None, dims: int) -> int:
    """Rows scored at a time: ROWS with SimSIMD, else as many as widen into BLOCK_BYTES of float32."""
    return ROWS if quantized is not None else max(1, BLOCK_BYTES // (4 * max(1, dims)))


def _parts(starts: NDArray[np.int64], count: int, rows: int) -> list[tuple[int, int, int, int]]:
    """Rows lo:hi and groups g:h of each thread's share: up to PARTS shares of about equal rows, no more than there
    are blocks, cut where a group starts, so that no two threads fold into one group's best."""
    shares = min(PARTS, -(-count // rows))
    wanted = np.arange(1, shares, dtype=np.int64) * count // max(1, shares)
    groups = [0, *sorted({int(g) for g in np.searchsorted(starts, wanted) if 0 < g < len(starts)}), len(starts)]
    cuts = [int(starts[g]) if g < len(starts) else count for g in groups]
    return [(cuts[i], cuts[i + 1], groups[i], groups[i + 1]) for i in range(len(groups) - 1)]


def _fold(
    vectors: NDArray[np.int8],
    scales: NDArray[np.float32],
    starts: NDArray[np.int64],
    query: NDArray[np.float32],
    quantized: tuple[NDArray[np.int8], float] | None,
    rows: int,
    out: NDArray[np.float32],
    paged: Paged | None,
    base: int,
) -> None:
    """Fold the scores of vectors, a block of rows at a time, into out: the best of each group (starts[0] is 0);
    with paged, the rows scored released (at base + lo) each HELD bytes of them."""
    count = len(vectors)
    dims = vectors.shape[1] if vectors.ndim == 2 else 0
    size = min(rows, count)
    found = np.empty(size, dtype=np.float32)
    wide = np.empty((size, dims), dtype=np.float32) if quantized is None else None
    held = 0  # the first row not yet released
    for lo in range(0, count, rows):
        hi = min(count, lo + rows)
        scores = _scored(vectors[lo:hi], scales[lo:hi], query, quantized, found, wide)
        first = int(np.searchsorted(starts, lo, side="right")) - 1  # the group row lo is in
        last = int(np.searchsorted(starts, hi))  # the groups that start before hi end at last
        at = starts[first:last] - lo
        at[0] = 0
        np.maximum(out[first:last], np.maximum.reduceat(scores, at), out=out[first:last])
        if paged is not None and ((hi - held) * dims >= HELD or hi == count):
            paged.release(base + held, base + hi)
            held = hi


def rough(
    vectors: NDArray[np.int8],
    scales: NDArray[np.float32],
    rows: NDArray[np.int64],
    query: NDArray[np.float32],
    paged: Paged | None = None,
) -> NDArray[np.float32]:
    """The given rows' scores as ``best`` scores them, one by one: within the slack ``best`` says of ``exact``'s.

    For a few rows (those of the transcripts near the query), where ``exact`` of them all would cost several
    times as much: nearest._settle rescores only those these leave in doubt. With paged, rows ascend, and the span
    of each block's is released once it is scored (a query near nothing in particular may be near most rows).
    """
    quantized = _quantized(query) if simd is not None and len(rows) else None
    out = np.empty(len(rows), dtype=np.float32)
    dims = vectors.shape[1] if vectors.ndim == 2 else 0
    step = _block(quantized, dims)
    wide = np.empty((min(step, len(rows)), dims), dtype=np.float32) if quantized is None else None
    for lo, hi in gathered(rows, step, dims, paged):
        some, into = rows[lo:hi], out[lo:hi]
        # np.take, not vectors[some]: 4x faster at gathering rows (105k rows of 64: 0.27 against 1.1 ms).
        into[:] = _scored(np.take(vectors, some, axis=0), scales[some], query, quantized, into, wide)
    if quantized is not None:
        out /= quantized[1]
    return out


def _scored(
    rows: NDArray[np.int8],
    scales: NDArray[np.float32],
    query: NDArray[np.float32],
    quantized: tuple[NDArray[np.int8], float] | None,
    into: NDArray[np.float32],
    wide: NDArray[np.float32] | None,
) -> NDArray[np.float32]:
    """rows' scores, scaled: float32 BLAS into ``into`` (rows widened in ``wide``), or SimSIMD's int8 sums (still
    to be divided by the query's step) in an array of its own."""
    scores: NDArray[np.float32]
    if simd is None or quantized is None:
        assert wide is not None
        scores = into[: len(rows)]
        np.copyto(wide[: len(rows)], rows, casting="unsafe")
        np.dot(wide[: len(rows)], query, out=scores)
    else:
        # Integer sums, exact: |sum| < 2**24 up to 1,040 dims, so float32 holds them. Not into out=: simsimd
        # 6.5.16 then returns None without a reference of its own, and on Python < 3.12 every call takes one
        # of None's: the real server aborted ("deallocating None") after 12,318 searches here.
        pair = simd.cdist(quantized[0][None, :], rows, metric="dot", out_dtype="float32")
        scores = np.asarray(pair)[0]
    scores *= scales
    return scores


def exact(
    vectors: NDArray[np.int8],
    scales: NDArray[np.float32],
    rows: NDArray[np.int64],
    query: NDArray[np.float32],
    paged: Paged | None = None,
) -> NDArray[np.float32]:
    """The cosines of the given rows with query, summed in float64 and then rounded to float32: a row's score is
    the same whichever rows it is scored with. (BLAS's float32 sums are not: a row in a block's remainder is
    summed in another order, and its last bit may differ.) Blocks of BLOCK_BYTES of float64; paged as ``rough``."""
    out = np.empty(len(rows), dtype=np.float32)
    wide = query.astype(np.float64)
    dims = vectors.shape[1] if vectors.ndim == 2 else 0
    for lo, hi in gathered(rows, max(1, BLOCK_BYTES // (8 * max(1, dims))), dims, paged):
        some = rows[lo:hi]
        sums: NDArray[np.float64] = np.take(vectors, some, axis=0).astype(np.float64) @ wide
        sums *= scales[some]
        out[lo : lo + len(some)] = sums
    return out


# What a gather of rows (rough, exact) may have mapped of a mapped index before it hands them back. Rows scattered over
# it (a query near nothing in particular is near most transcripts) map what a fault maps about each: up to a 2 MiB
# folio, as the page cache holds a file written whole (Linux 6.18 here). A block of 16,384 such rows mapped 233 MiB
# of the 100k store's 264 before the cuts; a page a fault (MADV_RANDOM) made a scan cost half as much again.
FOLIO = 2 << 20
MAPPED = 16 << 20


def gathered(rows: NDArray[np.int64], step: int, dims: int, paged: Paged | None) -> Iterator[tuple[int, int]]:
    """Where a gather (rough, exact, Loaded.part) cuts rows (ascending when paged is given), lo:hi: every step rows,
    and with paged also wherever the rows since the last cut span MAPPED bytes of whole FOLIOs; each cut's span
    released once read."""
    count = len(rows)
    if not count:
        return
    cuts = set(range(0, count, step))
    if paged is not None and paged.mapped:
        granules = np.concatenate(([1], np.diff(rows * max(1, dims) // FOLIO) != 0)).cumsum()
        every = MAPPED // FOLIO
        cuts |= set(np.searchsorted(granules, np.arange(every, int(granules[-1]), every), side="right").tolist())
    ordered = sorted(cuts)
    for lo, hi in zip(ordered, [*ordered[1:], count], strict=True):
        yield lo, hi
        if paged is not None:
            paged.release(int(rows[lo]), int(rows[hi - 1]) + 1)


def error(query: NDArray[np.float32]) -> float:
    """How far ``best`` may be from exact scores (0 without SimSIMD), up to float32's own rounding.

    The query is rounded to int8: |r.q - r.q8/step| <= |r| |q - q8/step| (Cauchy-Schwarz). A window's row r as
    stored is a unit vector rounded to steps of at most 1/127 (build.quantized), so |r| <= 1 + sqrt(d)/254.
    For the test model's queries: 0.007 at the median, 0.013 at most.
    """
    quantized = _quantized(query) if simd is not None else None
    return 0.0 if quantized is None else _bound(query, quantized)


def _rounding(dims: int) -> float:
    """How far float32's rounding may move a score here from ``exact``'s: a float32 sum of dims products is off by
    at most dims units of 2**-24 of the sum of their sizes (<= |q| |r|, see ``error``), its scaling by two more,
    and ``exact``'s rounding to float32 by one: 4e-6 at 64 dimensions, 1.6e-5 at 256. SimSIMD's integer sums are
    exact, so this is more than it needs there."""
    return (dims + 3) * 2.0**-24 * (1.0 + float(np.sqrt(dims)) / 254.0)


def _bound(query: NDArray[np.float32], quantized: tuple[NDArray[np.int8], float]) -> float:
    longest = 1.0 + float(np.sqrt(query.size)) / 254.0
    return float(np.linalg.norm(query - quantized[0] / quantized[1])) * longest


def _quantized(query: NDArray[np.float32]) -> tuple[NDArray[np.int8], float] | None:
    """The query in int8, as the windows are, and the factor it was scaled by; None for a query of zeros."""
    peak = float(np.abs(query).max()) if query.size else 0.0
    if peak == 0:
        return None
    step = 127.0 / peak
    return np.rint(query * step).astype(np.int8), step
