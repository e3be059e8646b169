"""What scoring an edited transcript again costs a search (search.plan._fresh, nearest's ``again``), in-process.

A transcript edited since the index embedded it is cut into windows, embedded with the server's model and scored
on the search's path (a worker thread). This times that work on drawn meetings of one and ten hours (150 words a
minute, segments of 5-25 words drawn from English prose), with the server's lean model::

    python -m devkit.rescore_cost [--model DIR]

The test model (tokenlearn-static-model's) by default; ``devkit/wide_model.py`` writes a stand-in of the real
model's size. Run by hand, never by the tests.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import static_model

from magnotia_mcp.search.semantic.loaded import Loaded
from magnotia_mcp.search.semantic.model import StaticModel
from magnotia_mcp.search.semantic.nearest import Searcher

PROSE = Path(__file__).resolve().parent.parent / "docs" / "search.md"


Segments = list[tuple[int, int | None, int | None, str | None, str | None]]


def meeting(hours: int, rng: random.Random, words: list[str]) -> Segments:
    segments: Segments = []
    said = 0
    while said < 150 * 60 * hours:
        k = rng.randint(5, 25)
        seq = len(segments)
        segments.append((seq, seq * 4000, seq * 4000 + 3900, "Ana", " ".join(rng.choice(words) for _ in range(k))))
        said += k
    return segments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=Path(static_model.__file__).parent / "model")
    args = parser.parse_args()
    model = StaticModel.load(args.model, lean=True)
    words = [w for w in PROSE.read_text(encoding="utf-8").split() if w.isalpha()]
    rng = random.Random(0)
    empty = Loaded(Path("no index"), (), {"dims": str(model.dims)}, 0).done()  # only the model is used
    again = Searcher(empty, model).near("advertising spending cuts", 1).again
    for hours in (1, 10):
        segments = meeting(hours, rng, words)
        said = sum(len(str(s[4]).split()) for s in segments)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            again("doc", ("A meeting", "", segments))
            times.append(time.perf_counter() - started)
        best = min(times)
        shown = f"{best * 1000:.0f} ms ({best / said * 1e6:.1f} us a word)"
        print(f"{hours:2d} h: {said:,} words, {len(segments):,} segments: {shown}")


if __name__ == "__main__":
    main()
