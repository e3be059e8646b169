"""Grade a run of the assistant set and write its report.

A run folder holds one folder per server (``ours``, ``naive``, or any other name: ``ours-before``...), each with,
per question, the model's final answer (``<id>.txt``) and the client's call log (``<id>.jsonl``, written by
``ask --log``). A question is in the run when any server's folder has a file of it; a server without its answer
file is wrong on it, and its calls still count.

    python -m devkit.assistant.grade RUN_FOLDER            # writes RUN_FOLDER/report.md and prints it
"""

from __future__ import annotations

import argparse
import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from devkit.assistant.questions import QUESTIONS, Question

_MARKUP = str.maketrans(
    {
        "*": "",
        "_": "",
        "`": "",
        "\u2019": "'",
        "\u2018": "'",
        "\u2013": "-",
        "\u2014": "-",
        "\u00a0": " ",
        "\u202f": " ",
        "\u2011": "-",
    }
)


def strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def normalize(text: str) -> str:
    """The answer as facts are matched on: no accents, no markdown emphasis, plain quotes and dashes."""
    return strip_accents(text).translate(_MARKUP).casefold()


def matches(pattern: str, text: str) -> bool:
    """pattern (a regex, accents ignored) found in text (already normalized), case-insensitively."""
    return re.search(strip_accents(pattern), text, re.IGNORECASE | re.DOTALL) is not None


@dataclass(frozen=True)
class Verdict:
    right: bool
    missing: tuple[int, ...]  # the facts not found (their index)
    forbidden: tuple[str, ...]  # the forbidden patterns found


def judge(question: Question, answer: str) -> Verdict:
    text = normalize(answer)
    missing = tuple(i for i, fact in enumerate(question.facts) if not any(matches(p, text) for p in fact))
    found = tuple(p for p in question.forbidden if matches(p, text))
    return Verdict(bool(text.strip()) and not missing and not found, missing, found)


@dataclass(frozen=True)
class Cost:
    calls: int
    tokens: int
    bytes: int


def cost(log: Path) -> Cost:
    if not log.exists():
        return Cost(0, 0, 0)
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return Cost(len(records), sum(int(r["tokens"]) for r in records), sum(int(r["bytes"]) for r in records))


@dataclass(frozen=True)
class Row:
    question: Question
    server: str
    verdict: Verdict | None  # None: no answer file
    cost: Cost

    @property
    def right(self) -> bool:
        return self.verdict is not None and self.verdict.right


def grade_run(run: Path, questions: Iterable[Question] = QUESTIONS) -> list[Row]:
    rows: list[Row] = []
    servers = sorted(p.name for p in run.iterdir() if p.is_dir())
    for q in questions:
        if not any((run / s / f"{q.id}{ext}").exists() for s in servers for ext in (".txt", ".jsonl")):
            continue  # not in this run (a run of the held-out half, say)
        for server in servers:
            answer = run / server / f"{q.id}.txt"
            verdict = judge(q, answer.read_text(encoding="utf-8")) if answer.exists() else None
            rows.append(Row(q, server, verdict, cost(run / server / f"{q.id}.jsonl")))
    return rows


def _mark(row: Row) -> str:
    if row.verdict is None:
        return "–"
    if row.right:
        return "right"
    why = [f"fact {i + 1}" for i in row.verdict.missing] + [f"forbidden {p}" for p in row.verdict.forbidden]
    return "wrong (" + ", ".join(why) + ")"


def _summary(title: str, rows: list[Row], servers: list[str], key: str) -> list[str]:
    groups = sorted({getattr(r.question, key) for r in rows})
    out = [
        f"### {title}",
        "",
        "| "
        + key
        + " | questions | "
        + " | ".join(f"{s} right | {s} calls/q | {s} tokens | {s} KB" for s in servers)
        + " |",
        "|---|---:|" + "---:|" * (4 * len(servers)),
    ]
    for group in [*groups, "all"]:
        cells: list[str] = []
        n = 0
        for s in servers:
            mine = [r for r in rows if r.server == s and group in ("all", getattr(r.question, key))]
            n = len(mine)
            calls = sum(r.cost.calls for r in mine)
            cells += [
                f"{sum(r.right for r in mine)}/{n}",
                f"{calls / max(n, 1):.2f}",
                f"{sum(r.cost.tokens for r in mine):,}",
                f"{sum(r.cost.bytes for r in mine) / 1000:.1f}",
            ]
        out.append(f"| {group} | {n} | " + " | ".join(cells) + " |")
    return [*out, ""]


def report(rows: list[Row]) -> str:
    servers = sorted({r.server for r in rows})
    lines = [
        "# Assistant set: results",
        "",
        "Tokens: the server's own estimate (`budget.estimate`) of each `content` text the model was shown.",
        "",
        "| question | kind | split | "
        + " | ".join(f"{s} | {s} calls | {s} tokens | {s} bytes" for s in servers)
        + " |",
        "|---|---|---|" + "---|---:|---:|---:|" * len(servers),
    ]
    by_question: dict[str, list[Row]] = {}
    for r in rows:
        by_question.setdefault(r.question.id, []).append(r)
    for qid, mine in by_question.items():
        q = mine[0].question
        cells = [f"{_mark(r)} | {r.cost.calls} | {r.cost.tokens:,} | {r.cost.bytes:,}" for r in mine]
        lines.append(f"| {qid} | {q.kind} | {q.split} | " + " | ".join(cells) + " |")
    lines.append("")
    lines += _summary("By split (heldout: never used for tuning)", rows, servers, "split")
    lines += _summary("By kind", rows, servers, "kind")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="the run folder: one folder per server, <id>.txt and <id>.jsonl")
    parser.add_argument("--out", type=Path, help="where to write the report (default: RUN/report.md)")
    args = parser.parse_args(argv)
    text = report(grade_run(args.run))
    (args.out or args.run / "report.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
