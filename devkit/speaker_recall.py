"""Issue 21: what a search by meaning restricted to a speaker finds, from the nearest overall or from the windows
the index says they spoke in (``Searcher.near`` with a speaker, ``plan._spoken``).

For each of the bench's relevance searches and a few speakers (the one in the fewest transcripts, the one in the
most, and one between), the nearest 10 live transcripts by what that speaker said (each as near as its best
window holding a segment of theirs with words), found three ways:

- exactly: every window of theirs scored (``scoring.exact``), each transcript's best, the 10 best;
- as a speaker's search found them before: the nearest 200 overall (what the server asks such a search for), each
  as near as its best window of theirs (``plan._theirs``), the first 10;
- as it finds them now: the index asked for the speaker's nearest 200, by the windows it lists for them only.

Prints recall@10 of the two against exact, how many searches found fewer than exact did, and the p50 time of the
index's answer both ways (the query embedded, the windows scored; now also the list read and the part of the index
it names gathered). The index must list speakers (run `magnotia-mcp index` once after an upgrade). Run by hand,
never by the tests::

    MAGNOTIA_MCP_CACHE_DIR=<the bench's index folder> python -m devkit.speaker_recall --size 10k
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import time
from bisect import bisect_left

import numpy as np

from devkit.prefilter_recall import bench_store
from magnotia_mcp.search.semantic import indexfile, nearest, scoring
from magnotia_mcp.search.semantic.chunks import SPOKEN
from magnotia_mcp.search.semantic.found import Found, Near
from magnotia_mcp.search.semantic.nearest import FLOOR
from magnotia_mcp.search.speakers import fold_label

LIMIT = 10
BEFORE = 200  # plan.NEAR * tools.search.MAX_HITS: what a speaker's search asks the index for first


def theirs(near: Near, said: dict[str, list[int]]) -> list[Found]:
    """plan._theirs: each transcript found as near as its best window holding one of the speaker's seqs."""
    kept = []
    for f in near.found:
        own = said.get(f.doc, [])
        windows = [c for c in f.windows if c.first_seq is not None and holds(c.first_seq, c.last_seq, own)]
        if windows:
            kept.append(Found(f.doc, windows[0].score, windows))
    return sorted(kept, key=lambda f: -f.score)


def holds(first: int, last: int | None, seqs: list[int]) -> bool:
    """Whether a window spanning seqs first..last holds one of seqs (ascending)."""
    at = bisect_left(seqs, first)
    assert last is not None
    return at < len(seqs) and seqs[at] <= last


def main() -> None:
    store, texts = bench_store(__doc__ or "")
    searcher = nearest.searcher(store, wait=3600)
    index = searcher.index
    if indexfile.spoken(index.path, "x", 1) is None:
        sys.exit("this index lists no speakers yet: run `magnotia-mcp index --db <store>` once, then this again")
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    segments: dict[str | None, dict[str, list[int]]] = {}
    for tid, seq, label in con.execute(
        "SELECT s.transcript_id, s.seq, CAST(s.speaker AS BLOB) FROM segments s JOIN transcripts t"
        " ON t.id = s.transcript_id WHERE t.deleted_at IS NULL AND s.speaker IS NOT NULL AND trim(s.text) <> ''"
        " ORDER BY s.transcript_id, s.seq"
    ):
        key = fold_label(bytes(label).decode("utf-8", "replace"))
        segments.setdefault(key, {}).setdefault(tid, []).append(seq)
    con.close()
    spread = sorted((len(docs), key) for key, docs in segments.items() if key is not None and len(docs) >= LIMIT)
    chosen = [spread[0], spread[len(spread) // 2], spread[-1]]
    for count, key in chosen:
        said = segments[key]
        # Every window of theirs: a spoken window of a transcript they spoke in, holding one of their seqs.
        docs = index.positions(list(said))
        rows, offsets, _ = scoring.rows_of(index.starts, index.ends, docs)
        mine = np.array(
            [
                index.kinds[r] == SPOKEN
                and indexfile.NO_SEQ not in (int(index.seqs[r][0]), int(index.seqs[r][1]))
                and holds(int(index.seqs[r][0]), int(index.seqs[r][1]), said[index.docs[d]])
                for d, r in zip(np.repeat(docs, np.diff(np.append(offsets, len(rows)))), rows, strict=True)
            ],
            dtype=bool,
        )
        owner = np.repeat(docs, np.diff(np.append(offsets, len(rows))))[mine]
        own_rows = rows[mine]
        found_before = found_now = wanted = short_before = short_now = 0
        took: dict[str, list[float]] = {"before": [], "now": []}
        for text in texts:
            query = searcher.model.embed([text])[0]
            scores = scoring.exact(index.vectors, index.scales, own_rows, query)
            best: dict[int, float] = {}
            for d, s in zip(owner.tolist(), scores.tolist(), strict=True):
                best[d] = max(best.get(d, -1.0), s)
            ranked = sorted((d for d in best if best[d] >= FLOOR), key=lambda d: (-best[d], d))[:LIMIT]
            exact = {index.docs[d] for d in ranked}
            start = time.perf_counter()
            near = searcher.near(text, BEFORE)
            took["before"].append(time.perf_counter() - start)
            before = [f.doc for f in theirs(near, said)][:LIMIT]
            start = time.perf_counter()
            listed = searcher.near(text, BEFORE, key)
            took["now"].append(time.perf_counter() - start)
            assert listed.speaker == key
            now = [f.doc for f in theirs(listed, said)][:LIMIT]
            wanted += len(exact)
            found_before += len(exact & set(before))
            found_now += len(exact & set(now))
            short_before += len(before) < len(exact)
            short_now += len(now) < len(exact)
        p50 = {way: f"{1000 * statistics.median(t):.2f}" for way, t in took.items()}
        print(
            f"speaker {key!r:16} in {count:5} transcripts; exact nearest {wanted:5};"
            f" recall@{LIMIT} before {found_before / max(1, wanted):.3f} now {found_now / max(1, wanted):.3f};"
            f" searches short of exact before {short_before}/{len(texts)} now {short_now}/{len(texts)};"
            f" the index's answer, p50: before {p50['before']} ms, now {p50['now']} ms"
        )


if __name__ == "__main__":
    main()
