"""Issue 21: what a search by meaning with a time or source filter finds, the nearest overall filtered or the
nearest among what passes (``plan._within``).

For each of the bench's relevance searches and each filter (the newest 1%, 5% and 20% of the store by created_at,
and one source), the nearest 10 live transcripts that pass it, found three ways:

- exactly: every window scored (``scoring.exact``), each transcript's best, the 10 best of those that pass;
- as a filtered search found them before: the nearest 200 overall (what the server asks a filtered search for),
  those that pass, the first 10;
- as it finds them now: with a time filter, the index asked for the nearest 200 among the transcripts it says
  were created then (``Searcher.near`` with since); with a source, when the nearest 200 overall leave fewer than
  10, ``Near.among`` over the ids that pass, asked for 40.

Prints recall@10 of the two against exact (the share of the exact nearest found), how many searches found fewer
than exact did, and the p50 time of the index's answers: the first ask before and now, and the among call when
made. Run by hand, never by the tests::

    MAGNOTIA_MCP_CACHE_DIR=<the bench's index folder> python -m devkit.filtered_recall --size 10k
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from pathlib import Path

import numpy as np

from devkit.prefilter_recall import bench_store
from magnotia_mcp.search.semantic import nearest, scoring
from magnotia_mcp.search.semantic.nearest import FLOOR

LIMIT = 10
BEFORE = 200  # plan.NEAR * tools.search.MAX_HITS: what a filtered search asks the index for first


def _filters(store: Path) -> list[tuple[str, str, tuple[str, ...]]]:  # (name, SQL, parameters)
    """(name, SQL condition, its parameters) for each filter measured."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    times = sorted(r[0] for r in con.execute("SELECT created_at FROM transcripts WHERE deleted_at IS NULL"))
    sources = con.execute("SELECT source, count(*) FROM transcripts GROUP BY source ORDER BY 2").fetchall()
    con.close()
    out: list[tuple[str, str, tuple[str, ...]]] = [
        (f"newest {p}%", "created_at >= ?", (times[len(times) * (100 - p) // 100],)) for p in (1, 5, 20)
    ]
    rarest = sources[0][0]
    out.append((f"source={rarest} ({100 * sources[0][1] // len(times)}%)", "source = ?", (rarest,)))
    return out


def main() -> None:
    store, texts = bench_store(__doc__ or "")
    searcher = nearest.searcher(store, wait=3600)
    index = searcher.index
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    every = np.arange(len(index.vectors), dtype=np.int64)
    for name, condition, params in _filters(store):
        ids = [
            r[0] for r in con.execute(f"SELECT id FROM transcripts WHERE deleted_at IS NULL AND {condition}", params)
        ]
        passing = index.positions(ids)
        mask = np.zeros(len(index.docs), dtype=bool)
        mask[passing] = True
        found_before = found_now = wanted = 0
        short_before = short_now = asked_again = 0
        took: dict[str, list[float]] = {"before": [], "now": [], "among": []}
        since = params[0] if condition.startswith("created_at") else None
        for text in texts:
            query = searcher.model.embed([text])[0]
            scores = scoring.exact(index.vectors, index.scales, every, query)
            best = np.maximum.reduceat(scores, index.starts)
            best[~mask] = -np.inf
            order = np.argsort(-best, kind="stable")[:LIMIT]
            exact = {index.docs[k] for k in order if best[k] >= FLOOR}
            start = time.perf_counter()
            near = searcher.near(text, BEFORE)
            took["before"].append(time.perf_counter() - start)
            before = [f.doc for f in near.found if mask[index.positions([f.doc])].all()][:LIMIT]
            start = time.perf_counter()
            first = searcher.near(text, BEFORE, None, (since, None, None)) if since is not None else near
            took["now"].append(time.perf_counter() - start if since is not None else took["before"][-1])
            now = [f.doc for f in first.found if mask[index.positions([f.doc])].all()][:LIMIT]
            if len(now) < LIMIT and first.more and first.among is not None:
                asked_again += 1
                start = time.perf_counter()
                again = first.among(ids, 4 * LIMIT)
                took["among"].append(time.perf_counter() - start)
                now = [f.doc for f in again.found][:LIMIT]
            wanted += len(exact)
            found_before += len(exact & set(before))
            found_now += len(exact & set(now))
            short_before += len(before) < len(exact)
            short_now += len(now) < len(exact)
        p50 = {way: f"{1000 * statistics.median(t):.2f}" if t else "-" for way, t in took.items()}
        print(
            f"{name:24} {len(ids):6} pass; exact nearest {wanted:5};"
            f" recall@{LIMIT} before {found_before / max(1, wanted):.3f} now {found_now / max(1, wanted):.3f};"
            f" searches short of exact before {short_before}/{len(texts)} now {short_now}/{len(texts)};"
            f" first ask p50 before {p50['before']} ms, now {p50['now']} ms; asked again {asked_again},"
            f" p50 {p50['among']} ms"
        )
    con.close()


if __name__ == "__main__":
    main()
