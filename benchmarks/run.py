"""Benchmark driver for magnotia-mcp.

For each store size it builds (or reuses) a generated store, then measures the
server the way a host drives it: raw JSON lines over the child's stdin/stdout.

  spawn      fresh process -> answer to `initialize` (median and p90 of --spawn-runs)
  per tool   round-trip latency of each tools/call (p50/p90/p99) over a varied,
             seeded mix: first and deep pages (cursor chaining), filters, random
             ids and windows, common/rare/two-word/phrase/prefix/OR searches
             (by relevance), question-style searches and `sort: newest` ones;
             search figures also per kind of query (keyword, question, newest)
  scan mode  at 10k (full runs only, first server only): a sample of the same
             searches against a copy of the store without its full-text tables
             (mode "scan"; each search reads every transcript, seconds at 10k)
  relevance  the judged set of devkit/relevance.py on its own small stores,
             with and without the full-text index: MRR and recall@5 of keyword-
             and question-style queries, and those searches' round trips
  pings      pipelined `ping` requests per second (all written before any read)
  peak RSS   VmHWM of the server (and its children) before stdin is closed
  meaning    search by meaning (issue 21, meaning.py) on one store (--semantic-size, default
             10k; smoke 1k): `index` from nothing, a query's embedding, hybrid searches
             interleaved with words-only ones, RSS with the model, the judged sets by meaning
  HTTP       `serve --http` (issue 12) on one store (--http-size, default 10k), the
             first server command only: the workload's calls and single pings over
             one keep-alive connection interleaved call by call with a stdio server's,
             pings/s over --http-connections connections from a separate client
             process, peak RSS with 50 open connections, spawn -> listening line and
             -> first answered ping (see httpbench.py); smoke runs a short pass of each

With several servers (--server-cmd, --console-script, --frozen) they take turns, scenario by
scenario, spawn by spawn and round of pings by round, each first as often as the others, all
alive at once: the machine's speed drifts within a run, and a server measured after another
would carry that drift into their comparison.

The floor runs the same logical queries in-process on `sqlite3` (read-only,
straightforward and index-friendly SQL in floor.py), timed the same way and
interleaved call by call with the server, so each figure has a ratio to the
floor measured in the same run on the same warm page cache.

Outputs: a Markdown table (--out-dir/latest.md), a chart of latency vs store
size (--out-dir/latest.png, needs matplotlib) and a JSON file of raw figures
(--json). Exit status: 0 when every call succeeded, 1 when a call failed or the
server misbehaved, 3 with --fail-on-target when a target was missed.

POSIX only (select() on pipes, /proc for RSS).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import random
import shlex
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The modules next to this file: `python benchmarks/run.py` puts this directory first on sys.path.
import generate
import httpbench
import meaning
import phases
import readme
import relevance
import scan
from client import TOOLS, Json
from measure import log, run_variants
from report import chart, fmt, http_figures, markdown, targets, variant_figures
from workload import Scenario, build_workload, store_facts

MIB = 1024 * 1024
SCAN_SIZE = 10_000  # scan mode is measured on this store only: it reads every transcript per search


def server_env(cmd: list[str]) -> dict[str, str]:
    """The environment for the server; a checkout's src/ is put on PYTHONPATH when the package isn't installed."""
    env = dict(os.environ)
    src = generate.REPO_DIR / "src"
    if (
        cmd[1:3] == ["-m", "magnotia_mcp"]
        and importlib.util.find_spec("magnotia_mcp") is None
        and (src / "magnotia_mcp").is_dir()
    ):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
        log(f"magnotia_mcp is not installed: running it from {src}")
    return env


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python benchmarks/run.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n"
        "  python benchmarks/run.py                      # 1k,10k,100k; writes benchmarks/results/latest.*\n"
        "  python benchmarks/run.py --smoke              # CI: 1k store, few calls, < 60 s\n"
        "  python benchmarks/run.py --sizes 1k,10k --console-script --frozen dist/magnotia-mcp\n",
    )
    ap.add_argument("--sizes", default=None, help="store sizes in transcripts (default: 1k,10k,100k; smoke: 1k)")
    ap.add_argument(
        "--calls",
        type=int,
        default=None,
        help="about this many measured calls per tool per store (default: 300; smoke: 20)",
    )
    ap.add_argument(
        "--server-cmd",
        action="append",
        default=None,
        metavar="CMD",
        help="server command line (shell-quoted; '--db PATH' is appended). Repeatable: the servers"
        " take turns, scenario by scenario. Default: the running interpreter with '-m magnotia_mcp'",
    )
    ap.add_argument(
        "--console-script",
        action="store_true",
        help="also measure the installed console script 'magnotia-mcp' (found on PATH)",
    )
    ap.add_argument(
        "--frozen",
        action="append",
        default=[],
        metavar="PATH",
        help="also measure a frozen (PyInstaller) binary; its spawn target is 400 ms. Repeatable",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="quick CI check: 1k store, 20 calls per tool, 5 spawns, 2,000 pings; results go to"
        " the cache dir unless --out-dir is given; exits 0 unless something errors",
    )
    ap.add_argument("--spawn-runs", type=int, default=None, help="fresh processes for spawn timing (default: 20)")
    ap.add_argument("--pings", type=int, default=None, help="pings per pipelined burst, 3 bursts (default: 20000)")
    ap.add_argument("--seed", type=int, default=1, help="workload seed (default: %(default)s)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for any one answer (default: 60)")
    ap.add_argument(
        "--out-dir",
        type=Path,
        default=None,
        help="where latest.md and latest.png go (default: benchmarks/results; smoke: <cache>/smoke)",
    )
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="raw figures as JSON (default: <cache>/results/latest.json; smoke: <cache>/smoke/latest.json)",
    )
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="generated stores (default: $MAGNOTIA_BENCH_CACHE or benchmarks/.cache)",
    )
    ap.add_argument(
        "--schema",
        type=Path,
        default=None,
        help="schema for generated stores (default: src/magnotia_mcp/schema_v1.sql, else the contract)",
    )
    ap.add_argument("--no-chart", action="store_true", help="do not draw latest.png")
    ap.add_argument("--no-relevance", action="store_true", help="skip the judged relevance queries")
    ap.add_argument(
        "--no-phases", action="store_true", help="skip the in-process breakdown of searches by phase (phases.py)"
    )
    ap.add_argument(
        "--scan-calls",
        type=int,
        default=40,
        help="searches in scan mode (a copy of the 10k store without its full-text tables), full runs"
        " with a 10k store only; 0 skips them (default: %(default)s)",
    )
    ap.add_argument("--fail-on-target", action="store_true", help="exit 3 when a target is not met")
    ap.add_argument(
        "--http-size",
        default=None,
        help="the store the HTTP part runs on, one of --sizes (default: 10k if measured, else the largest"
        " of --sizes below 100k, else the smallest); 'none' skips the HTTP part",
    )
    ap.add_argument(
        "--http-connections",
        type=int,
        default=4,
        help="keep-alive connections of the pings/s client, one request in flight on each (default: %(default)s)",
    )
    ap.add_argument(
        "--http-pings",
        type=int,
        default=None,
        help="pings per pings/s burst, 3 bursts (default: 6000; smoke: 100 in 1 burst)",
    )
    ap.add_argument(
        "--semantic-size",
        default=None,
        help="the store search by meaning is measured on, one of --sizes (default: 10k if measured, else the"
        " smallest; smoke: 1k); 'none' skips it. Needs the semantic extra",
    )
    ap.add_argument(
        "--model",
        type=Path,
        default=None,
        help="the model folder for search by meaning (default: the one tokenlearn-static-model ships)",
    )
    args = ap.parse_args(argv)
    args.sizes = args.sizes or ("1k" if args.smoke else "1k,10k,100k")
    args.calls = args.calls or (20 if args.smoke else 300)
    args.spawn_runs = args.spawn_runs or (5 if args.smoke else 20)
    args.pings = args.pings or (2000 if args.smoke else 20000)
    cache = args.cache_dir or generate.cache_dir()
    args.cache_dir = cache
    args.out_dir = args.out_dir or (cache / "smoke" if args.smoke else generate.BENCH_DIR / "results")
    args.json = args.json or cache / ("smoke" if args.smoke else "results") / "latest.json"
    try:
        args.size_list = sorted({generate.parse_size(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError as e:
        ap.error(str(e))
    if min(args.calls, args.spawn_runs, args.pings) < 1:
        ap.error("--calls, --spawn-runs and --pings must be positive")
    args.http_pings = args.http_pings or (100 if args.smoke else 6000)
    args.http_store = http_store(args.http_size, args.size_list, ap)
    args.semantic_store = semantic_store(args.semantic_size, args.size_list, ap)
    return args


def _chosen_size(option: str, choice: str, sizes: list[int], ap: argparse.ArgumentParser) -> int | None:
    """A part's store size as given on the command line: one of --sizes, or 'none' (None: skipped)."""
    if choice.strip().lower() == "none":
        return None
    try:
        size = generate.parse_size(choice)
    except ValueError as e:
        ap.error(str(e))
    if size not in sizes:
        ap.error(f"{option} {choice} is not one of --sizes")
    return size


def semantic_store(choice: str | None, sizes: list[int], ap: argparse.ArgumentParser) -> int | None:
    """The store size of the part by meaning (None: skipped): indexing 100k takes a quarter of an hour."""
    if choice is not None:
        return _chosen_size("--semantic-size", choice, sizes, ap)
    return 10_000 if 10_000 in sizes else min(sizes)


def http_store(choice: str | None, sizes: list[int], ap: argparse.ArgumentParser) -> int | None:
    """The store size of the HTTP part (None: skipped)."""
    if choice is not None:
        return _chosen_size("--http-size", choice, sizes, ap)
    if 10_000 in sizes:
        return 10_000
    below = [s for s in sizes if s < 100_000]
    return max(below) if below else min(sizes)


def variants(args: argparse.Namespace) -> list[tuple[str, str, list[str]]]:
    """(label, kind, command) for each server to measure."""
    out: list[tuple[str, str, list[str]]] = []
    for c in args.server_cmd or [shlex.join([sys.executable, "-m", "magnotia_mcp"])]:
        cmd = shlex.split(c)
        label = "python -m" if cmd[1:3] == ["-m", "magnotia_mcp"] else Path(cmd[0]).name
        out.append((label, "module" if "-m" in cmd else "script", cmd))
    if args.console_script:
        exe = shutil.which("magnotia-mcp")
        if exe is None:
            raise SystemExit("--console-script: 'magnotia-mcp' is not on PATH (is the package installed?)")
        out.append(("console script", "script", [exe]))
    for f in args.frozen:
        p = Path(f).resolve()
        if not os.access(p, os.X_OK):
            raise SystemExit(f"--frozen: {p} is not an executable file")
        out.append((f"frozen {p.name}", "frozen", [str(p)]))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    servers = variants(args)
    t_start = time.perf_counter()
    report: Json = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "cpus": os.cpu_count(),
            "system": f"{platform.system()} {platform.machine()}",
        },
        "calls_per_tool": args.calls,
        "seed": args.seed,
        "smoke": args.smoke,
        "sizes": [],
    }
    for size in args.size_list:
        store = generate.ensure_store(size, schema=args.schema, directory=args.cache_dir)
        log(f"store {generate.size_label(size)}: {store.path} ({store.path.stat().st_size / MIB:,.0f} MiB)")
        rng = random.Random(f"{args.seed}:{size}")
        con = sqlite3.connect(f"file:{store.path}?mode=ro", uri=True)
        try:
            facts = store_facts(con, rng, 400)
        finally:
            con.close()
        workload = build_workload(facts, store.meta, args.calls, rng)
        entry: Json = {
            "size": size,
            "label": generate.size_label(size),
            "store": {"path": str(store.path), "bytes": store.path.stat().st_size, "counts": store.meta.get("counts")},
            "variants": [],
        }
        for vr in run_variants(servers, store, workload, args, server_env):
            label = vr.label
            fig = variant_figures(vr)
            fig["targets"] = targets(size, fig)
            entry["variants"].append(fig)
            sv = fig["tools"]
            log(
                f"  [{label}] spawn {fmt(fig['spawn_ms']['median'], 1)} ms · "
                + " · ".join(
                    f"{t} p50 {fmt(sv[t]['server'].get('p50'))}/p99 {fmt(sv[t]['server'].get('p99'))}" for t in TOOLS
                )
                + f" · pings/s {fmt(fig['pings_per_s']['median'], 0)} · RSS {fmt(fig['peak_rss_mib'], 1)} MiB"
                + f" · failures {sum(vr.failures.values())}"
            )
            if vr.fatal:
                log(f"  [{label}] FATAL: {vr.fatal}")
        if not args.no_phases:
            # In-process (phases.py): the installed package with timing wrappers, the same searches.
            log(f"store {entry['label']}: search phases, in-process")
            entry["phases"] = phases.measure_store(store, args.seed, args.calls)
        if size == args.semantic_store:
            report["semantic"] = measure_semantic_part(servers[0][2], store, workload, args)
        if size == args.http_store:
            report["http"] = measure_http_part(servers[0][2], store, workload, args, entry["label"])
        if size == SCAN_SIZE and not args.smoke and args.scan_calls > 0:
            # The first server only: a scan search takes seconds, and every server runs the same package.
            label, _, cmd = servers[0]
            fig = entry["variants"][0]
            with tempfile.TemporaryDirectory(prefix="magnotia-scan-") as tmp:
                log(f"store {generate.size_label(size)}: a copy without the full-text tables in {tmp}")
                db = scan.scan_copy(store.path, Path(tmp))
                searches = scan.scan_scenarios(workload, args.scan_calls)
                fig["scan"] = scan.run_scan(cmd, label, db, searches, server_env(cmd), args.timeout)
            fig["targets"] = targets(size, fig)
        report["sizes"].append(entry)
    if not args.no_relevance:
        log("relevance: the judged set, fts and scan stores")
        report["relevance"] = relevance.measure(
            [(label, cmd, server_env(cmd)) for label, _, cmd in servers], args.timeout
        )
    report["seconds"] = round(time.perf_counter() - t_start, 1)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    md_path = args.out_dir / "latest.md"
    md_path.write_text(markdown(report), encoding="utf-8")
    log(f"wrote {md_path}")
    if md_path.resolve() == readme.LATEST.resolve() and not args.smoke:  # a full run: the README quotes it
        readme.main([])
        log(f"wrote the figures of {readme.README.name} from it (benchmarks/readme.py)")
    if not args.no_chart:
        why = chart(report, args.out_dir / "latest.png")
        log(why or f"wrote {args.out_dir / 'latest.png'}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(_no_nan(report), indent=1, ensure_ascii=False, default=_json_default, allow_nan=False) + "\n",
        encoding="utf-8",
    )
    log(f"wrote {args.json} ({report['seconds']} s in all)")
    failed = sum(sum(v["failures"].values()) for s in report["sizes"] for v in s["variants"])
    failed += sum(len((v.get("scan") or {}).get("failures", [])) for s in report["sizes"] for v in s["variants"])
    failed += relevance.failure_count(report.get("relevance"))
    # A listing that is not the floor's (same rows, same order, as far as both read) is a wrong answer.
    failed += sum(v["list_disagreements"] for s in report["sizes"] for v in s["variants"])
    missed = [
        (s["label"], v["label"], t[0])
        for s in report["sizes"]
        for v in s["variants"]
        for t in v["targets"]
        if t[2] is False
    ]
    missed += [("judged set", label, what) for label, what in relevance.missed_targets(report.get("relevance"))]
    if report.get("semantic") and "skipped" not in report["semantic"]:
        failed += len(report["semantic"]["failures"])
        missed += [
            (report["semantic"]["store"], "by meaning", t[0]) for t in report["semantic"]["targets"] if t[2] is False
        ]
    if report.get("http"):
        failed += len(report["http"]["failures"])
        missed += [(report["http"]["store"], "HTTP", t[0]) for t in report["http"]["targets"] if t[2] is False]
    for m in missed:
        log(f"target not met: {m[0]} {m[1]}: {m[2]}")
    if failed:
        log(f"{failed} failed calls or server errors")
        return 1
    return 3 if (missed and args.fail_on_target) else 0


def measure_http_part(
    cmd: list[str], store: generate.StoreInfo, workload: list[Scenario], args: argparse.Namespace, label: str
) -> Json:
    """The HTTP part on one store (smoke: a short pass: two calls per tool, one spawn, one small burst)."""
    t0 = time.perf_counter()
    raw = httpbench.measure_http(
        cmd,
        store.path,
        smoke_sample(workload, 2) if args.smoke else workload,
        server_env(cmd),
        spawn_runs=1 if args.smoke else args.spawn_runs,
        pings=6 if args.smoke else 300,
        throughput_requests=args.http_pings,
        throughput_bursts=1 if args.smoke else 3,
        connections=args.http_connections,
        timeout=args.timeout,
        log=log,
        quick=args.smoke,
    )
    fig = http_figures(raw)
    fig["store"] = label
    fig["seconds"] = round(time.perf_counter() - t0, 1)
    t = fig["tools"]
    log(
        f"  [http] {fig['seconds']} s: "
        + " · ".join(f"{k} p50 {fmt(v['http'].get('p50'))} (stdio {fmt(v['stdio'].get('p50'))})" for k, v in t.items())
        + f" · pings/s {fmt(fig['pings_per_s']['median'], 0)}"
        + f" · RSS (50 conns) {fmt((fig.get('rss') or {}).get('peak_rss_mib'), 1)} MiB"
        + f" · ready {fmt(fig['spawn_ready_ms']['median'], 1)} ms · failures {len(fig['failures'])}"
    )
    for failure in fig["failures"][:3]:
        log(f"  [http] FAILED: {failure[:300]}")
    return fig


def measure_semantic_part(
    cmd: list[str], store: generate.StoreInfo, workload: list[Scenario], args: argparse.Namespace
) -> Json:
    """Search by meaning on one store, or why it was not measured (no extra, no model)."""
    model, why = meaning.available(args.model)
    if model is None:
        log(f"  semantic: not measured: {why}")
        return {"skipped": why}
    fig = meaning.measure(cmd, store, workload, model, server_env(cmd), args.calls, args.timeout)
    i = fig["index"]
    log(
        f"  [meaning] {fig['seconds']} s: index {i['seconds']:.1f} s ({i['windows_per_s']:,.0f} windows/s,"
        f" {i['bytes'] / 1e6:.1f} MB) · query p50 {fmt(fig['query_ms'].get('p50'))} ms · search p50 hybrid"
        f" {fmt(fig['hybrid']['search_ms'].get('p50'))} / words {fmt(fig['words']['search_ms'].get('p50'))} ms"
        f" · RSS hybrid {fmt(fig['hybrid']['peak_rss_mib'], 0)} / words {fmt(fig['words']['peak_rss_mib'], 0)} MiB"
        f" · failures {len(fig['failures'])}"
    )
    for failure in fig["failures"][:3]:
        log(f"  [meaning] FAILED: {failure[:300]}")
    return fig


def smoke_sample(workload: list[Scenario], per_tool: int) -> list[Scenario]:
    """The first few single-page scenarios of each tool, in workload order: every tool's HTTP path, briefly."""
    taken: dict[str, int] = {}
    out = []
    for sc in workload:
        if sc.pages == 1 and taken.get(sc.tool, 0) < per_tool:
            taken[sc.tool] = taken.get(sc.tool, 0) + 1
            out.append(sc)
    return out


def _no_nan(o: Any) -> Any:
    """NaN (a missing figure) as null, so that strict JSON readers accept the file."""
    if isinstance(o, float) and math.isnan(o):
        return None
    if isinstance(o, dict):
        return {k: _no_nan(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_no_nan(v) for v in o]
    return o


def _json_default(o: object) -> Any:
    if isinstance(o, Path):
        return str(o)
    raise TypeError(type(o).__name__)


if __name__ == "__main__":
    raise SystemExit(main())
