"""Titles as a field and which words hit (issue 44, items 5 and 6), end to end over stdio and HTTP.

One store, written with the app's full-text index ("fts" mode) and without it ("scan" mode): three live
meetings titled "Design review" (one a long meeting, over 64 KiB of text, shaped from the index; one that
never says "design" or "review"), one in the trash with the same title, and many transcripts that merely
mention a design review. ``title:"design review"`` finds exactly the three; a hit found by its title alone
shows the transcript's opening; ``matched_terms`` lists each alternative a hit matched; nothing of the trash
ever shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.checked import searched
from tests.support.server import ServerProcess, SharedServers

pytestmark = pytest.mark.transports("stdio", "http")

MARKER = "kumquat"  # only in the trash
TRASHED_TITLE = "Design review (secret)"
MENTIONS = 8
OPENING = "Welcome everyone, today we look at the onboarding screens."
LONG_LINE = "Ana walks through the checkout flow and the payment page mockups once more. "


def meeting(b: StoreBuilder, segments: list[tuple[str | None, str]], **fields: Any) -> str:
    """A meeting as the app writes it: the text is its segments', one after the other."""
    return b.transcript(source="meeting", raw_text=" ".join(t for _, t in segments), segments=segments, **fields)


def write_store(path: Path, *, fts: bool) -> tuple[Path, dict[str, str]]:
    b = StoreBuilder(path, fts=fts)
    ids = {
        # Found by its title alone: its text says neither word; its formatted text opens the snippet.
        "quiet": b.transcript(
            id="t-quiet",
            title="Design review",
            source="meeting",
            raw_text="welcome everyone today we look at the onboarding screens and the relocation of the menu",
            formatted_text=OPENING + " The menu moves to the left. Priya agrees.",
            segments=[
                ("Priya", "welcome everyone today we look at the onboarding screens"),
                ("Ben", "and the relocation of the menu"),
            ],
            created_at=ts(3),
        ),
        "talky": meeting(
            b,
            [
                ("Ana", "This design review covers the new icons."),
                ("Priya", "We move the icons to the toolbar."),
            ],
            id="t-talky",
            title="Design Review",
            created_at=ts(4),
        ),
        # Over 64 KiB: with the index its hit is shaped from the index and its matching segments.
        "long": meeting(
            b,
            [
                ("Ana", "Opening of the long session: agenda and goals."),
                *(("Ben" if i % 2 else "Ana", LONG_LINE * 4) for i in range(240)),
                ("Ana", "Last point: the relocation of the help button."),
            ],
            id="t-long",
            title="Design review, all day",
            created_at=ts(5),
        ),
        "trashed": meeting(
            b,
            [("Priya", f"design review relocation move {MARKER}")],
            id="t-trashed-0042",
            title=TRASHED_TITLE,
            created_at=ts(20),
            deleted_at=ts(21),
        ),
        # Its title has every word of "hiring plan recap"; each of its lines only one of them.
        "plan": meeting(
            b,
            [
                ("Ana", "The roadmap recap is done."),
                ("Ben", "Hiring is on hold until June."),
                ("Ana", "Next we plan the offsite."),
            ],
            id="t-plan",
            title="Hiring plan recap",
            created_at=ts(2),
        ),
        "moving": b.transcript(
            id="t-moving",
            title="Office",
            raw_text="We move to the new office next month; the relocation budget is fixed.",
            created_at=ts(6),
        ),
    }
    for i in range(MENTIONS):  # text that mentions a design review, under other titles
        ids[f"mention-{i}"] = b.transcript(
            id=f"t-mention-{i}",
            title=f"Weekly sync {i}",
            raw_text=f"Before the design review we fix the bugs, item {i}; after the design review we ship.",
            created_at=ts(7 + i),
        )
    return b.close(), ids


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, str]]]:
    return {
        "fts": write_store(tmp_path_factory.mktemp("titles-fts") / "magnotia.db", fts=True),
        "scan": write_store(tmp_path_factory.mktemp("titles-scan") / "magnotia.db", fts=False),
    }


def search(server: ServerProcess, mode: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return searched(server, mode, {"limit": 50, **arguments}, (MARKER, "t-trashed-0042", TRASHED_TITLE))


def ids_of(result: dict[str, Any]) -> list[str]:
    return [h["transcript_id"] for h in result["hits"]]


@pytest.fixture(params=["fts", "scan"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(mode: str, shared_servers: SharedServers, stores: dict[str, tuple[Path, dict[str, str]]]) -> ServerProcess:
    return shared_servers.get(stores[mode][0], "2025-11-25")


TITLED = {"t-quiet", "t-talky", "t-long"}


@pytest.mark.parametrize("query", ['title:"design review"', "title:designs title:review", "TITLE:design"])
def test_a_title_term_finds_the_titles_only(server: ServerProcess, mode: str, query: str) -> None:
    """Among many transcripts that mention a design review, only those titled so are found; the trash never."""
    for sort in ("relevance", "newest", "oldest"):
        result = search(server, mode, {"query": query, "sort": sort})
        assert set(ids_of(result)) == TITLED, (query, sort)
        for hit in result["hits"]:
            assert hit["matched_terms"] == result["hits"][0]["matched_terms"]
            assert all(t.lower().startswith("title:") for t in hit["matched_terms"])
    # Written without title:, the words are found in the texts too.
    plain = search(server, mode, {"query": '"design review"'})
    assert set(ids_of(plain)) == TITLED | {f"t-mention-{i}" for i in range(MENTIONS)}


def test_a_hit_found_by_its_title_shows_the_opening(server: ServerProcess, mode: str) -> None:
    """No term matched in its texts: its snippet is the start of its formatted text, and it has no moments."""
    result = search(server, mode, {"query": 'title:"design review"'})
    hits = {h["transcript_id"]: h for h in result["hits"]}
    quiet = hits["t-quiet"]
    assert quiet["snippet"].startswith(OPENING)
    assert "**" not in quiet["snippet"]
    assert "Design review" not in quiet["snippet"]
    assert quiet["moments"] == []
    # The long meeting (shaped from the index in fts mode): the opening of its raw text.
    assert hits["t-long"]["snippet"].startswith("Opening of the long session")
    assert hits["t-long"]["moments"] == []
    # Found by its title and a word of its text: the snippet and moments are the text's.
    mixed = search(server, mode, {"query": "title:review icons"})
    assert ids_of(mixed)[0] == "t-talky"
    talky = mixed["hits"][0]
    assert talky["matched_terms"] == ["title:review", "icons"]
    assert "snippet" not in talky  # its moments quote where it matched
    assert all("**design**" not in m["snippet"].lower() for m in talky["moments"])
    assert [m["seq"] for m in talky["moments"]] == [0, 1]
    assert "**icons**" in talky["moments"][0]["snippet"]


def test_a_title_with_every_word_is_not_followed_by_lines_with_one(server: ServerProcess, mode: str) -> None:
    """The title says why the hit was found: a line that has one of the three words is not worth reading."""
    hit = search(server, mode, {"query": "hiring plan recap"})["hits"][0]
    assert hit["transcript_id"] == "t-plan"
    assert sorted(hit["matched_terms"]) == ["hiring", "plan", "recap"]
    assert hit["moments"] == []
    assert hit["snippet"]  # where its text matched first, as a hit without moments shows
    # Without its title having every word, the same lines are its moments.
    lines = search(server, mode, {"query": "hiring roadmap"})["hits"][0]
    assert lines["transcript_id"] == "t-plan"
    assert [m["seq"] for m in lines["moments"]] == [0, 1]


def test_matched_terms_are_the_alternatives_that_hit(server: ServerProcess, mode: str) -> None:
    """Each term or alternative a hit matched, once, as written: short, long and speaker paths alike."""
    result = search(server, mode, {"query": "move OR moving OR relocation"})
    terms = {h["transcript_id"]: h["matched_terms"] for h in result["hits"]}
    assert terms == {
        "t-moving": ["move", "relocation"],
        "t-talky": ["move"],
        "t-quiet": ["relocation"],
        "t-long": ["relocation"],
    }
    # Two clauses: the alternatives of each; the same word twice is listed once.
    two = search(server, mode, {"query": "relocation OR icons menu menu"})
    assert {h["transcript_id"]: h["matched_terms"] for h in two["hits"] if h["transcript_id"] == "t-quiet"} == {
        "t-quiet": ["relocation", "menu"]
    }
    said = search(server, mode, {"query": "move OR moving OR relocation", "speaker": "Ben"})
    assert {h["transcript_id"]: h["matched_terms"] for h in said["hits"]} == {"t-quiet": ["relocation"]}


def test_a_speaker_and_a_title(server: ServerProcess, mode: str) -> None:
    """Which design reviews did Priya join: the titled meetings where she spoke, the trash never."""
    result = search(server, mode, {"query": 'title:"design review"', "speaker": "priya"})
    assert set(ids_of(result)) == {"t-quiet", "t-talky"}
    for hit in result["hits"]:
        assert hit["matched_terms"] == ['title:"design review"']
        assert hit["moments"] == []
    words = search(server, mode, {"query": 'title:"design review" icons', "speaker": "Ana"})
    assert ids_of(words)[0] == "t-talky"
    assert words["hits"][0]["matched_terms"] == ['title:"design review"', "icons"]
    assert [m["speaker"] for m in words["hits"][0]["moments"]] == ["Ana"]


@pytest.mark.parametrize("query", ["title", "title:", 'title:""', "title:*", 'title:"', "subtitle:design"])
def test_title_alone_is_a_word_not_an_error(server: ServerProcess, mode: str, query: str) -> None:
    """No input is a syntax error: title with nothing after it is searched as a word."""
    result = search(server, mode, {"query": query})
    assert result["query"] == query


def comparable(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit as both modes give it: the score apart (to 1e-6), and a long meeting's snippet, which the index cuts
    from its first matching segment and the scan from its whole text (docs/tools.md)."""
    return {**hit, "score": None, "snippet": None if hit["transcript_id"] == "t-long" else hit.get("snippet")}


QUERIES = [
    'title:"design review"',
    "title:design review",
    "title:design OR relocation",
    "move OR moving OR relocation",
    "title:review icons",
    "design title:office*",
]


def test_both_modes_answer_the_same(
    shared_servers: SharedServers, stores: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    """The same hits in the same order, with the same terms, snippets and moments, with and without the index."""
    fts = shared_servers.get(stores["fts"][0], "2025-11-25")
    scan = shared_servers.get(stores["scan"][0], "2025-11-25")
    found = 0
    for query in QUERIES:
        for extra in ({}, {"sort": "newest"}, {"speaker": "Ana"}):
            arguments = {"query": query, **extra}
            a, b = search(fts, "fts", arguments), search(scan, "scan", arguments)
            found += bool(a["hits"])
            assert [comparable(h) for h in a["hits"]] == [comparable(h) for h in b["hits"]], arguments
            assert [h["score"] for h in a["hits"]] == pytest.approx([h["score"] for h in b["hits"]], abs=1e-6)
    assert found >= len(QUERIES) * 2  # not vacuous: most of them find something
