"""Judged relevance of search_transcripts, reported beside the latencies.

The judged set (topic-dense transcripts with generic titles, older than many transcripts that
mention the topic once; keyword-style and question-style queries, each judged) is built twice in a
temporary directory: with the full-text index (the server searches in "fts" mode) and without it
("scan" mode). Every query goes to each server variant through the benchmark's own client
(search_transcripts, limit 10); the report gives mean reciprocal rank and recall@5 per kind of
query and per mode, with the round-trip times of those searches.
"""

from __future__ import annotations

import math
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

import generate
from client import Json, Server, ServerError, tool_result
from measure import log
from report import summary

# benchmarks/ is not a package: `python benchmarks/run.py` puts only this directory on sys.path.
# The judged set has one source of truth, devkit/relevance.py (tests/e2e judges the server
# with the same stores, queries and metrics), so the repository root goes on sys.path to import it.
if str(generate.REPO_DIR) not in sys.path:
    sys.path.insert(0, str(generate.REPO_DIR))
from devkit import relevance as judged

KINDS = judged.KINDS
MODES = judged.MODES
TARGET = judged.TARGET
WARM_UP = 3  # untimed searches first: the first calls pay for imports


def build_stores(directory: Path) -> dict[str, Path]:
    """The judged store in both modes, under directory."""
    return {mode: judged.build_store(directory / mode / "magnotia.db", fts=mode == "fts") for mode in MODES}


def judge_mode(cmd: list[str], env: dict[str, str], db: Path, mode: str, timeout: float) -> Json:
    """Every judged query against one server on one store: figures per kind, latencies, what went wrong."""
    failures: list[str] = []
    times: dict[str, list[float]] = {kind: [] for kind in KINDS}
    kind_of = {q.text: q.kind for q in judged.QUERIES}
    server = Server([*cmd, "--db", str(db)], env, timeout)

    def search(text: str, record: bool = True) -> list[str]:
        args = {"query": text, "limit": judged.SEARCH_LIMIT}
        ns, resp = server.request("tools/call", {"name": "search_transcripts", "arguments": args})
        res, err = tool_result(resp)
        if res is None:
            failures.append(f"{err} <- {text!r}")
            return []
        if res.get("mode") != mode:
            failures.append(f"searched in {res.get('mode')!r} mode, expected {mode!r} <- {text!r}")
        if record:
            times[kind_of[text]].append(ns / 1e6)
        return [str(h.get("transcript_id")) for h in res.get("hits", []) if isinstance(h, dict)]

    evaluation = None
    try:
        server.initialize()
        for q in judged.QUERIES[:WARM_UP]:
            search(q.text, record=False)
        evaluation = judged.evaluate(search)
    except ServerError as e:
        failures.append(f"server: {e}")
    finally:
        code = server.close()
        if code not in (0, None):
            failures.append(f"exit code {code}: {server.stderr_tail()!r}")
    figures = evaluation.figures() if evaluation else {}
    # A trashed transcript must never be found: that is a failed call, not a ranking figure.
    failures += [f"found a trashed transcript: {o.describe()}" for o in (evaluation.trashed() if evaluation else [])]
    return {
        "kinds": {
            kind: {
                **(figures[kind].as_json() if kind in figures else {}),
                "search_ms": summary(times[kind]),
                # The queries whose first hit is not relevant or whose top 5 miss a relevant transcript.
                "misses": [o.describe() for o in evaluation.misses(kind)] if evaluation else [],
            }
            for kind in KINDS
        },
        "failures": failures,
    }


def measure(servers: Iterable[tuple[str, list[str], dict[str, str]]], timeout: float) -> Json:
    """The relevance section of the report: for each (label, command, env), both modes."""
    with tempfile.TemporaryDirectory(prefix="magnotia-relevance-") as tmp:
        stores = build_stores(Path(tmp))
        variants = []
        for label, cmd, env in servers:
            modes = {mode: judge_mode(cmd, env, db, mode, timeout) for mode, db in stores.items()}
            variants.append({"label": label, "modes": modes})
            log(f"  [{label}] relevance · " + " · ".join(line(mode, m) for mode, m in modes.items()))
    return {
        "set": "devkit/relevance.py",
        "transcripts": len(judged.DOCUMENTS),
        "topics": len(judged.TOPICS),
        "queries": {kind: sum(1 for q in judged.QUERIES if q.kind == kind) for kind in KINDS},
        "depth": judged.DEPTH,
        "recall_at": judged.RECALL_AT,
        "target": TARGET,
        "variants": variants,
    }


def line(mode: str, m: Json) -> str:
    """One mode's figures for the log."""
    parts = [
        f"{kind} MRR {k.get('mrr', math.nan):.2f} R@5 {k.get('recall_at_5', math.nan):.2f}"
        for kind, k in m["kinds"].items()
    ]
    return f"{mode}: " + ", ".join(parts) + (f" ({len(m['failures'])} failures)" if m["failures"] else "")


def missed_targets(section: Json | None) -> list[tuple[str, str]]:
    """(server, what) for every mode and kind whose MRR or recall@5 is below the target."""
    out = []
    for v in (section or {}).get("variants", []):
        for mode, m in v["modes"].items():
            for kind, k in m["kinds"].items():
                mrr, recall = k.get("mrr", math.nan), k.get("recall_at_5", math.nan)
                if not (mrr >= TARGET and recall >= TARGET):
                    out.append(
                        (
                            v["label"],
                            f"relevance, {mode} {kind}: MRR {mrr:.3f}, recall@5 {recall:.3f} (target >= {TARGET})",
                        )
                    )
    return out


def failure_count(section: Json | None) -> int:
    return sum(len(m["failures"]) for v in (section or {}).get("variants", []) for m in v["modes"].values())
