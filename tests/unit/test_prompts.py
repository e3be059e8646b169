"""magnotia_mcp.prompts: completion of transcript ids, driven by which prompts take one.

Completion reads the store, so these tests build a real one
(devkit/storefactory.py) and open it with ``store.pool.Store``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.errors import InvalidParams
from magnotia_mcp.prompts import MAX_COMPLETIONS, PROMPTS, TRANSCRIPT_ID, complete
from magnotia_mcp.resources import URI_TEMPLATE
from magnotia_mcp.store.pool import Store

LIVE = ["t-3", "t-2", "t-1"]  # newest first, as completion lists them


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    builder = StoreBuilder(tmp_path_factory.mktemp("prompts") / "magnotia.db")
    for day, tid in enumerate(reversed(LIVE), start=1):
        builder.transcript(id=tid, title=f"Weekly sync {day}", created_at=ts(day))
    builder.transcript(id="t-gone", title="Weekly sync trashed", created_at=ts(9), deleted_at=ts(10))
    return builder.close()


def _completions(path: Path, queries: Sequence[tuple[object, object]]) -> list[dict[str, Any]]:
    async def run() -> list[dict[str, Any]]:
        store = Store(path)
        try:
            return [(await complete(store, ref, argument))["completion"] for ref, argument in queries]
        finally:
            await store.close()

    return asyncio.run(run())


def _prompt(name: str) -> dict[str, str]:
    return {"type": "ref/prompt", "name": name}


def test_prompts_are_split_into_those_that_take_a_transcript_id_and_those_that_do_not() -> None:
    """The completion test below covers both kinds: at least one prompt of each."""
    takers = {name for name, prompt in PROMPTS.items() if prompt.takes(TRANSCRIPT_ID)}
    assert takers
    assert takers != set(PROMPTS)
    for prompt in PROMPTS.values():
        assert prompt.takes(TRANSCRIPT_ID) is any(a["name"] == TRANSCRIPT_ID for a in prompt.arguments)


@pytest.mark.parametrize("name", list(PROMPTS))
def test_completion_offers_transcript_ids_for_every_prompt_that_takes_one_and_nothing_else(
    name: str, store_path: Path
) -> None:
    """transcript_id completes to live ids (newest first) for prompts that take it; other arguments get nothing."""
    prompt = PROMPTS[name]
    asked = [(_prompt(name), {"name": TRANSCRIPT_ID, "value": ""})]
    asked += [(_prompt(name), {"name": a["name"], "value": ""}) for a in prompt.arguments if a["name"] != TRANSCRIPT_ID]
    first, *others = _completions(store_path, asked)
    if prompt.takes(TRANSCRIPT_ID):
        assert first == {"values": LIVE, "hasMore": False}
    else:
        assert first["values"] == []
    for completion in others:
        assert completion["values"] == []
        assert completion["hasMore"] is False


def test_completion_narrows_by_id_prefix_or_title_words(store_path: Path) -> None:
    """The typed value matches the start of an id or any part of a title; the trash is never offered."""
    taker = next(name for name, prompt in PROMPTS.items() if prompt.takes(TRANSCRIPT_ID))
    by_id, by_title, trashed, nothing, like_wildcard = _completions(
        store_path,
        [
            (_prompt(taker), {"name": TRANSCRIPT_ID, "value": "t-2"}),
            (_prompt(taker), {"name": TRANSCRIPT_ID, "value": "sync 3"}),
            (_prompt(taker), {"name": TRANSCRIPT_ID, "value": "trashed"}),
            (_prompt(taker), {"name": TRANSCRIPT_ID, "value": "zzz"}),
            (_prompt(taker), {"name": TRANSCRIPT_ID, "value": "%"}),
        ],
    )
    assert by_id["values"] == ["t-2"]
    assert by_title["values"] == ["t-3"]
    assert trashed["values"] == []
    assert nothing["values"] == []
    assert like_wildcard["values"] == []


def test_completion_stops_at_its_limit_and_says_there_is_more(tmp_path: Path) -> None:
    """One more match than the limit gives the limit's worth of ids and hasMore."""
    builder = StoreBuilder(tmp_path / "many" / "magnotia.db")
    for n in range(MAX_COMPLETIONS + 1):
        builder.transcript(id=f"id-{n:04d}", created_at=ts(1, second=n % 60, minute=n // 60))
    [completion] = _completions(builder.close(), [({"type": "ref/resource", "uri": URI_TEMPLATE}, {"name": "id"})])
    assert len(completion["values"]) == MAX_COMPLETIONS
    assert completion["values"][0] == f"id-{MAX_COMPLETIONS:04d}"
    assert completion["hasMore"] is True


def test_the_resource_template_completes_its_id_and_nothing_else(store_path: Path) -> None:
    """ref/resource on the transcript template completes {id}; another URI or argument gets nothing."""
    template, other_uri, other_argument = _completions(
        store_path,
        [
            ({"type": "ref/resource", "uri": URI_TEMPLATE}, {"name": "id", "value": ""}),
            ({"type": "ref/resource", "uri": "magnotia://elsewhere/{id}"}, {"name": "id", "value": ""}),
            ({"type": "ref/resource", "uri": URI_TEMPLATE}, {"name": "title", "value": ""}),
        ],
    )
    assert template["values"] == LIVE
    assert other_uri["values"] == []
    assert other_argument["values"] == []


@pytest.mark.parametrize(
    ("ref", "argument"),
    [
        pytest.param({"type": "ref/prompt", "name": "no_such_prompt"}, {"name": TRANSCRIPT_ID}, id="unknown-prompt"),
        pytest.param("ref/prompt", {"name": TRANSCRIPT_ID}, id="ref-not-object"),
        pytest.param({"type": "ref/prompt", "name": "action_items"}, None, id="argument-missing"),
        pytest.param({"type": "ref/prompt", "name": "action_items"}, {"name": 1}, id="name-not-string"),
        pytest.param({"type": "ref/prompt", "name": "action_items"}, {"name": TRANSCRIPT_ID, "value": 5}, id="value"),
    ],
)
def test_a_malformed_completion_request_is_invalid_params(ref: object, argument: object, tmp_path: Path) -> None:
    """Refused before the store is read: the store here does not even exist."""

    async def run() -> None:
        store = Store(tmp_path / "never-read.db")
        try:
            await complete(store, ref, argument)
        finally:
            await store.close()

    with pytest.raises(InvalidParams):
        asyncio.run(run())
    assert not (tmp_path / "never-read.db").exists()
