"""store.plans: the three full-text plans agree, and search picks each of them on a real store.

The few / many / most plans of ``sort: newest`` and ``oldest`` exist only for
speed (see store/plans.py): for any query, filters and direction they must
return the same rows in the same order. The store here has more than 1,000
index matches for its common words, so the many and most plans are the ones
search would pick, and each plan is run directly.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.storefactory import StoreBuilder
from magnotia_mcp.search import plan
from magnotia_mcp.search.querylang import parse
from magnotia_mcp.store import plans
from magnotia_mcp.store.reader import Reader
from tests.support.readers import open_reader

ROWS = 3_000
COMMON = "budget"  # in about 3 rows of 4: more than MANY_MATCHES, and "most" of the rows
HALF = "garden"  # in about 1 row of 2 (below MOST_SHARE when filtered, above MANY_MATCHES)
RARE = "kumquat"  # in 1 row of 40: the few plan


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(20261201)
    b = StoreBuilder(tmp_path_factory.mktemp("plans") / "magnotia.db")
    for i in range(ROWS):
        words = ["note", str(i)]
        if rng.random() < 0.75:
            words.append(COMMON)
        if rng.random() < 0.5:
            words.append(HALF)
        if i % 40 == 0:
            words.append(RARE)
        rng.shuffle(words)
        # Many rows share a created_at, so the id tie-break is part of the order under test.
        created = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 7:02d}:00:00.000Z"
        b.transcript(
            id=f"t{i:05d}",
            title=f"{COMMON} review" if i % 400 == 0 else f"weekly sync {i}",
            source=("dictation", "meeting", "file")[i % 3],
            raw_text=" ".join(words),
            created_at=created,
            deleted_at="2026-12-01T00:00:00.000Z" if i % 13 == 0 else None,
            segments=[],
        )
    return b.close()


@pytest.fixture(scope="module")
def reader(store_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Reader]:
    yield from open_reader(store_path, loop)


FILTERS = [
    pytest.param({}, id="no-filter"),
    pytest.param({"source": "meeting"}, id="source"),
    pytest.param({"since": "2026-06-01T00:00:00.000Z"}, id="since"),
    pytest.param({"since": "2026-03-01T00:00:00.000Z", "until": "2026-09-01T00:00:00.000Z"}, id="range"),
    pytest.param({"until": "2026-02-01T00:00:00.000Z", "source": "file"}, id="until-source"),
]
QUERIES = [COMMON, HALF, RARE, f"{COMMON} {HALF}", f"{RARE} OR {HALF}", '"note 1"', "gard*"]


def _match_count(loop: asyncio.AbstractEventLoop, reader: Reader, match: str) -> int:
    rows = loop.run_until_complete(reader.all(plans.MATCHES, {"match": match}))
    return len(rows)


def test_the_store_has_more_matches_than_the_few_plan_handles(loop: asyncio.AbstractEventLoop, reader: Reader) -> None:
    """Otherwise the many and most plans would only ever run on small sets here."""
    assert _match_count(loop, reader, parse(COMMON).fts()) > 2 * plans.MANY_MATCHES
    assert _match_count(loop, reader, parse(HALF).fts()) > plans.MANY_MATCHES
    assert 0 < _match_count(loop, reader, parse(RARE).fts()) < plans.MANY_MATCHES


@pytest.mark.parametrize("oldest", [False, True], ids=["newest", "oldest"])
@pytest.mark.parametrize("filt", FILTERS)
@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("column", [None, "title"])
@pytest.mark.parametrize("limit", [1, 10, 50])
def test_few_many_and_most_plans_return_the_same_hits_in_the_same_order(
    loop: asyncio.AbstractEventLoop,
    reader: Reader,
    filt: dict[str, str],
    query: str,
    column: str | None,
    limit: int,
    oldest: bool,
) -> None:
    full = {"since": None, "until": None, "source": None, **filt}
    match = parse(query).fts(column)
    answers = {
        plan: [
            row["id"]
            for row in loop.run_until_complete(plans.run_plan(reader, plan, match, limit, full, oldest=oldest))
        ]
        for plan in ("few", "many", "most")
    }
    assert answers["few"] == answers["many"] == answers["most"]
    # The expected page, from first principles: live, filtered, newest (or oldest) first, then by id.
    direction = "" if oldest else " DESC"
    expected = loop.run_until_complete(
        reader.all(
            "SELECT id FROM transcripts WHERE deleted_at IS NULL AND rowid IN ("
            + plans.MATCHES
            + ")"
            + "".join(plans.FILTERS[k].replace("t.", "") for k, v in full.items() if v)
            + f" ORDER BY created_at{direction}, id{direction} LIMIT :limit",
            {**full, "match": match, "limit": limit},
        )
    )
    assert answers["few"] == [row["id"] for row in expected]
    if limit == 50 and column is None and query == COMMON and not filt:
        assert len(expected) == limit  # the pages under test are full ones, not the whole (short) answer


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_search_runs_each_plan_on_this_store(
    loop: asyncio.AbstractEventLoop, reader: Reader, monkeypatch: pytest.MonkeyPatch, sort: plan.Sort
) -> None:
    """The choice itself, in both time orders: a rare word takes few, a common one most, a prefix stays with many.

    A plain word is searched as the prefix of its stem ("budget" is ``budg*``), so it stays with
    many too; quoted, it is the word itself. Relevance (the default sort) never runs these plans.
    """
    chosen: list[tuple[str, bool]] = []
    real = plans.run_plan

    async def spy(
        db: Reader,
        plan: plans.Plan,
        match: str,
        limit: int,
        filt: dict[str, str | None],
        *,
        rowids: list[int] | None = None,
        oldest: bool = False,
    ) -> list[sqlite3.Row]:
        chosen.append((plan, oldest))
        return await real(db, plan, match, limit, filt, rowids=rowids, oldest=oldest)

    monkeypatch.setattr(plans, "run_plan", spy)
    quoted = f'"{COMMON}"'
    for text in (RARE, quoted, "budg*", COMMON):
        chosen.clear()
        result = loop.run_until_complete(plan.search_transcripts(reader, parse(text), limit=10, sort=sort))
        assert result["hits"], text
        expected = {RARE: "few", quoted: "most", "budg*": "many", COMMON: "many"}[text]
        assert chosen == [(expected, sort == "oldest")], (text, chosen)
        times = [h["created_at"] for h in result["hits"]]
        assert times == sorted(times, reverse=sort == "newest")
    chosen.clear()
    ranked = loop.run_until_complete(plan.search_transcripts(reader, parse(COMMON), limit=10))
    assert ranked["sort"] == "relevance"
    assert ranked["hits"]
    assert chosen == []
