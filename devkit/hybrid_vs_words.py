"""The bench's hybrid-against-words comparison, on an index already built: no `index` from nothing first.

``benchmarks/meaning.py`` (part of ``nox -s bench``) indexes the store from nothing before it compares, 6 minutes
at 100k. To compare two commits' searches, build the index once and run this against each checkout (with that
checkout's ``src`` on PYTHONPATH: the servers are ``python -m magnotia_mcp`` of the same interpreter)::

    MAGNOTIA_MCP_CACHE_DIR=DIR magnotia-mcp index --db <the bench's store> --model <model folder>
    PYTHONPATH=src python -m devkit.hybrid_vs_words --size 100k --cache-dir <the bench's store folder> --index DIR

The store is read whole first: the page cache may have dropped it since the last run (on these machines, DAMON's
reclaim does within minutes), and a search that reads the disk measures the disk. Prints each server's p50 and peak
RSS and the ratio of the p50s, as the bench does. With --speaker, each search is restricted to one of the store's
speakers; with --newest P, to the newest P% of its transcripts; with --source KIND, to that source. Run by hand,
never by the tests.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
from pathlib import Path

from devkit.prefilter_recall import BENCH, SIZES, bench_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="10k")
    parser.add_argument("--cache-dir", type=Path, default=Path("/work/benchcache"), help="the bench's store folder")
    parser.add_argument("--index", type=Path, required=True, help="a cache folder holding the store's index")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument(
        "--speaker", action="store_true", help="restrict each search to a speaker of the store (a fixed draw)"
    )
    parser.add_argument(
        "--newest", type=float, help="restrict each search to the newest PERCENT of the store's transcripts (since)"
    )
    parser.add_argument("--source", choices=["dictation", "meeting", "file"], help="restrict each search to a source")
    args = parser.parse_args()
    sys.path.insert(0, str(BENCH))  # benchmarks/ is not a package: its modules import each other by name
    from meaning import WARM_UP, interleaved  # noqa: PLC0415

    store, calls = bench_calls(SIZES[args.size], args.cache_dir, args.calls + WARM_UP, workload=args.calls)
    if args.speaker:  # the labels the most transcripts hold, as a user names the people they meet with
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        labels = [r[0] for r in con.execute("SELECT DISTINCT speaker FROM segments WHERE speaker IS NOT NULL")]
        con.close()
        draw = random.Random(21)
        calls = [{**call, "speaker": draw.choice(sorted(labels))} for call in calls]
    if args.newest is not None:  # since the created_at that many of the live transcripts are at or after
        con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        times = sorted(r[0] for r in con.execute("SELECT created_at FROM transcripts WHERE deleted_at IS NULL"))
        con.close()
        since = times[int(len(times) * (100 - args.newest) / 100)]
        calls = [{**call, "since": since} for call in calls]
    if args.source is not None:
        calls = [{**call, "source": args.source} for call in calls]
    for path in (store, *sorted((args.index / "index").glob("*.sqlite3"))):
        with path.open("rb") as whole:
            while whole.read(1 << 24):
                pass
    with tempfile.TemporaryDirectory(prefix="magnotia-words-") as empty:
        envs = {
            "hybrid": {**os.environ, "MAGNOTIA_MCP_CACHE_DIR": str(args.index)},
            "words": {**os.environ, "MAGNOTIA_MCP_CACHE_DIR": empty},
        }
        out = interleaved([sys.executable, "-m", "magnotia_mcp"], store, envs, calls, 120.0)
    p50 = {label: out[label]["search_ms"]["p50"] for label in envs}
    for label in envs:
        print(f"{label:6s} p50 {p50[label]:6.2f} ms  peak RSS {out[label]['peak_rss_mib']:.0f} MiB")
    print(f"hybrid / words: {p50['hybrid'] / p50['words']:.2f}x  failures: {out['failures'][:3]}")


if __name__ == "__main__":
    main()
