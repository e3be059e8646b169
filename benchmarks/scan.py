"""Scan mode: the search workload against a copy of a store without its full-text tables.

A store written by an app without FTS5 has no ``*_fts`` tables; the server then
reads every transcript for each search (``mode: "scan"``). The copy is made in a
temporary directory with SQLite's backup API (a consistent snapshot of the
cached store, which is only read), then its full-text tables and the triggers
that feed them are dropped through a writable connection to the copy. Only the
searches are timed, with no floor (there is no index to compare with).
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

from client import Json, Server, ServerError, tool_result
from measure import log
from report import summary
from workload import Scenario, search_group

WARM_UP = 2  # untimed searches first: the first calls pay for imports and a cold page cache


def scan_copy(store: Path, directory: Path) -> Path:
    """A copy of store under directory without transcripts_fts, segments_fts and their triggers."""
    dest = directory / "magnotia-scan.db"
    src = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    dst = sqlite3.connect(dest)
    try:
        src.backup(dst, pages=4096)
        fts = [
            name for (name,) in dst.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%fts5%'")
        ]
        triggers = [
            name
            for (name,) in dst.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND (sql LIKE '%transcripts_fts%'"
                " OR sql LIKE '%segments_fts%')"
            )
        ]
        for name in triggers:
            dst.execute(f'DROP TRIGGER "{name}"')
        for name in fts:  # dropping a virtual table drops its shadow tables
            dst.execute(f'DROP TABLE "{name}"')
        dst.commit()
        left = dst.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE '%\\_fts%' ESCAPE '\\'").fetchone()[0]
        if left:
            raise RuntimeError(f"{dest}: {left} full-text objects left after dropping {fts + triggers}")
    finally:
        dst.close()
        src.close()
    return dest


def scan_scenarios(workload: Sequence[Scenario], n: int) -> list[Scenario]:
    """About n of the workload's searches, first pages only: half keyword, a third question, the rest newest."""
    quota = {"keyword": n // 2, "question": n // 3}
    quota["newest"] = n - sum(quota.values())
    out: list[Scenario] = []
    for sc in workload:
        if sc.tool == "search_transcripts" and quota.get(search_group(sc.kind), 0) > 0:
            quota[search_group(sc.kind)] -= 1
            out.append(sc)
    return out


def run_scan(
    cmd: list[str], label: str, db: Path, scenarios: Sequence[Scenario], env: dict[str, str], timeout: float
) -> Json:
    """Every search scenario once against db (first page only): round trips per group, mode checked."""
    times: dict[str, list[float]] = {}
    ranked: dict[str, list[int]] = {}
    failures: list[str] = []
    server = Server([*cmd, "--db", str(db)], env, timeout)
    started = time.perf_counter()
    try:
        server.initialize()
        for i, sc in enumerate([*scenarios[:WARM_UP], *scenarios]):
            ns, resp = server.request("tools/call", {"name": sc.tool, "arguments": sc.args})
            res, err = tool_result(resp)
            what = json.dumps(sc.args, ensure_ascii=False)[:160]
            if res is None:
                failures.append(f"{err} <- {what}")
                continue
            if res.get("mode") != "scan":
                failures.append(f"searched in {res.get('mode')!r} mode, expected 'scan' <- {what}")
            if i < WARM_UP:
                continue
            group = search_group(sc.kind)
            times.setdefault(group, []).append(ns / 1e6)
            if isinstance(res.get("ranked_among"), int):
                ranked.setdefault(group, []).append(res["ranked_among"])
    except ServerError as e:
        failures.append(f"server: {e}")
    finally:
        code = server.close()
        if code not in (0, None):
            failures.append(f"exit code {code}: {server.stderr_tail()!r}")
    times["relevance"] = times.get("keyword", []) + times.get("question", [])
    ranked["relevance"] = ranked.get("keyword", []) + ranked.get("question", [])
    groups = {
        g: {**summary(times[g]), "ranked_among_max": max(ranked[g]) if ranked.get(g) else None}
        for g in ("keyword", "question", "relevance", "newest")
        if g in times
    }
    out: Json = {"label": label, "store": str(db), "groups": groups, "failures": failures}
    out["seconds"] = round(time.perf_counter() - started, 1)
    rel = groups["relevance"]
    log(
        f"  [{label}] scan mode: relevance p50 {rel.get('p50', math.nan):.1f} / p99 {rel.get('p99', math.nan):.1f} ms"
        f" over {rel.get('n', 0)} searches, {len(failures)} failures ({out['seconds']} s)"
    )
    return out
