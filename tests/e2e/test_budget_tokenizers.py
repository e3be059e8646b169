"""The budget, checked with real tokenizers: a cut answer fills most of max_tokens and never more.

Every answer cut for its budget is counted as a host shows it to the model (the larger of its text content
and structuredContent's JSON) by OpenAI's o200k_base and Anthropic's legacy Claude tokenizer (npm packages
pinned in tests/tokencount), the larger count taken. Stores of meetings in English, Portuguese, Spanish,
German, French, Chinese, Japanese, emoji and long numbers (tests/support/languages.py); every tool, lists and
windows, at max_tokens from 1,000 to 20,000.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from devkit import cheap_characters
from devkit.storefactory import StoreBuilder
from magnotia_mcp import tokencost
from tests.support import languages, tokencount
from tests.support.protocol import LATEST_LEGACY
from tests.support.server import ServerProcess, SharedServers

pytestmark = [
    pytest.mark.calibration,
    pytest.mark.transports("stdio"),
    pytest.mark.skipif(tokencount.missing() is not None, reason=f"real tokenizers: {tokencount.missing()}"),
]

BUDGETS = (1_000, 3_000, 8_000, 20_000)
# The estimate is an upper bound within about 14% on every kind of text (devkit/token_ratios.py), so a cut
# answer holds at least 85% of max_tokens; a page of whole items may fall short by one item more.
LEAST = 0.85
QUERIES = {"english": "budget", "portuguese": "orçamento", "spanish": "presupuesto", "german": "Budget"}
QUERIES |= {"french": "budget", "chinese": "预算", "japanese": "表", "emoji": "budget", "numbers": "2026"}
KINDS = ("english", "portuguese", "german", "french", "chinese", "japanese", "emoji", "numbers")


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {}
    for kind in KINDS:
        b = StoreBuilder(tmp_path_factory.mktemp(f"tokens-{kind}") / "magnotia.db")
        languages.build(b, (kind,), meetings=30, segments=3_000)
        out[kind] = b.close()
    return out


def shown(result: dict[str, Any]) -> int:
    """The larger copy a host shows, by the larger of the two tokenizers' counts."""
    compact = json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":"))
    return max(max(pair) for pair in tokencount.counts([result["content"][0]["text"], compact]))


def calls(kind: str) -> list[tuple[str, dict[str, Any]]]:
    long_id = languages.meeting_id(kind, 0)
    return [
        ("list_transcripts", {"limit": 100}),
        ("list_tasks", {"limit": 100}),
        ("search_transcripts", {"query": QUERIES[kind], "limit": 50}),
        ("get_transcript", {"id": long_id, "max_chars": 100_000}),
        ("get_transcript", {"id": long_id, "max_chars": 100_000, "include_segments": True, "offset": 5_000}),
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_an_answer_cut_for_its_budget_holds_most_of_it_and_never_more(
    shared_servers: SharedServers, stores: dict[str, Path], kind: str
) -> None:
    srv: ServerProcess = shared_servers.get(stores[kind], LATEST_LEGACY)
    cut = 0
    for budget in BUDGETS:
        for tool, arguments in calls(kind):
            response = srv.call(tool, {**arguments, "max_tokens": budget})
            result = response["result"]
            assert result["isError"] is False, result["content"][0]["text"][:300]
            answer = result["structuredContent"]
            tokens = shown(result)
            assert tokens <= budget, (tool, budget, tokens)
            # More was asked for than fits: the page or window was cut (a note says so). A page holds whole
            # items: one more would not have fit, so it may fall short by up to an item's share.
            if "note" in answer and "max_tokens" in answer["note"] and "shortened" not in answer["note"]:
                page = next((answer[k] for k in ("transcripts", "tasks", "hits") if k in answer), None)
                item = tokens / len(page) if page else 0
                assert tokens + item >= LEAST * budget, (tool, arguments, budget, tokens)
                cut += 1
    assert cut >= 2 * len(BUDGETS)  # at every budget, lists and windows were cut


def test_the_cheap_characters_are_those_both_tokenizers_take_whole() -> None:
    """The estimate's list of 3-byte characters that cost one token is what the pinned tokenizers say."""
    assert cheap_characters.cheap() == tokencost.CHEAP
