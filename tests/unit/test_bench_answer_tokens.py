"""The benchmark's account of what a model pays per answer (benchmarks/answer_tokens.py), on a hand-made answer.

Each leaf value's cost goes to its field class (by its nearest key; everything inside a hit's moments and
segment to "moments", inside a hint to "hints"), the keys and punctuation to "structure", and the classes of
an answer add up to its larger copy exactly.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from magnotia_mcp.text import result_text
from magnotia_mcp.tokencost import UNIT, estimate, json_text, parts

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

ANSWER: dict[str, Any] = {
    "hits": [
        {
            "transcript_id": "t1",
            "title": "Réunion budget",
            "created_at": "2026-01-02",
            "snippet": "the **budget**",
            "moments": [{"start_ms": 1000, "speaker": "Ana", "snippet": "budget"}],
            "segment": {"seq": 7},
            "score": 1.5,
            "matched_terms": ["budget"],
        }
    ],
    "hint": {"found": "partial", "store": {"first_at": None}},
    "next_cursor": None,
}
# Each class's leaf values: a class costs what the estimate gives each of them, encoded as JSON.
LEAVES: dict[str, list[Any]] = {
    "ids": ["t1"],
    "titles": ["Réunion budget"],
    "times": ["2026-01-02"],
    "snippets": ["the **budget**"],
    "moments": [1000, "Ana", "budget", 7],  # a moment's, the segment's seq too: not an id
    "other": [1.5, "budget"],  # score, matched_terms
    "hints": ["partial", None],  # hints, not times
    "notes/cursors": [None],
}
EXPECTED = {k: sum(parts(json.dumps(v, ensure_ascii=False))[0] / UNIT for v in vs) for k, vs in LEAVES.items()}


@pytest.fixture(scope="module")
def tokens() -> ModuleType:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))
        return importlib.import_module("answer_tokens")


def tool_result(answer: dict[str, Any]) -> dict[str, Any]:
    """A tools/call result as the server sends it: the readable text and the same answer structured."""
    return {"content": [{"type": "text", "text": result_text(answer)}], "structuredContent": answer}


def test_each_leaf_value_goes_to_its_field_class(tokens: ModuleType) -> None:
    got = tokens.leaf_costs(ANSWER)
    # The same classes, no others: keys are no leaves ("structure"), the moment's speaker is a moment's.
    assert got == pytest.approx(EXPECTED)


def test_an_answer_is_its_larger_copy_and_its_classes_add_up_to_it(tokens: ModuleType) -> None:
    text, compact = result_text(ANSWER), json_text(ANSWER)
    got = tokens.measure(tool_result(ANSWER))
    assert (got.content_tokens, got.structured_tokens) == (estimate(text), estimate(compact))
    assert (got.content_bytes, got.structured_bytes) == (len(text.encode()), len(compact.encode()))
    # The text copy's newlines and indents cost more than the compact JSON: it is the larger, and counted.
    assert got.content_tokens > got.structured_tokens
    assert (got.larger_tokens, got.larger_bytes) == (got.content_tokens, got.content_bytes)
    whole = tokens.fractional(parts(text))
    assert sum(got.classes.values()) == pytest.approx(whole)
    assert got.classes["structure"] == pytest.approx(whole - sum(EXPECTED.values()))
    assert got.classes["structure"] > 0
    assert abs(whole - got.content_tokens) < 1  # the estimate rounds the letters up, once


def test_a_tools_figures_are_means_p90_and_shares_of_all_its_tokens(tokens: ModuleType) -> None:
    small: dict[str, Any] = {"transcripts": [], "next_cursor": None}
    longer = {**ANSWER, "hits": ANSWER["hits"] * 3}
    tally = tokens.Tally()
    tally.add("search_transcripts", tool_result(ANSWER))
    tally.add("list_transcripts", tool_result(small))
    tally.add("search_transcripts", tool_result(longer))
    figures = tally.figures()
    assert list(figures) == ["list_transcripts", "search_transcripts", "all"]  # the tools' order, then all
    search = figures["search_transcripts"]
    one, three = tokens.measure(tool_result(ANSWER)), tokens.measure(tool_result(longer))
    assert search["answers"] == 2
    assert search["mean_tokens"] == (one.larger_tokens + three.larger_tokens) / 2
    assert search["p90_tokens"] == three.larger_tokens  # of two answers, the larger
    assert sum(search["shares"].values()) == pytest.approx(1.0)
    paid = one.classes["snippets"] + three.classes["snippets"]
    whole = sum(one.classes.values()) + sum(three.classes.values())
    assert search["shares"]["snippets"] == pytest.approx(paid / whole)
    empty = figures["list_transcripts"]["shares"]  # an empty page: keys, punctuation and a null cursor only
    assert empty["titles"] == 0
    assert empty["structure"] + empty["notes/cursors"] == pytest.approx(1.0)
    assert figures["all"]["answers"] == 3


def test_the_report_shows_a_baseline_beside_this_run(tokens: ModuleType, tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))
        answer_report = importlib.import_module("answer_report")
    before, after = tokens.Tally(), tokens.Tally()
    before.add("search_transcripts", tool_result({**ANSWER, "hits": ANSWER["hits"] * 2}))
    after.add("search_transcripts", tool_result(ANSWER))

    def run(tally: Any, calls: int) -> dict[str, Any]:
        variant = {"label": "python -m", "answer_tokens": tally.figures()}
        return {"date": "then", "calls_per_tool": calls, "seed": 1, "sizes": [{"label": "1k", "variants": [variant]}]}

    (tmp_path / "run.json").write_text(json.dumps(run(before, 300)), encoding="utf-8")
    baseline = tmp_path / "baseline.json"
    answer_report.write_baseline(tmp_path / "run.json", baseline)
    old, new = (tokens.measure(tool_result(a)).larger_tokens for a in ({**ANSWER, "hits": ANSWER["hits"] * 2}, ANSWER))
    lines = answer_report.section(run(after, 300), baseline)
    row = next(line for line in lines if line.startswith("| 1k | search_transcripts | 1 / 1 |"))
    assert f"| {old:,} | {new:,} ({(new - old) / old:+.0%}) |" in row  # mean tokens, before then after
    assert "not the baseline's" not in "\n".join(lines)
    assert "not the baseline's" in "\n".join(answer_report.section(run(after, 20), baseline))  # a smoke run's
