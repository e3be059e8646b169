"""How the budget's token estimate compares with real tokenizers on the server's own answers.

Runs the real server (``python -m magnotia_mcp``) on stores of every kind of text the budget meets: meetings
in English, Portuguese, Spanish, German, French, Chinese, Japanese, emoji and long numbers
(tests/support/languages.py), the demo store, and a benchmark store when given (``--bench-store``, from
benchmarks/generate.py). Each tool is called at the largest max_tokens; each answer's two copies (the text
content, and the compact JSON of structuredContent a host such as Claude Code shows instead) are counted by
the estimate and by o200k_base and the Claude tokenizer (tests/tokencount, via npm). Prints, per tool and kind,
the estimate over each tokenizer's count (1.00 = exact; above 1 = from above).

Usage: ``PYTHONPATH=src:. python devkit/token_ratios.py [--bench-store PATH] [--dump answers.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

from devkit.storefactory import StoreBuilder
from magnotia_mcp.demo import build_sample_store
from magnotia_mcp.tokencost import estimate, json_text
from tests.support import languages, tokencount

QUERIES = {
    "english": "budget",
    "portuguese": "orçamento",
    "spanish": "presupuesto",
    "german": "Budget",
    "french": "budget",
    "chinese": "预算",
    "japanese": "表",
    "emoji": "budget",
    "numbers": "2026",
}


def calls(kind: str, long_id: str | None, query: str, budget: int) -> list[tuple[str, dict[str, Any]]]:
    """The calls made on a store: every tool, lists at their largest, the long meeting whole and with segments."""
    out: list[tuple[str, dict[str, Any]]] = [
        ("list_transcripts", {"limit": 100}),
        ("list_tasks", {"limit": 100}),
        ("search_transcripts", {"query": query, "limit": 50}),
    ]
    if long_id is not None:
        out += [
            ("get_transcript", {"id": long_id, "max_chars": 100_000}),
            ("get_transcript", {"id": long_id, "max_chars": 100_000, "include_segments": True}),
        ]
    return [(tool, {**args, "max_tokens": budget}) for tool, args in out]


def answers(db: Path, todo: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each call's answer: its text content and the compact JSON of its structuredContent."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # benchmarks/ is not a package: its modules import each other by name, so its folder goes on sys.path first.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from client import Server  # noqa: PLC0415

    server = Server([sys.executable, "-m", "magnotia_mcp", "--db", str(db)], env, 60.0)
    try:
        server.initialize()
        out = []
        for tool, args in todo:
            _, response = server.request("tools/call", {"name": tool, "arguments": args})
            assert "result" in response, response
            result = response["result"]
            assert not result["isError"], result
            out.append({"tool": tool, "args": args, "text": result["content"][0]["text"]})
            out[-1]["compact"] = json_text(result["structuredContent"])
        return out
    finally:
        server.close()


def measured(budget: int, bench: Path | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in languages.KINDS:  # a store of each kind, so that its answers hold that kind alone
            b = StoreBuilder(Path(tmp) / f"{kind}.db")
            languages.build(b, (kind,))
            todo = calls(kind, languages.meeting_id(kind, 0), QUERIES[kind], budget)
            rows += [{**a, "kind": kind} for a in answers(b.close(), todo)]
        demo = build_sample_store(Path(tmp) / "demo.db")
        rows += [{**a, "kind": "demo"} for a in answers(demo, calls("demo", None, "launch", budget))]
    if bench is not None:
        with sqlite3.connect(f"file:{bench}?mode=ro", uri=True) as db:
            (long_id,) = db.execute("SELECT id FROM transcripts ORDER BY length(raw_text) DESC LIMIT 1").fetchone()
        rows += [{**a, "kind": "bench"} for a in answers(bench, calls("bench", long_id, "the", budget))]
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    texts = [r[copy] for r in rows for copy in ("text", "compact")]
    counted = iter(tokencount.counts(texts))
    head = ("kind", "tool", "copy", "est", "o200k", "claude", "e/o", "e/c", "e/max")
    print("{:<11} {:<19} {:<8} {:>6} {:>6} {:>6} {:>5} {:>5} {:>5}".format(*head))
    worst = [9.0, 0.0]
    for r in rows:
        for copy in ("text", "compact"):
            o, c = next(counted)
            e = estimate(r[copy])
            r[f"{copy}_tokens"] = [e, o, c]
            ratio = e / max(o, c)
            worst = [min(worst[0], ratio), max(worst[1], ratio)]
            tool = r["tool"] + ("+seg" if r["args"].get("include_segments") else "")
            print(
                f"{r['kind']:<11} {tool:<19} {copy:<8} {e:>6} {o:>6} {c:>6} {e / o:>5.2f} {e / c:>5.2f} {ratio:>5.2f}"
            )
    print(f"estimate / larger real count: {worst[0]:.2f} .. {worst[1]:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench-store", type=Path, default=None, help="a store from benchmarks/generate.py")
    ap.add_argument("--max-tokens", type=int, default=20_000)
    ap.add_argument("--dump", type=Path, default=None, help="write the answers and their counts here (JSON)")
    args = ap.parse_args()
    reason = tokencount.missing()
    if reason:
        print(f"cannot count: {reason}", file=sys.stderr)
        return 2
    rows = measured(args.max_tokens, args.bench_store)
    report(rows)
    if args.dump:
        args.dump.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
