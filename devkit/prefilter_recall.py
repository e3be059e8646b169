"""Issue 21, measured and not kept: scoring a prefix of principal components first, then the nearest exactly.

The idea: rotate every window's vector onto the principal axes of the index's windows (a rotation keeps every dot
product), score only the first H axes of every window (a quarter of the bytes at H = 16 of 64), keep the C
transcripts whose best window scores highest on them, and score those exactly. It would make 100k transcripts
cheap to score, and would let the full vectors stay on disk. It works only if the prefix keeps the nearest
transcripts among the C; this script measures whether it does, on the bench's store and its relevance searches::

    python benchmarks/run.py --sizes 10k --no-phases --http-size none --cache-dir /work/benchcache  # store, index
    MAGNOTIA_MCP_CACHE_DIR=<the bench's index folder> python -m devkit.prefilter_recall --size 10k

For each H and C it prints recall@10 and recall@40 (the share of the exact nearest 10 and 40 transcripts above
FLOOR that are among the C) and top-1 (the exact nearest among them), with and without centring the vectors before
the rotation (the mean direction is the same for every window: it ranks nothing). Run by hand, never by the tests.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from magnotia_mcp.search.semantic import nearest, scoring

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}


def bench_calls(size: int, cache: Path, count: int, workload: int = 100) -> tuple[Path, list[dict[str, Any]]]:
    """The bench's store of this size and the arguments of its first count relevance searches (benchmarks/meaning.py's),
    drawn from a workload of that many calls, with the bench's seed."""
    # benchmarks/ is not a package: its modules import each other by name, so its folder goes on sys.path first.
    sys.path.insert(0, str(BENCH))
    import generate  # noqa: PLC0415
    from meaning import searches  # noqa: PLC0415
    from workload import build_workload, store_facts  # noqa: PLC0415

    store = generate.ensure_store(size, directory=cache)
    rng = random.Random(f"1:{size}")
    con = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)
    facts = store_facts(con, rng, 400)
    con.close()
    return Path(store.path), searches(build_workload(facts, store.meta, workload, rng), count)


def queries(size: int, cache: Path, count: int) -> tuple[Path, list[str]]:
    """The bench's store of this size and the texts of its relevance searches."""
    store, calls = bench_calls(size, cache, count)
    return store, [str(call["query"]) for call in calls]


def axes(
    rows: NDArray[np.float32], centred: bool
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float64]]:
    """The mean (zeros unless centred), the principal axes as columns, largest first, and their shares of energy."""
    mean = rows.mean(axis=0) if centred else np.zeros(rows.shape[1], dtype=np.float32)
    moved = rows - mean
    energy, vectors = np.linalg.eigh(moved.T @ moved / len(moved))
    order = np.argsort(-energy)
    return mean.astype(np.float32), vectors[:, order].astype(np.float32), np.cumsum(energy[order]) / energy.sum()


def bench_store(description: str) -> tuple[Path, list[str]]:
    """From the command line (--size, --cache-dir, --queries): the bench's store and the texts of its relevance
    searches."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=sorted(SIZES), default="10k")
    parser.add_argument("--cache-dir", type=Path, default=Path("/work/benchcache"), help="the bench's store folder")
    parser.add_argument("--queries", type=int, default=103)
    args = parser.parse_args()
    return queries(SIZES[args.size], args.cache_dir, args.queries)


def bench_searches(description: str) -> tuple[nearest.Searcher, list[str]]:
    """``bench_store``'s store's index and model, loaded, and the texts of its relevance searches. Shared by the
    devkit scripts that measure the index on the bench's store."""
    store, texts = bench_store(description)
    return nearest.searcher(store, wait=3600), texts


def main() -> None:
    found, texts = bench_searches(__doc__.splitlines()[0])
    index = found.index
    scale = index.scales[:, None]
    scoring.simd = None  # numpy's scores, exact up to float32, as the reference the prefixes are judged by
    exact = [scoring.best(index.vectors, index.scales, index.starts, found.model.embed([t])[0])[0] for t in texts]
    query_rows = [found.model.embed([t])[0] for t in texts]
    sample = np.sort(
        np.random.default_rng(0).choice(len(index.vectors), min(50_000, len(index.vectors)), replace=False)
    )
    print(f"{len(index.vectors):,} windows of {index.dims} dims, {len(index.docs):,} transcripts, {len(texts)} queries")
    for centred in (False, True):
        mean, rotation, shares = axes(index.vectors[sample].astype(np.float32) * scale[sample], centred)
        shown = ", ".join(f"{h}: {shares[h - 1]:.3f}" for h in (8, 16, 24, 32) if h < index.dims)
        print(f"\n{'centred' if centred else 'not centred'}; energy in the first axes: {shown}")
        for head in (h for h in (8, 16, 24, 32) if h < index.dims):
            prefix = np.empty((len(index.vectors), head), dtype=np.float32)
            for lo in range(0, len(index.vectors), 65_536):
                rows = index.vectors[lo : lo + 65_536].astype(np.float32) * scale[lo : lo + 65_536]
                prefix[lo : lo + 65_536] = (rows - mean) @ rotation[:, :head]
            for keep in (64, 128, 256):
                tens: list[float] = []
                forties: list[float] = []
                firsts: list[bool] = []
                for query, best in zip(query_rows, exact, strict=True):
                    approx = np.maximum.reduceat(prefix @ (query @ rotation[:, :head]), index.starts)
                    kept = set(np.argpartition(-approx, keep)[:keep].tolist())
                    ranked = [int(d) for d in np.argsort(-best, kind="stable") if best[d] >= nearest.FLOOR]
                    for k, into in ((10, tens), (40, forties)):
                        if ranked[:k]:
                            into.append(sum(d in kept for d in ranked[:k]) / len(ranked[:k]))
                    if ranked:
                        firsts.append(ranked[0] in kept)
                print(
                    f"H {head:2d} C {keep:3d}: recall@10 {np.mean(tens):.3f}  recall@40 {np.mean(forties):.3f}  "
                    f"top-1 {np.mean(firsts):.3f}  ({len(firsts)} queries with a match)"
                )


if __name__ == "__main__":
    main()
