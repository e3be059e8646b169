"""Every window's cosine with a query: SimSIMD's int8 dot products where installed, else numpy's BLAS.

The index holds each window as int8 and a scale (build.quantized). numpy cannot multiply int8 fast, so
``widened`` widens a block at a time into float32 and lets BLAS multiply it. SimSIMD (``simsimd``, the
semantic extra's, where it has a wheel) multiplies int8 by int8 in SIMD (AVX-512 VNNI, AVX2, NEON): the
query is rounded to int8 too, so ``fast`` is off by at most ``error(query)``. The search asks ``fast`` for
every window, then ``exact`` for the windows of the transcripts that bound could reorder
(nearest._settle): it answers what ``widened`` alone would (to float32's last bit), at a third of the
cost at 256 dimensions (in-process, 420k windows: 13.6 -> 4.1-4.8 ms; at 64, 4.9 -> 3.1-3.7 ms).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np
from numpy.typing import NDArray


def _simsimd() -> ModuleType | None:
    try:
        import simsimd  # noqa: PLC0415 - optional within the extra
    except ImportError:  # the extra installs it wherever it has a wheel (CPython < 3.15)
        return None
    return simsimd


simd = _simsimd()  # None: numpy scores (tests set it so, to compare)

BLOCK_BYTES = 8 << 20  # rows widened at a time: as many as make 8 MiB of float32 (32,768 at 64 dims), reused


def widened(vectors: NDArray[np.int8], scales: NDArray[np.float32], query: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row's cosine with query, in float32: the rows widened a block at a time, multiplied by BLAS.

    Faster than einsum on the int8 rows, and the memory held is the int8 rows plus one block, never a float32
    copy of them all. 420k rows of 64: 5.3 ms in blocks of 4,096, 3.4 ms in blocks of 32,768 (fewer calls).
    """
    out = np.empty(len(vectors), dtype=np.float32)
    dims = vectors.shape[1] if vectors.ndim == 2 else 0
    step = max(1, BLOCK_BYTES // (4 * max(1, dims)))
    block = np.empty((min(step, len(vectors)), dims), dtype=np.float32)
    for lo in range(0, len(vectors), step):
        rows = vectors[lo : lo + step]
        n = len(rows)
        np.copyto(block[:n], rows, casting="unsafe")
        np.dot(block[:n], query, out=out[lo : lo + n])
    out *= scales
    return out


def exact(
    vectors: NDArray[np.int8], scales: NDArray[np.float32], rows: NDArray[np.int64], query: NDArray[np.float32]
) -> NDArray[np.float32]:
    """The cosines of the given rows with query, summed in float64 and then rounded to float32: a row's score is
    the same whichever rows it is scored with. (BLAS's float32 sums are not: a row in a block's remainder is
    summed in another order, and its last bit may differ.) Blocks of BLOCK_BYTES of float64, like ``widened``."""
    out = np.empty(len(rows), dtype=np.float32)
    wide = query.astype(np.float64)
    step = max(1, BLOCK_BYTES // (8 * max(1, vectors.shape[1] if vectors.ndim == 2 else 0)))
    for lo in range(0, len(rows), step):
        some = rows[lo : lo + step]
        sums: NDArray[np.float64] = vectors[some].astype(np.float64) @ wide
        sums *= scales[some]
        out[lo : lo + len(some)] = sums
    return out


def fast(
    vectors: NDArray[np.int8], scales: NDArray[np.float32], query: NDArray[np.float32]
) -> tuple[NDArray[np.float32], float]:
    """Each row's cosine with query, and how far off it may be (``error``): SimSIMD's where installed, else
    ``widened``'s, exact. The query is rounded once for both."""
    library = simd
    quantized = _quantized(query) if library is not None and len(vectors) else None
    if library is None or quantized is None:
        return widened(vectors, scales, query), 0.0
    # Integer sums, exact: |sum| < 2**24 up to 1,040 dims, so float32 holds them. Not into out=: simsimd 6.5.16
    # then returns None without a reference of its own, and on Python < 3.12 every call takes one of None's:
    # the real server aborted ("deallocating None") after 12,318 searches here.
    found = library.cdist(quantized[0][None, :], vectors, metric="dot", out_dtype="float32")
    row: NDArray[np.float32] = np.asarray(found)[0]
    row *= scales
    row /= quantized[1]
    return row, _bound(query, quantized)


def error(query: NDArray[np.float32]) -> float:
    """How far ``fast`` may be from ``widened`` (0 without SimSIMD), up to float32's own rounding.

    The query is rounded to int8: |r.q - r.q8/step| <= |r| |q - q8/step| (Cauchy-Schwarz). A window's row r as
    stored is a unit vector rounded to steps of at most 1/127 (build.quantized), so |r| <= 1 + sqrt(d)/254.
    For the test model's queries: 0.007 at the median, 0.013 at most.
    """
    quantized = _quantized(query) if simd is not None else None
    return 0.0 if quantized is None else _bound(query, quantized)


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
