"""What scoring every window costs per row, and why a second core helps: SimSIMD is bound by the core, not memory.

Times SimSIMD's int8 dot product (``cdist``, as ``scoring`` calls it) over as many rows as the 100k store's index
holds (4.1M rows of 64 dims by default), the rows streamed from memory, or the same count scored from a set that
fits in L3 or in L2; then what fewer bytes a row would save (a Hamming distance over 8 bytes, a dot product over 16
dims), SimSIMD's own threads, ``scoring.best`` with one share and with ``scoring.PARTS``, and the memory's read
speed (a reduction over the rows as 64-bit words)::

    python -m devkit.scan_cost [--rows 4130846] [--dims 64]

The rows are seeded random int8: the cost does not depend on their values. Run by hand, never by the tests.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import simsimd
from numpy.typing import NDArray

from magnotia_mcp.search.semantic import scoring

ROUNDS = 3


def _ms(work: Callable[[], object]) -> float:
    """The median of ROUNDS timings of work, in milliseconds, after one untimed call."""
    work()
    spent = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        work()
        spent.append((time.perf_counter() - started) * 1e3)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_130_846, help="rows to score (default: the 100k store's)")
    parser.add_argument("--dims", type=int, default=64, help="dimensions (the test model's 64; the real one's 256)")
    args = parser.parse_args()
    draw = np.random.default_rng(0)
    rows = draw.integers(-127, 128, size=(args.rows, args.dims), dtype=np.int8)
    query = draw.integers(-127, 128, size=(1, args.dims), dtype=np.int8)
    block = scoring.ROWS

    def scan(of: NDArray[np.int8], times: int = 1, threads: int = 1) -> None:
        for _ in range(times):
            for lo in range(0, len(of), block):
                part = of[lo : lo + block]
                simsimd.cdist(query[:, : of.shape[1]], part, metric="dot", out_dtype="float32", threads=threads)

    def over(count: int) -> tuple[NDArray[np.int8], int]:
        """count rows of the set (a multiple of a block), and how many passes over it make args.rows."""
        return rows[:count], max(1, args.rows // count)

    l3, l3_times = over(4 * block)
    l2, l2_times = over(block // 4)
    narrow = rows[:, :16].copy()
    bits = np.packbits(rows > 0, axis=1)
    signs = np.packbits(query > 0, axis=1)

    def hamming() -> None:
        for lo in range(0, len(bits), block):
            simsimd.cdist(signs, bits[lo : lo + block], metric="hamming", dtype="bin8", out_dtype="float32")

    starts = np.arange(0, args.rows, 42, dtype=np.int64)  # the 100k store's 42 windows a transcript
    scales = np.ones(args.rows, dtype=np.float32)
    unit = query[0].astype(np.float32)
    parts = scoring.PARTS
    figures = {
        f"streamed from memory ({rows.nbytes / 1e6:.0f} MB)": _ms(lambda: scan(rows)),
        f"from {l3.nbytes >> 20} MiB (fits in L3)": _ms(lambda: scan(l3, l3_times)),
        f"from {l2.nbytes >> 10} KiB (fits in L2)": _ms(lambda: scan(l2, l2_times)),
        "a dot product over 16 dims a row": _ms(lambda: scan(narrow)),
        "Hamming over 8 bytes a row": _ms(hamming),
        "SimSIMD's own threads=2": _ms(lambda: scan(rows, threads=2)),
    }
    scoring.PARTS = 1
    figures["scoring.best, one thread"] = _ms(lambda: scoring.best(rows, scales, starts, unit))
    scoring.PARTS = parts
    figures[f"scoring.best, {parts} shares (scoring.PARTS)"] = _ms(lambda: scoring.best(rows, scales, starts, unit))
    words = rows.view(np.uint64).ravel()
    read = _ms(lambda: np.bitwise_or.reduce(words))
    print(f"{args.rows:,} rows of {args.dims} int8; median of {ROUNDS}, ms for all the rows:")
    for name, ms in figures.items():
        print(f"  {name:44s} {ms:8.2f}  ({ms * 1e6 / args.rows:.2f} ns a row)")
    print(f"  {'reading the rows from memory, one core':44s} {read:8.2f}  ({rows.nbytes / read / 1e6:.1f} GB/s)")


if __name__ == "__main__":
    main()
