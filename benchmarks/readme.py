#!/usr/bin/env python3
"""The README's benchmark figures, written from the latest full run (benchmarks/results/latest.md).

Every figure README.md gives for start-up, sizes and latencies sits between a pair of markers,
``<!-- bench:NAME -->`` and ``<!-- /bench:NAME -->``, and is written here from the tables of
latest.md, never by hand: ``run.py`` rewrites the blocks after a full run, and
``tests/unit/test_readme_figures.py`` fails when a block differs from what latest.md gives.

    python benchmarks/readme.py          # rewrite README.md's blocks from benchmarks/results/latest.md
    python benchmarks/readme.py --check  # exit 1 if they differ
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LATEST = ROOT / "benchmarks" / "results" / "latest.md"
README = ROOT / "README.md"

Row = dict[str, str]


def tables(markdown: str) -> Iterator[tuple[list[str], list[Row]]]:
    """Each table of markdown: its header's cells and its rows, cell by header."""
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header = _cells(lines[i])
            rows: list[Row] = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, _cells(lines[i]), strict=False)))
                i += 1
            yield header, rows
        else:
            i += 1


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(markdown: str, first: str, *columns: str) -> list[Row]:
    """The rows of the first table whose header starts with first and has every one of columns."""
    for header, rows in tables(markdown):
        if header[0] == first and all(c in header for c in columns):
            return rows
    return []


class Figures:
    """What latest.md says, looked up the way the README quotes it."""

    def __init__(self, markdown: str) -> None:
        self.date = markdown.split("\n\n", 2)[1].split(" · ", maxsplit=1)[0].strip() if "\n\n" in markdown else "?"
        self.process = _table(markdown, "store", "spawn→init median / p90 ms")
        self.tools = _table(markdown, "store", "tool", "floor p50")
        self.searches = _table(markdown, "store", "mode", "kind", "floor p90")
        self.scan = _table(markdown, "store", "mode", "kind", "max")
        self.http = _table(markdown, "tool", "HTTP − stdio p50")
        self.http_pings = _table(markdown, "connections", "pings/s")
        sizes = list(dict.fromkeys(r["store"] for r in self.process))
        self.size = sizes[-1] if sizes else "?"  # the largest store measured
        servers = [r["server"] for r in self.process if r["store"] == self.size]
        self.server = "console script" if "console script" in servers else (servers[0] if servers else "?")

    def process_row(self, server: str, size: str | None = None) -> Row | None:
        size = size or self.size
        return next((r for r in self.process if r["store"] == size and r["server"] == server), None)

    def frozen(self) -> Row | None:
        return next((r for r in self.process if r["store"] == self.size and r["server"].startswith("frozen")), None)

    def tool(self, name: str) -> Row:
        return _one(self.tools, store=self.size, server=self.server, tool=name)

    def search(self, kind: str) -> Row:
        return _one(self.searches, store=self.size, server=self.server, kind=kind)


def _one(rows: list[Row], **match: str) -> Row:
    for r in rows:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return {}


def _ms(value: str | None) -> str:
    """A figure of latest.md as the README writes it: 3 significant figures at most, in ms."""
    if not value or value in ("–", "-", "nan"):
        return "–"
    x = float(value.replace(",", ""))
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}" if x >= 1 else f"{x:.2g}"


def _median(cell: str | None) -> str:
    return _ms((cell or "").split("/")[0].strip())


def channels(f: Figures) -> str:
    """The start-up column of the table of ways to ship it."""
    script = f.process_row("console script") or f.process_row(f.server)
    frozen = f.frozen()
    size = frozen.get("file MB", "–") if frozen else "–"
    one = f"one {size} MB file" if size not in ("–", "") else "one file"
    lines = [
        "| channel | build | what you get | start-up to the `initialize` answer* |",
        "|---|---|---|---|",
        "| Python package | `pip install .` (or `pipx` / `uv tool install`) | console script `magnotia-mcp`;"
        f" needs Python ≥ 3.10 | {_median(script['spawn→init median / p90 ms']) if script else '–'} ms |",
        f"| one-file executable | `nox -s freeze` → `dist/magnotia-mcp` | {one}, no Python needed"
        f" | {_median(frozen['spawn→init median / p90 ms']) + ' ms' if frozen else 'not in the latest run'} |",
        "| container image | `docker build -t magnotia-mcp .` | non-root, no shell (size: `nox -s docker`)"
        " | not measured by `nox -s bench` |",
        "",
        f"\\* median of 20 on the benchmark machine (run of {f.date}), spawn to the answer line, at the"
        f" {f.size} store; `nox -s bench` measures the package and, with `--frozen dist/magnotia-mcp`,"
        " the executable (`benchmarks/startup.py` measures start-up alone).",
    ]
    return "\n".join(lines)


_LATENCY_ROWS: list[tuple[str, Callable[[Figures], Row]]] = [
    ("`list_transcripts`", lambda f: f.tool("list_transcripts")),
    ("`get_transcript` (any window, the workshop's included)", lambda f: f.tool("get_transcript")),
    ("`search_transcripts`, keywords, by relevance", lambda f: f.search("keyword")),
    ("`search_transcripts`, questions, by relevance", lambda f: f.search("question")),
    ("`search_transcripts`, `sort: newest`", lambda f: f.search("newest")),
    ("`search_transcripts`, the workshop's word (hit and excluded)", lambda f: f.search("workshop")),
    ("`list_tasks`", lambda f: f.tool("list_tasks")),
]


def performance(f: Figures) -> str:
    """The latency table at the largest store, and the process figures."""
    lines = [
        f"| at {f.size} transcripts ({f.server}, run of {f.date}) | p50 | p99 | in-process floor p50 / p99 |",
        "|---|---|---|---|",
    ]
    for label, find in _LATENCY_ROWS:
        r = find(f)
        lines.append(
            f"| {label} | {_ms(r.get('p50'))} ms | {_ms(r.get('p99'))} ms"
            f" | {_ms(r.get('floor p50'))} / {_ms(r.get('floor p99'))} ms |"
        )
    proc = f.process_row(f.server) or {}
    lines += [
        "",
        f"Spawn to the `initialize` answer: {_median(proc.get('spawn→init median / p90 ms'))} ms ({f.server});"
        f" {_ms(proc.get('pings/s'))} pipelined pings per second; {_ms(proc.get('peak RSS MiB'))} MiB peak"
        f" memory at {f.size} with the workshop read and searched.",
    ]
    scan = next((r for r in f.scan if r.get("kind") == "relevance"), None)
    if scan:
        lines.append(
            "Without the full-text index (*scan* mode) a relevance search reads every transcript:"
            f" p50 {_ms(scan.get('p50'))} ms, p99 {_ms(scan.get('p99'))} ms at {scan.get('store')}."
        )
    if f.http:
        worst = max((float(r["HTTP − stdio p50"]) for r in f.http if r.get("tool") != "ping"), default=0.0)
        pings = sorted(float(r["pings/s"].replace(",", "")) for r in f.http_pings if r.get("connections") == "4")
        lines.append(
            f"Over HTTP (`serve --http`, one keep-alive connection) each tool answers within {_ms(str(worst))} ms"
            " of stdio at p50"
            + (
                f", and a server does about {pings[len(pings) // 2]:,.0f} pings per second over 4 connections"
                if pings
                else ""
            )
            + "."
        )
    return "\n".join(lines)


BLOCKS: dict[str, Callable[[Figures], str]] = {"channels": channels, "performance": performance}
_MARKED = re.compile(r"(<!-- bench:(\w+)[^>]*-->\n)(.*?)(\n<!-- /bench:\2 -->)", re.S)


def rewrite(readme: str, markdown: str) -> str:
    """readme with each marked block written from latest.md's markdown."""
    f = Figures(markdown)

    def block(m: re.Match[str]) -> str:
        write = BLOCKS.get(m.group(2))
        return m.group(0) if write is None else m.group(1) + write(f) + m.group(4)

    return _MARKED.sub(block, readme)


def blocks(readme: str) -> dict[str, str]:
    """The marked blocks of readme, by name."""
    return {m.group(2): m.group(3) for m in _MARKED.finditer(readme)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if README.md's blocks differ from latest.md")
    ap.add_argument("--latest", type=Path, default=LATEST)
    ap.add_argument("--readme", type=Path, default=README)
    args = ap.parse_args(argv)
    readme = args.readme.read_text(encoding="utf-8")
    new = rewrite(readme, args.latest.read_text(encoding="utf-8"))
    if args.check:
        return 0 if new == readme else 1
    if new != readme:
        args.readme.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
