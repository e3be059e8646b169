"""latest.md's "Before and after" table: issue 20's figures in this run beside the run the issue was filed against.

The baseline (``results/baseline-issue-20.json``) holds the console script's rows of that run's
latest.md (commit 8f59a4b, 2026-12-02 00:02 UTC), copied as they stand. The machine's speed
differs between runs, sometimes twofold, so each latency comes with its ratio to the floor
measured in the same run: the ratios compare across runs, the milliseconds do not.
"""

from __future__ import annotations

import json
from pathlib import Path

from client import Json

BASELINE = Path(__file__).resolve().parent / "results" / "baseline-issue-20.json"
SERVER = "console script"


def figures(report: Json) -> dict[str, dict[str, float | None]]:
    """This run's figures by store label, keyed as the baseline is (the console script's, else the first server's)."""
    out: dict[str, dict[str, float | None]] = {}
    for s in report["sizes"]:
        if not s["variants"]:
            continue
        v = next((v for v in s["variants"] if v["label"] == SERVER), s["variants"][0])
        f: dict[str, float | None] = {
            "spawn_ms": v["spawn_ms"].get("median"),
            "pings_per_s": v["pings_per_s"].get("median"),
            "peak_rss_mib": v.get("peak_rss_mib"),
        }
        for tool, t in v["tools"].items():
            f[f"{tool}.p50"], f[f"{tool}.p99"] = t["server"].get("p50"), t["server"].get("p99")
            f[f"{tool}.floor_p50"], f[f"{tool}.overhead_p50"] = t["floor"].get("p50"), t["overhead_p50_ms"]
        for name, g in v.get("search_groups", {}).items():
            f[f"{name}.p50"], f[f"{name}.p99"] = g["server"].get("p50"), g["server"].get("p99")
            f[f"{name}.floor_p50"] = g["floor"].get("p50")
        frozen = [w for w in s["variants"] if w["label"].startswith("frozen")]
        f["frozen_spawn_ms"] = frozen[0]["spawn_ms"].get("median") if frozen else None
        out[s["label"]] = f
    return out


# (figure, key, with its ratio to the floor, target by store label)
ROWS: list[tuple[str, str, bool, dict[str, str]]] = [
    ("relevance search p50", "relevance.p50", True, {"1k": "≤ 2× floor", "10k": "≤ 2× floor", "100k": "≤ 20 ms"}),
    ("relevance search p99", "relevance.p99", False, {"1k": "≤ 50 ms", "10k": "≤ 50 ms", "100k": "≤ 100 ms"}),
    ("keyword search p50", "keyword.p50", True, {}),
    ("question search p50", "question.p50", True, {}),
    ("list_transcripts p99", "list_transcripts.p99", False, {"*": "≤ 5 ms"}),
    ("get_transcript overhead p50", "get_transcript.overhead_p50", False, {"*": "≤ 0.3 ms"}),
    ("list_tasks p50", "list_tasks.p50", True, {"*": "not slower"}),
    ("peak RSS MiB", "peak_rss_mib", False, {"100k": "≤ 40"}),
    ("spawn → initialize median", "spawn_ms", False, {"*": "not slower"}),
    ("frozen spawn → initialize median", "frozen_spawn_ms", False, {"*": "≤ 150 ms"}),
]


def _cell(f: dict[str, float | None] | None, key: str, ratio: bool) -> str:
    value = f.get(key) if f else None
    if value is None:
        return "–"
    text = f"{value:,.2f}"
    floor = f.get(key.rsplit(".", 1)[0] + ".floor_p50") if f and ratio else None
    return f"{text} ({value / floor:.1f}×)" if floor else text


def section(report: Json, baseline: Path = BASELINE) -> list[str]:
    """The table's lines for latest.md; none when there is no baseline."""
    if not baseline.is_file():
        return []
    base = json.loads(baseline.read_text(encoding="utf-8"))
    now = figures(report)
    lines = [
        "",
        "## Before and after (issue 20)",
        "",
        f"*Before*: {base['source']}, run {base['run']}. *After*: this run, same server kind"
        f" ({SERVER}). Latencies in ms, in brackets their ratio to the floor of the same run: machines"
        " and their speed differ between runs, so the ratios compare and the milliseconds do not."
        " The frozen build was not measured in the earlier run.",
        "",
        "| figure | store | target | before | after |",
        "|---|---|---|---|---|",
    ]
    for label in now:
        for name, key, ratio, target in ROWS:
            goal = target.get(label, target.get("*", "–"))
            lines.append(
                f"| {name} | {label} | {goal} | {_cell(base['sizes'].get(label), key, ratio)}"
                f" | {_cell(now[label], key, ratio)} |"
            )
    return lines
