"""What a hit quotes is what the model came for (issue 44, item 7), end to end over stdio and HTTP.

One store, written with the app's full-text index ("fts" mode) and without it ("scan" mode): a meeting where
one line says every word of the query among lines that share one word with it, one that says every word each
in a line of its own, a meeting that lacks one word of it (over 64 KiB, shaped from the index), one that has
only half of its words, and one in the trash that says every word. The answers must show:

- a moment with under half the clauses of its hit's best moment is left out (a stray "page" beside "pricing
  page copy ready");
- a hit whose words are spread over its lines, below one that says them in one line, quotes one line;
- below a hit with every clause, a hit that lacks some is still on the page (a hit need not have every word)
  but quotes its best moment only;
- without a hit that has every clause, hits keep their three best moments;
- nothing of the trash, ever.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.checked import searched
from tests.support.server import ServerProcess, SharedServers

pytestmark = pytest.mark.transports("stdio", "http")

QUERY = "pricing page copy ready"
MARKER = "kumquat"  # only in the trash
FILLER = "We walk through the onboarding screens and the menu once more. "


def meeting(b: StoreBuilder, segments: list[tuple[str | None, str]], **fields: Any) -> str:
    """A meeting as the app writes it: the text is its segments', one after the other."""
    return b.transcript(source="meeting", raw_text=" ".join(t for _, t in segments), segments=segments, **fields)


def write_store(path: Path, *, fts: bool) -> Path:
    b = StoreBuilder(path, fts=fts)
    meeting(
        b,
        [
            ("Tariq", "Soylent mentioned the billing page again on their last call."),
            ("Sven", "I will have the new pricing page copy ready by Thursday."),
            ("Lucia", "I'll run the accessibility audit on every page of the relaunch."),
            ("Tariq", "The search page loads slowly."),
        ],
        id="t-full",
        title="Website relaunch standup",
        created_at=ts(3),
    )
    meeting(
        b,
        [
            ("Sven", "The search page redesign is almost ready for the design review."),
            ("Jonas", "Acme mentioned the search page again."),
            ("Sven", "We have 19 open bugs on the search page."),
            ("Jonas", "The inbox is ready too."),
        ],
        id="t-half",
        title="Call with Acme",
        created_at=ts(4),
    )
    meeting(  # every word of the query, each in a line of its own, among lines that say none of them
        b,
        [
            ("Ana", "The pricing is fixed for now."),
            *(("Ben" if i % 2 else "Ana", FILLER) for i in range(12)),
            ("Ben", "That page loads slowly."),
            ("Ana", "Copy that."),
            ("Ben", "Are we ready to ship?"),
        ],
        id="t-spread",
        title="Weekly sync",
        created_at=ts(6),
    )
    meeting(  # over 64 KiB: with the index, its hit is shaped from the index and its matching segments
        b,
        [
            ("Ana", "The billing page copy is ready for review."),
            *(("Ben" if i % 2 else "Ana", FILLER * 4) for i in range(300)),
            ("Ben", "The help page copy is ready as well."),
            ("Ana", "And the settings page copy is ready."),
        ],
        id="t-near-long",
        title="All-day workshop",
        created_at=ts(5),
    )
    meeting(
        b,
        [("Priya", f"The pricing page copy is ready, {MARKER}.")],
        id="t-trashed-0042",
        title="Secret pricing",
        created_at=ts(2),
        deleted_at=ts(1),
    )
    return b.close()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {m: tmp_path_factory.mktemp(f"near-{m}") / "magnotia.db" for m in ("fts", "scan")}
    return {m: write_store(path, fts=m == "fts") for m, path in made.items()}


@pytest.fixture(params=["fts", "scan"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(mode: str, shared_servers: SharedServers, stores: dict[str, Path]) -> ServerProcess:
    return shared_servers.get(stores[mode], "2025-11-25")


def search(server: ServerProcess, mode: str, query: str | dict[str, Any]) -> dict[str, Any]:
    arguments = {"query": query} if isinstance(query, str) else query
    return searched(server, mode, arguments, (MARKER, "t-trashed-0042", "Secret pricing"))


def test_a_hit_quotes_its_best_moment_not_a_stray_word(server: ServerProcess, mode: str) -> None:
    hits = search(server, mode, QUERY)["hits"]
    assert hits[0]["transcript_id"] == "t-full"
    assert sorted(hits[0]["matched_terms"]) == sorted(QUERY.split())
    # Its other lines share only "page" with the query: a quarter of the best line's clauses.
    assert [(m["speaker"], m["seq"]) for m in hits[0]["moments"]] == [("Sven", 1)]
    assert "**pricing** **page** **copy** **ready**" in hits[0]["moments"][0]["snippet"]


def test_a_hit_whose_words_are_spread_over_lines_quotes_one_of_them(server: ServerProcess, mode: str) -> None:
    hits = search(server, mode, QUERY)["hits"]
    assert [h["transcript_id"] for h in hits[:2]] == ["t-full", "t-spread"]  # both have every word
    spread = hits[1]
    assert sorted(spread["matched_terms"]) == sorted(QUERY.split())
    # Its best line has one of the four words, the first hit's all four: one line is enough to show what it is.
    assert len(spread["moments"]) == 1, spread


def test_a_near_miss_below_a_full_match_stays_and_quotes_one_moment(server: ServerProcess, mode: str) -> None:
    hits = search(server, mode, QUERY)["hits"]
    assert [h["transcript_id"] for h in hits] == ["t-full", "t-spread", "t-near-long", "t-half"]
    assert set(hits[2]["matched_terms"]) == {"page", "copy", "ready"}
    assert set(hits[3]["matched_terms"]) == {"page", "ready"}
    for near in hits[2:]:
        assert len(near["moments"]) == 1, near  # each has three lines with its words
        assert "**page**" in near["moments"][0]["snippet"]
        assert "**ready**" in near["moments"][0]["snippet"]
        assert "snippet" not in near  # the moment quotes where it matched


def test_without_a_full_match_hits_keep_their_best_moments(server: ServerProcess, mode: str) -> None:
    # "pricing" is said only in the hit with every word (and the trash): without it, nobody has every clause.
    hits = search(server, mode, "page ready launch")["hits"]
    by_id = {h["transcript_id"]: h for h in hits}
    assert set(by_id) == {"t-full", "t-half", "t-near-long", "t-spread"}
    # Each best line says two of the three clauses; a line with one is half of that, and stays.
    assert [len(by_id[i]["moments"]) for i in ("t-full", "t-half", "t-near-long")] == [3, 3, 3]
    # Its lines each say one of them, below a hit whose best line says two: one line shows what it is.
    assert len(by_id["t-spread"]["moments"]) == 1
