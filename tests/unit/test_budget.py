"""The token estimate: its rates by kind of character, and the helpers that fit text and lists to a budget."""

from __future__ import annotations

from typing import Any

import pytest

from magnotia_mcp.budget import PageCost, answer_cost, clip, cost_with_string, fit_page, prefix_within, squeeze
from magnotia_mcp.text import item_line, result_text
from magnotia_mcp.tokencost import NO_PARTS, RATES, UNIT, estimate, json_text, parts, plus, string_cost, string_parts
from magnotia_mcp.tokencost import tokens as token_count

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 4 emoji joined by 3 ZWJ


@pytest.mark.parametrize(
    ("text", "counted"),
    [
        pytest.param("", {}, id="empty"),
        pytest.param("one two six ten", {"word": 4}, id="short-words-one-each-spaces-nothing"),
        pytest.param("abcdefghijkl", {"word": 1, "six": 2, "ten": 1}, id="a-long-word-and-its-runs-of-six-and-ten"),
        pytest.param("202605", {"digit": 6}, id="digits"),
        pytest.param('""""""""""', {"quote": 10}, id="quotes"),
        pytest.param("-:,.{}[]\n/!?:-:", {"other": 15}, id="other-ascii"),
        pytest.param(" " * 8, {"indent": 4}, id="two-spaces-in-a-row"),
        pytest.param("éñü" * 2, {"word": 1, "six": 1, "two": 6}, id="two-byte-letters-of-a-word"),
        pytest.param("会議の予算" * 4, {"cheap": 12, "dear": 8}, id="three-byte-cheap-and-dear"),
        pytest.param("🎉😀😀", {"four": 3}, id="four-byte"),
        pytest.param(FAMILY, {"four": 4, "dear": 3}, id="zwj-sequence"),
        pytest.param("\ud83d", {"dear": 1}, id="lone-surrogate"),
    ],
)
def test_each_feature_costs_its_rate(text: str, counted: dict[str, int]) -> None:
    assert estimate(text) == -(-sum(n * RATES[k] for k, n in counted.items()) // UNIT)


def test_the_cheap_three_byte_characters_are_those_both_tokenizers_take_whole() -> None:
    """会 and の are one token by both; 議 is one by o200k but two by the Claude tokenizer: dear."""
    assert estimate("会") == estimate("の") == 1
    assert estimate("議") == 3


def test_the_estimate_of_texts_is_the_sum_of_their_counts_rounded_up() -> None:
    pieces = ["abc ", "2026", "会議", "🎉", "é", '"', ":"]
    total = NO_PARTS
    for piece in pieces:
        total = plus(total, parts(piece))
    assert total == parts("".join(pieces))
    assert token_count(total) == estimate("".join(pieces)) <= sum(map(estimate, pieces))


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


# Every kind of character the estimate tells apart, and the ones JSON escapes.
MIXED = ["a", "Z", " ", "7", '"', "\\", "\n", "\x01", "é", "会", "😀", FAMILY, "\ud83d", "{", ","]


def _mixed(seed: int, n: int) -> str:
    return "".join(MIXED[(seed * 7 + i * i) % len(MIXED)] for i in range(n))


@pytest.mark.parametrize("copies", [1, 2])
def test_counting_a_page_item_by_item_is_the_answers_exact_cost(copies: int) -> None:
    """fit_page counts each item once and adds: the sum must be answer_cost's figure for every prefix."""
    page: list[dict[str, Any]] = [
        {"id": _mixed(i, 9), "title": _mixed(i + 1, i * 5), "speakers": [_mixed(i, 3)] * (i % 3), "n": i * 977}
        for i in range(12)
    ]
    # Counted from the nearest k counted before, up or down: any order of k gives the same figures.
    orders = [list(range(len(page) + 1)), [12, 5, 11, 2, 8, 7, 0, 1, 10, 3, 9, 4, 6], [6, 12, 0, 3, 1, 11, 2]]
    for order in orders:
        cost = PageCost(page, "items", copies)
        for k in order:
            result = {"items": page[:k], "next_cursor": _mixed(k, 12) if k % 2 else None, "max_tokens": 8000}
            if k % 3:
                result["note"] = _mixed(k, 40)
            assert cost(result, k) == answer_cost(result, copies), (order, k)


@pytest.mark.parametrize("copies", [1, 2])
@pytest.mark.parametrize("length", [0, 1, 1023, 1024, 5000])
def test_a_text_counted_once_costs_what_encoding_the_answer_costs(copies: int, length: int) -> None:
    text = _mixed(length, length)
    result = {"id": "x", "text": text, "offset": 0, "tasks": [{"title": _mixed(3, 30)}], "speakers": ["Ana"]}
    assert cost_with_string(result, copies, "text", string_parts(text)) == answer_cost(result, copies)


@pytest.mark.parametrize("length", [0, 10, 1024, 3000, 9000])
def test_prefix_within_answers_the_same_with_the_text_already_counted(length: int) -> None:
    text = _mixed(length, length)
    for tokens in (0, 1, 50, 700, 3000, 12000, 40000):
        assert prefix_within(text, tokens, string_parts(text)) == prefix_within(text, tokens)


@pytest.mark.parametrize("copies", [1, 2])
def test_a_page_counted_in_chunks_costs_what_it_costs_counted_at_once(copies: int) -> None:
    page: list[dict[str, Any]] = [{"id": _mixed(i, 7), "title": _mixed(i * 3, 2 + i * 40)} for i in range(9)]
    whole, chunked = PageCost(page, "items", copies), PageCost([], "items", copies)
    for start, stop in ((0, 1), (1, 4), (4, 4), (4, 9)):
        chunked.extend(page[start:stop])
        assert chunked.counted == stop
    for k in range(len(page) + 1):
        result = {"items": page[:k], "next_cursor": None}
        assert whole(result, k) == chunked(result, k) == answer_cost(result, copies)
    # over() weighs the items by themselves, each line and compact form counted apart, no separators.
    text, compact = NO_PARTS, NO_PARTS
    for item in page:
        text, compact = plus(text, parts(item_line(item))), plus(compact, parts(json_text(item)))
    own = max(token_count(text), token_count(compact) if copies > 1 else 0)  # the larger copy, not both
    assert not chunked.over(own)
    assert chunked.over(own - 1)


def test_an_answer_costs_its_larger_copy_not_both() -> None:
    """A host shows the model the text content or structuredContent's JSON, not both: the larger one counts."""
    result = {"items": [{"id": k, "title": "会議の予算 budget"} for k in range(20)], "next_cursor": None}
    text, compact = estimate(result_text(result)), estimate(json_text(result))
    assert answer_cost(result, 1) == text
    assert answer_cost(result, 2) == max(text, compact) < text + compact


def _cursor_after(item: dict[str, Any]) -> str:
    return "c-" + str(item["id"])


@pytest.mark.parametrize("copies", [1, 2])
@pytest.mark.parametrize("shape", ["alike", "growing", "one-large-first", "one-large-last"])
def test_fit_page_keeps_the_most_items_that_fit(copies: int, shape: str) -> None:
    """The page kept is the longest prefix whose answer (with its note and cursor) fits: no fewer, no more."""
    sizes = {
        "alike": [200] * 30,
        "growing": [20 * i for i in range(1, 31)],
        "one-large-first": [900] + [100] * 29,
        "one-large-last": [100] * 29 + [900],
    }[shape]
    page = [{"id": i, "title": _mixed(i, n)} for i, n in enumerate(sizes)]
    checked, whole = 0, answer_cost({"items": page, "next_cursor": None}, copies)
    for budget in (whole // 10, whole // 3, whole // 2, whole * 4 // 5, whole + 50):
        out = fit_page({"items": list(page), "next_cursor": None}, "items", budget, copies, _cursor_after, "items")
        # The text content is what encoding the answer anew gives, the lines made to count the items reused.
        assert result_text(out) == result_text(dict(out))
        k = len(out["items"])
        if k == len(page):
            assert answer_cost(out, copies) <= budget
            continue
        assert out["next_cursor"] == _cursor_after(page[k - 1])
        if out["items"] != page[:k]:  # one item, shortened to fit
            assert k == 1
            continue
        assert answer_cost(out, copies) <= budget
        # One item more, with the note and cursor it would carry, would not fit.
        longer = {**out, "items": page[: k + 1], "next_cursor": _cursor_after(page[k])}
        longer["note"] = out["note"].replace(f"Only {k} of", f"Only {k + 1} of")
        assert answer_cost(longer, copies) > budget
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("copies", [1, 2])
def test_more_asks_for_enough_items_like_those_counted_to_go_over_and_not_many_more(copies: int) -> None:
    item = {"id": "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed", "title": "Weekly sync", "speakers": ["Ana", "Jonas"]}
    one = PageCost([item], "items", copies).own()
    for budget, counted in ((one * 40, 10), (one * 40, 39), (one * 7, 1), (5000, 3)):
        cost = PageCost([item] * counted, "items", copies)
        asked = cost.more(budget)
        assert asked > 0
        cost.extend([item] * asked)
        assert cost.over(budget)  # one read of what more() asked for is enough: no second round
        needed = next(n for n in range(1, 500) if PageCost([item] * n, "items", copies).over(budget))
        assert counted + asked <= needed + (needed - counted) // 10 + 3  # a tenth more than needed, and two
    assert PageCost([item] * 41, "items", copies).more(one * 40) == 0


@pytest.mark.parametrize("copies", [1, 2])
def test_a_page_cut_for_its_budget_has_about_as_many_items_counted_as_fit_and_the_same_cut(copies: int) -> None:
    page = [{"id": f"{i:04}", "title": _mixed(i, 40 + i % 7 * 30)} for i in range(300)]
    counted = PageCost(page[:16], "items", copies)  # as fit_page counts a page first, or a list its first chunk

    def fit(cost: PageCost | None) -> dict[str, Any]:
        return fit_page(
            {"items": page, "next_cursor": None}, "items", 12000, copies, lambda i: i["id"], "items", cost=cost
        )

    lean, whole = fit(counted), fit(PageCost(page, "items", copies))
    kept = len(lean["items"])
    assert 10 < kept < len(page)
    assert lean == whole
    assert lean["next_cursor"] == page[kept - 1]["id"]
    assert counted.counted <= kept + kept // 4 + 2  # not the 300 of the page (its items' sizes differ sevenfold)
