"""The token estimate: its rates by kind of character, and the helpers that fit text and lists to a budget."""

from __future__ import annotations

from typing import Any

import pytest

from magnotia_mcp.budget import clip, estimate, prefix_within, squeeze, string_cost

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 4 emoji joined by 3 ZWJ


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("abc def", 3, id="letters-and-spaces-a-third"),
        pytest.param("2026-05-09", 10, id="digits-and-punctuation-one-each"),
        pytest.param("éñü", 3, id="two-byte-one-each"),
        pytest.param("会議の予算", 10, id="cjk-two-each"),
        pytest.param("🎉😀", 8, id="emoji-four-each"),
        pytest.param(FAMILY, 4 * 4 + 3 * 2, id="zwj-sequence"),
        pytest.param("\ud83d", 2, id="lone-surrogate"),
    ],
)
def test_each_kind_of_character_costs_its_rate(text: str, tokens: int) -> None:
    assert estimate(text) == tokens


def test_the_estimate_never_falls_below_one_token_per_utf8_byte_outside_ascii_letters() -> None:
    """No byte-level tokenizer gives more than a token a byte: the estimate is at least half of that bound."""
    for text in ("会議" * 100, "🎉" * 100, "Ωμέγα" * 100, "12:30, 'a'!" * 100):
        assert estimate(text) >= len(text.encode("utf-8")) / 2


@pytest.mark.parametrize("text", ["word " * 3000, "会議の予算について。" * 300, "🎉 ok " * 500, 'a"\n\\b' * 500])
@pytest.mark.parametrize("tokens", [0, 1, 7, 100, 2_500])
def test_prefix_within_is_a_prefix_that_fits_and_nearly_fills_the_budget(text: str, tokens: int) -> None:
    """Blocks are costed apart, each rounded up: the prefix may leave a token a block unused, no more."""
    n = prefix_within(text, tokens)
    assert string_cost(text[:n]) <= tokens
    assert n == len(text) or string_cost(text[: n + 1]) > tokens - len(text[:n]) // 1024 - 1


def test_clip_ends_a_cut_string_with_the_mark_and_fits() -> None:
    assert clip("short", 100) == "short"
    cut = clip("会議" * 1000, 50)
    assert cut.endswith("…")
    assert string_cost(cut) <= 50


def test_squeeze_shortens_only_the_named_fields_until_it_fits() -> None:
    result: dict[str, Any] = {
        "id": "x" * 5_000,
        "title": "会議" * 5_000,
        "tasks": [{"id": f"t{k}", "title": "予算" * 50} for k in range(500)],
    }

    def fits(r: dict[str, Any]) -> bool:
        return string_cost(r["title"]) + sum(string_cost(t["title"]) for t in r["tasks"]) <= 1_000

    assert squeeze(result, fits, frozenset({"title"}), frozenset({"tasks"}))
    assert fits(result)
    assert result["id"] == "x" * 5_000  # never named: never touched
    assert result["tasks"]
    assert all(t["id"].startswith("t") for t in result["tasks"])


def test_squeeze_gives_up_when_nothing_named_can_shrink() -> None:
    result: dict[str, Any] = {"id": "x" * 5_000}
    assert squeeze(result, lambda _: False, frozenset({"title"}), frozenset()) is False
