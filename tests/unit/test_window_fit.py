"""A window cut for its budget: the longest that fits, found on a model that adds up exactly what the count counts.

The model's cut is the answer, not counted again, so the model must equal the budget's own count at every cut:
checked here at hundreds of cuts, mid-word, mid-escape and mid-emoji included.
"""

from __future__ import annotations

from typing import Any

import pytest

from magnotia_mcp import budget as budget_module
from magnotia_mcp.budget import answer_cost
from magnotia_mcp.text import result_text, window_end
from magnotia_mcp.tools import window_fit

# Words of every kind the estimate tells apart, JSON escapes and long words among them.
SAID = (
    "We agreed to ship on Thursday.",
    "Die Datenschutzprüfung braucht noch die Aufbewahrungstabelle!",
    "会議の予算について話しました。",
    'ok 🎉 "quoted" and a tab\there, a line\nbreak',
    "Reunião de orçamento: 2026-05-14T09:30:00Z, 12,500 euros.",
    "supercalifragilisticexpialidocious   spaced   out",
)


def _window(segments: int) -> tuple[dict[str, Any], list[int]]:
    texts = [SAID[k % len(SAID)] for k in range(segments)]
    text = " ".join(texts)
    out, needs, at = [], [], 0
    for k, said in enumerate(texts):
        out.append({"seq": k, "start_ms": k * 1000, "end_ms": k * 1000 + 900, "speaker": "Ana", "text": said})
        at += len(said) + (1 if k else 0)
        needs.append(at - len(said) + 1)  # a segment shows once its first character is in the window
    result = {
        "id": "00000000-0000-4000-8000-000000000001",
        "title": "All-day workshop",
        "offset": 0,
        "total_chars": len(text) + 5_000,
        "text": text,
        "next_offset": len(text),
        "truncated": False,
        "speakers": ["Ana"],
        "tasks": [],
        "segments": out,
    }
    return result, needs


@pytest.mark.parametrize("copies", [1, 2])
@pytest.mark.parametrize("budget", [1_000, 3_000, 8_000])
def test_a_cut_window_is_the_longest_that_fits_without_a_count_of_the_whole_answer(
    monkeypatch: pytest.MonkeyPatch, copies: int, budget: int
) -> None:
    counted: list[int] = []
    count = budget_module.cost_with_string

    def counting(result: dict[str, Any], copies: int, key: str, inner: Any) -> int:
        counted.append(len(result[key]))
        return count(result, copies, key, inner)

    monkeypatch.setattr(window_fit, "cost_with_string", counting)
    probes: list[int] = []
    modelled = window_fit._Cut._modelled

    def probing(cut: window_fit._Cut, end: int) -> int:
        probes.append(end)
        return modelled(cut, end)

    monkeypatch.setattr(window_fit._Cut, "_modelled", probing)
    result, needs = _window(2_000)
    out = window_fit.fit_window(dict(result), needs, budget, copies, by_time=False)
    end = len(out["text"])
    assert 0 < end < len(result["text"])
    assert answer_cost(out, copies) <= budget
    # One more character (and the segments it brings), the answer otherwise as fit_window makes it.
    asked = len(result["text"])
    whole = {**result, "max_tokens": budget}
    cut = window_fit._Cut(whole, needs, budget, copies, lambda r: window_fit._say(r, asked, budget, False, False))
    longer = cut.answer(window_end(result["text"], 0, end + 1))
    assert {k: v for k, v in cut.answer(end).items() if k != "segments"} == {
        k: v for k, v in out.items() if k != "segments"
    }
    assert answer_cost(longer, copies) > budget
    # The segments' lines, made to count them, are the text content's: the same text as encoding anew.
    assert isinstance(out, budget_module.Answer)
    assert out["segments"]
    assert result_text(out) == result_text(dict(out))
    # Three to guess, then the segments that fit among their starts, then the cut within the last one's text:
    # searched over characters across the steps each segment's line makes, it took 10 to 12.
    assert len(probes) <= 9, probes
    assert counted == []  # the model's cut is the answer: the model is exact (below), so nothing is counted again


@pytest.mark.parametrize("copies", [1, 2])
def test_the_model_counts_every_cut_as_the_budget_counts_it(copies: int) -> None:
    """Blocks end at seams and a segment's line is its compact JSON spaced: the model is exact at any cut,
    mid-word, mid-escape or mid-emoji included."""
    result, needs = _window(300)
    asked = len(result["text"])
    whole = {**result, "max_tokens": 8_000}
    cut = window_fit._Cut(whole, needs, 8_000, copies, lambda r: window_fit._say(r, asked, 8_000, False, False))
    ends = range(1, asked, 29)
    assert len(ends) >= 400
    for end in ends:
        answer = cut.answer(end)
        assert cut._modelled(end) == answer_cost(answer, copies), end
