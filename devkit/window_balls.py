"""Issue 21, measured and not kept: skip the windows a ball around them says cannot reach the nearest.

Cut each transcript's windows into groups of g consecutive ones, keep each group's centre c and radius r (its
farthest window from c). No window of a group scores more than q.c + |q| r, so a group whose bound is under the
40th best transcript's score (the nearest a page of 10 asks for) need not be scored, and the scan stays exact. It
pays only if most groups' bounds fall under that score; this prints, on the bench's store and its relevance
searches, the share of rows the bound would leave to score::

    MAGNOTIA_MCP_CACHE_DIR=<the bench's index folder> python -m devkit.window_balls --size 10k

Run by hand, never by the tests.
"""

from __future__ import annotations

import numpy as np

from devkit.prefilter_recall import bench_searches
from magnotia_mcp.search.semantic import nearest, scoring

NEAREST = 40


def main() -> None:
    found, texts = bench_searches(__doc__.splitlines()[0])
    index = found.index
    rows = index.vectors.astype(np.float32) * index.scales[:, None]
    count = len(rows)
    ends = np.append(index.starts[1:], count)
    queries = [found.model.embed([t])[0] for t in texts]
    for size in (4, 8, 16, 32):
        firsts = np.concatenate([np.arange(lo, hi, size) for lo, hi in zip(index.starts, ends, strict=True)])
        sizes = np.diff(np.append(firsts, count))
        centres = np.add.reduceat(rows, firsts) / sizes[:, None]
        owner = np.repeat(np.arange(len(firsts)), sizes)
        radii = np.zeros(len(firsts), dtype=np.float32)
        np.maximum.at(radii, owner, np.linalg.norm(rows - centres[owner], axis=1))
        left = []
        for query in queries:
            best = scoring.best(index.vectors, index.scales, index.starts, query)[0]
            k = min(NEAREST, len(best))
            bar = max(float(np.partition(best, -k)[-k]), nearest.FLOOR)
            bounds = centres @ query + float(np.linalg.norm(query)) * radii
            left.append(float(sizes[bounds >= bar].sum()) / count)
        print(
            f"groups of {size:2d}: median radius {np.median(radii):.3f}; rows left to score "
            f"p50 {np.median(left):.1%}, p90 {np.quantile(left, 0.9):.1%}"
        )


if __name__ == "__main__":
    main()
