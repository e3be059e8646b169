"""What the index's part of a hybrid search costs, in-process: ``Searcher.near`` and its parts, on the bench's store.

For each of the bench's relevance searches (its first-page searches by relevance, as benchmarks/meaning.py sends
them), the index is asked for 4 transcripts a hit, as the server asks, and the CITED chunks of the first page's
hits are picked. Three rounds; p50, p90 and the mean of the whole and of each part (``scoring.best``, the scan of
every window; ``nearest._settle``, the exact rescoring; ``nearest._top``), in milliseconds::

    python benchmarks/run.py --sizes 10k --no-phases --http-size none --cache-dir DIR  # the store
    MAGNOTIA_MCP_CACHE_DIR=<a cache folder holding its index> python -m devkit.near_cost --size 10k --cache-dir DIR

Run by hand, never by the tests.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from devkit.prefilter_recall import bench_searches
from magnotia_mcp.search.semantic import nearest, scoring

ROUNDS = 3
PAGE = 10  # the bench's relevance searches ask for the default page


def _timed(times: dict[str, list[float]], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            times[name].append((time.perf_counter() - started) * 1e3)

    return timed


def main() -> None:
    found, texts = bench_searches(__doc__.splitlines()[0])
    times: dict[str, list[float]] = defaultdict(list)
    scoring.best = _timed(times, "scoring.best", scoring.best)
    nearest._settle = _timed(times, "nearest._settle", nearest._settle)
    nearest._top = _timed(times, "nearest._top", nearest._top)
    found.near(texts[0], 4 * PAGE)  # the first search pays for what is loaded lazily
    times.clear()
    for _ in range(ROUNDS):
        for text in texts:
            started = time.perf_counter()
            for hit in found.near(text, 4 * PAGE).found[:PAGE]:
                assert hit.chunks is not None
            times["near, and a page's chunks"].append((time.perf_counter() - started) * 1e3)
    windows = len(found.index.vectors)
    print(f"{windows:,} windows of {found.index.dims} dims; {len(texts)} searches x {ROUNDS} rounds; ms")
    for name, spent in times.items():
        cut = statistics.quantiles(spent, n=10)
        print(
            f"  {name:28s} p50 {statistics.median(spent):7.3f}  p90 {cut[-1]:7.3f}  mean {statistics.fmean(spent):7.3f}"
        )


if __name__ == "__main__":
    main()
