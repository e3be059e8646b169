"""latest.md's tables of what a model pays per answer, and their before and after (answer_tokens.py measures).

The baseline (``results/baseline-answer-tokens.json``) holds these figures of a full run on the code
issue 44 was filed against; a later run shows its own beside them. Token counts do not depend on the
machine: the same workload (calls per tool, seed) on the same stores gives the same answers, so the
before and after compare call for call. Write a baseline from a run's JSON with
``python benchmarks/answer_report.py --write-baseline benchmarks/.cache/results/latest.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from answer_tokens import CLASSES
from client import Json

BASELINE = Path(__file__).resolve().parent / "results" / "baseline-answer-tokens.json"
SERVER = "console script"  # the server whose figures are shown (else the first): all run the same package
SHOWN = 4  # classes named in the before-and-after table, the after's largest first


def by_store(report: Json) -> dict[str, Json]:
    """This run's answer figures by store label (the console script's, else the first server's)."""
    out: dict[str, Json] = {}
    for s in report["sizes"]:
        if s["variants"]:
            v = next((v for v in s["variants"] if v["label"] == SERVER), s["variants"][0])
            if v.get("answer_tokens"):
                out[s["label"]] = v["answer_tokens"]
    return out


def _n(x: float) -> str:
    return f"{x:,.0f}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}"


def table(figures: dict[str, Json]) -> list[str]:
    """Per store and tool: answers, tokens of the larger copy (mean, p90), its bytes, both copies, shares."""
    lines = [
        "| store | tool | answers | mean tokens | p90 tokens | mean bytes | content / structured tokens (bytes) | "
        + " | ".join(f"{c} %" for c in CLASSES)
        + " |",
        "|---|---|" + "---|" * (5 + len(CLASSES)),
    ]
    for label, tools in figures.items():
        for tool, f in tools.items():
            c, s = f["content"], f["structured"]
            lines.append(
                f"| {label} | {tool} | {f['answers']} | {_n(f['mean_tokens'])} | {_n(f['p90_tokens'])}"
                f" | {_n(f['mean_bytes'])} | {_n(c['mean_tokens'])} / {_n(s['mean_tokens'])}"
                f" ({_n(c['mean_bytes'])} / {_n(s['mean_bytes'])}) | "
                + " | ".join(_pct(f["shares"][k]) for k in CLASSES)
                + " |"
            )
    return lines


def _moved(before: Json | None, after: Json) -> str:
    """The after's largest classes, each with its share before and after."""
    top = sorted(CLASSES, key=lambda k: -after["shares"][k])[:SHOWN]
    return ", ".join(f"{k} {_pct(before['shares'][k]) if before else '–'} → {_pct(after['shares'][k])}%" for k in top)


def _pair(before: Json | None, after: Json, key: str) -> str:
    if not before:
        return f"– | {_n(after[key])}"
    change = (after[key] - before[key]) / before[key] if before[key] else 0.0
    return f"{_n(before[key])} | {_n(after[key])} ({'±0%' if abs(change) < 0.005 else f'{change:+.0%}'})"


def before_after(figures: dict[str, Json], base: Json, report: Json) -> list[str]:
    """The baseline's figures beside this run's, per store and tool."""
    same = base["calls_per_tool"] == report["calls_per_tool"] and base["seed"] == report["seed"]
    lines = [
        "",
        f"*Before*: {base['source']}, run {base['run']}. *After*: this run. Tokens and bytes are of the"
        " larger copy, mean per answer; shares in %."
        + (
            ""
            if same
            else f" **This run's workload is not the baseline's** ({report['calls_per_tool']} calls per tool, seed"
            f" {report['seed']}; the baseline: {base['calls_per_tool']}, seed {base['seed']}): the answers differ."
        ),
        "",
        "| store | tool | answers before / after | mean tokens before | after | p90 before | after"
        " | mean bytes before | after | largest shares, before → after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, tools in figures.items():
        old_tools = base["sizes"].get(label, {})
        for tool, f in tools.items():
            old = old_tools.get(tool)
            lines.append(
                f"| {label} | {tool} | {old['answers'] if old else '–'} / {f['answers']}"
                f" | {_pair(old, f, 'mean_tokens')} | {_pair(old, f, 'p90_tokens')} | {_pair(old, f, 'mean_bytes')}"
                f" | {_moved(old, f)} |"
            )
    return lines


def section(report: Json, baseline: Path = BASELINE) -> list[str]:
    """The lines of latest.md's section: the table of this run, then before and after when there is a baseline."""
    figures = by_store(report)
    if not figures:
        return []
    lines = [
        "",
        "## What a model reads per answer",
        "",
        "Every answer of the workload above, counted with the server's own token estimate"
        " (`magnotia_mcp.budget`) on both copies a host may show (the `content` text and the compact JSON"
        " of `structuredContent`); *tokens* and *bytes* are the larger copy's. Shares: of all the tokens of"
        " the tool's answers, what each field class costs (ids: transcript, task and segment ids; times:"
        " created_at, start_ms, due_at...; moments: a hit's moments and segment whole; text: windows,"
        " segments' text and task notes; hints: the hint of a search that found little; other: values of"
        " no class, e.g. score, source, matched_terms; structure: keys and punctuation). See"
        " `benchmarks/answer_tokens.py`.",
        "",
        *table(figures),
    ]
    if baseline.is_file():
        lines += ["", "### Before and after (issue 44)"]
        lines += before_after(figures, json.loads(baseline.read_text(encoding="utf-8")), report)
    return lines


def write_baseline(run_json: Path, out: Path = BASELINE) -> Json:
    """The answer figures of a run's JSON (run.py --json) as the baseline, stamped with the server's commit."""
    report = json.loads(run_json.read_text(encoding="utf-8"))
    commit = subprocess.run(  # the last commit that changed the server: what the figures are of
        ["git", "log", "-1", "--format=%h", "--", "src"],
        capture_output=True,
        text=True,
        cwd=BASELINE.parents[2],
        check=False,
    ).stdout.strip()
    sizes = by_store(report)
    base: Json = {
        "run": report["date"],
        "source": f"benchmarks/run.py on the {', '.join(sizes)} stores, the server (src/) at commit {commit or '?'}",
        "calls_per_tool": report["calls_per_tool"],
        "seed": report["seed"],
        "sizes": _rounded(sizes),
    }
    out.write_text(json.dumps(base, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return base


def _rounded(value: Any) -> Any:
    """Figures rounded to what the tables show and a little more (shares to 0.01%)."""
    if isinstance(value, float):
        return round(value, 4 if abs(value) < 1 else 2)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/answer_report.py", description=__doc__)
    ap.add_argument("--write-baseline", type=Path, required=True, metavar="RUN_JSON", help="a run's --json file")
    args = ap.parse_args(argv)
    base = write_baseline(args.write_baseline)
    print(f"wrote {BASELINE} ({', '.join(base['sizes'])})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
