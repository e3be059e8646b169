"""Where a search's time goes: parse, plan, SQL, liveness, shaping and encoding, call by call, in-process.

    python benchmarks/phases.py --sizes 1k --cache-dir /work/benchcache      # the package installed
    PYTHONPATH=src python benchmarks/phases.py --sizes 1k,10k --json out.json  # this checkout's src/

Each search goes through the real ``search_transcripts`` tool (argument checks, the store's
reader pool, the search plans, the hits, the token budget) and its answer is encoded as the
stdio transport sends it, on the same generated stores and the same query mix as ``run.py``
(``workload.py``, same seed), plus speaker searches (the workload has none). The clock runs
in wrappers installed here around the package's functions, so the server itself carries no
timing code and pays nothing when not measured; the wrappers cost a few microseconds a call,
counted in the totals.

Phases (milliseconds, wall clock on the event loop):

* parse: the query language (``querylang.parse``);
* SQL: statements that read the index (or the scan) to find and rank matches;
* liveness: statements that read ``transcripts`` rows to drop those in the trash (``deleted_at``;
  a statement that also finds matches counts here when it reads the rows: the row read is its cost);
* plan: the rest of ``search_transcripts`` before the hits are shaped: choosing the plan, compiling
  the matcher, ordering the candidates (Python);
* shaping: the hits (``search.hits.shape``): reading their texts and segments, snippets, moments,
  matched terms; ``shaping SQL`` is its part spent in statements;
* encoding: the token budget (``fit_page``), the text content and the JSON line;
* other: the rest of the call (argument checks, lending a reader).

Every scenario runs once untimed first (warm page cache and the package's caches, as in a
running server), then once timed. The floor (``floor.py``) of each search runs next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import generate
from client import Json
from floor import Floor
from report import phase_table
from workload import Scenario, build_workload, search_group, store_facts

try:
    import magnotia_mcp  # noqa: F401
except ImportError:  # a checkout without the package installed: use its src/
    sys.path.insert(0, str(generate.REPO_DIR / "src"))

from magnotia_mcp.protocol import jsonrpc
from magnotia_mcp.search import hits as search_hits
from magnotia_mcp.search import plan as search_plan
from magnotia_mcp.search import querylang
from magnotia_mcp.store.pool import Store
from magnotia_mcp.store.reader import Reader
from magnotia_mcp.tools import base as tool_base
from magnotia_mcp.tools import search as search_tool
from magnotia_mcp.tools.base import ToolContext
from magnotia_mcp.tools.search import SEARCH_TRANSCRIPTS

PHASES = ("parse", "plan", "sql", "liveness", "shaping", "shaping_sql", "encoding", "other")
GROUPS = ("keyword", "question", "newest", "filtered", "speaker")
REVISION = "2025-06-18"  # structuredContent: the answer is sent twice, as most hosts get it


class Clock:
    """Phase totals of the call being measured; wrappers add to them."""

    def __init__(self) -> None:
        self.t: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.in_shape = False
        self.cpu = 0.0  # the last call's CPU time (ms, every thread of this process)

    def add(self, phase: str, seconds: float) -> None:
        self.t[phase] += seconds * 1000


CLOCK = Clock()


def _is_liveness(sql: str) -> bool:
    return "deleted_at" in sql


def install() -> None:
    """Wrap the package's functions with the clock (this process only)."""
    parse = querylang.parse

    def timed_parse(text: str) -> querylang.Query:
        t0 = time.perf_counter()
        try:
            return parse(text)
        finally:
            CLOCK.add("parse", time.perf_counter() - t0)

    _patch(querylang, "parse", timed_parse)

    reader_all = Reader.all

    async def timed_all(self: Reader, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        t0 = time.perf_counter()
        try:
            return await reader_all(self, sql, params)
        finally:
            dt = time.perf_counter() - t0
            if CLOCK.in_shape:
                CLOCK.add("shaping_sql", dt)
            else:
                CLOCK.add("liveness" if _is_liveness(sql) else "sql", dt)

    _patch(Reader, "all", timed_all)

    shape = search_hits.shape

    async def timed_shape(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        t0 = time.perf_counter()
        CLOCK.in_shape = True
        try:
            return await shape(*args, **kwargs)
        finally:
            CLOCK.in_shape = False
            CLOCK.add("shaping", time.perf_counter() - t0)

    _patch(search_hits, "shape", timed_shape)

    # The tool calls search_page where there is one (search_transcripts calls it too).
    name = "search_page" if hasattr(search_plan, "search_page") else "search_transcripts"
    search = getattr(search_plan, name)

    async def timed_search(*args: Any, **kwargs: Any) -> Any:
        before = dict(CLOCK.t)
        t0 = time.perf_counter()
        try:
            return await search(*args, **kwargs)
        finally:
            spent = (time.perf_counter() - t0) * 1000
            inner = sum(CLOCK.t[p] - before[p] for p in ("sql", "liveness", "shaping", "parse"))
            CLOCK.t["plan"] += spent - inner

    _patch(search_plan, name, timed_search)

    def timed(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                CLOCK.add(name, time.perf_counter() - t0)

        return call

    for module, name in ((search_tool, "fit_page"), (tool_base, "result_text")):
        _patch(module, name, timed("encoding", getattr(module, name)))


def _patch(owner: object, name: str, wrapper: object) -> None:
    """Replace owner.name (a module's function, or a class's method) with wrapper, in this process."""
    setattr(owner, name, wrapper)


def speaker_scenarios(meta: Json, rng: random.Random, n: int) -> list[Scenario]:
    """Searches restricted to one speaker: a common or mid word said by a speaker of the generated stores."""
    words = meta["common_words"][2:] + meta["mid_words"]
    return [
        Scenario(
            "search_transcripts", "speaker", {"query": rng.choice(words), "speaker": rng.choice(generate.SPEAKERS_POOL)}
        )
        for _ in range(n)
    ]


def phase_group(s: Scenario) -> str:
    if s.kind == "speaker":
        return "speaker"
    if s.kind in ("filtered", "newest-filtered"):
        return "filtered"
    return search_group(s.kind)


def searches(store: generate.StoreInfo, seed: int, calls: int) -> list[Scenario]:
    """run.py's search scenarios for this store (same seed, same draw), then speaker searches."""
    rng = random.Random(f"{seed}:{store.size}")
    con = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)
    try:
        facts = store_facts(con, rng, 400)
    finally:
        con.close()
    work = build_workload(facts, store.meta, calls, rng)
    out = [s for s in work if s.tool == "search_transcripts" and search_group(s.kind) != "workshop"]
    return out + speaker_scenarios(store.meta, random.Random(f"{seed}:{store.size}:speaker"), max(10, calls // 5))


async def one(store: Store, args: Json) -> tuple[float, dict[str, float], Json]:
    """One timed search: total ms, the phases, and the structured answer."""
    CLOCK.t = dict.fromkeys(PHASES, 0.0)
    c0 = time.process_time()
    t0 = time.perf_counter()
    result = await SEARCH_TRANSCRIPTS.call(ToolContext(store), dict(args), REVISION, 60.0)
    t1 = time.perf_counter()
    jsonrpc.encode({"jsonrpc": "2.0", "id": 1, "result": result})
    t2 = time.perf_counter()
    CLOCK.add("encoding", t2 - t1)
    CLOCK.cpu = (time.process_time() - c0) * 1000
    total = (t2 - t0) * 1000
    phases = dict(CLOCK.t)
    counted = sum(phases[p] for p in ("parse", "plan", "sql", "liveness", "shaping", "encoding"))
    phases["other"] = max(0.0, total - counted)
    return total, phases, result.get("structuredContent", {})


def _floor(floor: Floor, args: Json) -> float:
    if "speaker" in args:
        return float("nan")
    floor.prepare("search_transcripts", args)
    t0 = time.perf_counter()
    floor.search_transcripts(args, None)
    return (time.perf_counter() - t0) * 1000


Sample = tuple[float, dict[str, float], float, float]  # total ms, phases, floor ms, CPU ms


async def measure(store_info: generate.StoreInfo, scenarios: Sequence[Scenario], repeat: int = 1) -> Json:
    """Per group: call counts, p50/p99 of totals and floors, and the median and mean of each phase.

    With repeat > 1 every call runs that many times (passes over the whole list) and keeps its
    fastest run (and the floor its fastest): on a machine shared with other work, the
    comparison between two versions of the package is then about them, not about the load.
    """
    store = Store(store_info.path)
    floor = Floor(store_info.path)
    best: list[Sample | None] = [None] * len(scenarios)
    try:
        for s in scenarios:  # untimed: warm caches
            await one(store, s.args)
        for _ in range(repeat):
            for k, s in enumerate(scenarios):
                total, phases, _ = await one(store, s.args)
                sample = (total, phases, _floor(floor, s.args), CLOCK.cpu)
                kept = best[k]
                if kept is None:
                    best[k] = sample
                else:
                    fastest = sample if sample[0] < kept[0] else kept
                    best[k] = (*fastest[:2], min(sample[2], kept[2]), min(sample[3], kept[3]))
    finally:
        floor.close()
        await store.close()
    samples: dict[str, list[Sample]] = {g: [] for g in GROUPS}
    for s, b in zip(scenarios, best, strict=True):
        if b is not None:
            samples[phase_group(s)].append(b)
    out: Json = {}
    for g, rows in samples.items():
        if not rows:
            continue
        totals = sorted(r[0] for r in rows)
        floors = sorted(r[2] for r in rows if r[2] == r[2])
        out[g] = {
            "calls": len(rows),
            "p50": _pct(totals, 50),
            "p99": _pct(totals, 99),
            "floor_p50": _pct(floors, 50) if floors else None,
            "floor_p99": _pct(floors, 99) if floors else None,
            # CPU time: what the call costs, less bent than wall time by other work on the machine.
            "cpu_p50": _pct(sorted(r[3] for r in rows), 50),
            "cpu_p99": _pct(sorted(r[3] for r in rows), 99),
            "median": {p: statistics.median(r[1][p] for r in rows) for p in PHASES},
            "mean": {p: statistics.fmean(r[1][p] for r in rows) for p in PHASES},
        }
    return out


def _pct(values: Sequence[float], p: float) -> float:
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


_INSTALLED: list[bool] = []


def measure_store(store: generate.StoreInfo, seed: int, calls: int, repeat: int = 1) -> Json:
    """The phase figures of one store, by group (what run.py keeps per size)."""
    if not _INSTALLED:
        install()
        _INSTALLED.append(True)
    return asyncio.run(measure(store, searches(store, seed, calls), repeat))


def run(sizes: Sequence[int], cache_dir: Path | None, seed: int, calls: int, repeat: int) -> Json:
    """The phase figures per store size label."""
    return {
        generate.size_label(size): measure_store(generate.ensure_store(size, directory=cache_dir), seed, calls, repeat)
        for size in sizes
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1k,10k,100k", help="store sizes (default: %(default)s)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="where generated stores are cached")
    ap.add_argument("--calls", type=int, default=300, help="calls per tool, as run.py's --calls (default: 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each call, its fastest kept (default: %(default)s)")
    ap.add_argument("--json", type=Path, default=None, help="write the figures here as JSON")
    args = ap.parse_args(argv)
    sizes = [generate.parse_size(s) for s in args.sizes.split(",")]
    figures = run(sizes, args.cache_dir, args.seed, args.calls, max(1, args.repeat))
    print("\n".join(phase_table(figures)))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
