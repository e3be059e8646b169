"""search_transcripts since relevance ranking, end to end: every revision, the trash, bad arguments.

One small store, written twice (with the app's full-text index and without it).
Its best match for the queries below is a transcript in the trash, with a speaker
and a word ("kumquat") that only the trash holds: no hit, snippet or moment may
ever show it, whatever the sort, the speaker or the mode. Each message the server
writes is validated against the official schema of the revision in use
(tests/support/wire_schema.py); results are also checked against the tool's own
outputSchema where the revision has one.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.search.querylang import parse
from tests.support.protocol import REVISIONS, at_least
from tests.support.server import ServerProcess, SharedServers

Start = Callable[..., ServerProcess]

pytestmark = pytest.mark.transports("stdio", "http")

MARKER = "kumquat"  # only in the trash
SECRET_TITLE = "Secret budget launch hiring"
LIVE_TRANSCRIPTS = 10  # in write_store: all but the trashed one


def meeting(b: StoreBuilder, segments: list[tuple[str | None, str]], **fields: Any) -> str:
    """A meeting as the app writes it: the text is its segments', one after the other."""
    return b.transcript(source="meeting", raw_text=" ".join(t for _, t in segments), segments=segments, **fields)


def write_store(path: Path, *, fts: bool) -> tuple[Path, dict[str, str]]:
    b = StoreBuilder(path, fts=fts)
    ids = {
        "sync": meeting(
            b,
            [
                ("Ana", "The budget for the launch is approved."),
                ("Ben", "Hiring waits until after the launch."),
                ("Ana", "Budget review on Friday; the budget is tight."),
                ("Ben", "Fine."),
            ],
            id="t-sync",
            title="Weekly sync",
            created_at=ts(3),
        ),
        "roadmap": b.transcript(
            id="t-roadmap",
            title="Roadmap notes",
            raw_text="The roadmap and the launch plans for June.",
            created_at=ts(5),
        ),
        "hiring": b.transcript(
            id="t-hiring",
            title="Hiring",
            source="file",
            raw_text="Two engineers to hire; the hiring budget.",
            created_at=ts(7),
        ),
        "groceries": b.transcript(id="t-groceries", title="Groceries", raw_text="milk and bread", created_at=ts(9)),
        "trashed": meeting(
            b,
            [
                ("Ana", f"budget launch hiring budget launch {MARKER} approved review"),
                ("Ben", f"launch budget hiring {MARKER}"),
            ],
            id="t-trashed-0042",
            title=SECRET_TITLE,
            created_at=ts(10),
            deleted_at=ts(11),
        ),
    }
    for i in range(6):  # the topic words are in few transcripts, so BM25 tells them apart
        b.transcript(
            id=f"t-note-{i}",
            title=f"Note {i}",
            raw_text=f"coffee with a friend, river walk number {i}",
            created_at=ts(12 + i),
        )
    return b.close(), ids


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, str]]]:
    return {
        "fts": write_store(tmp_path_factory.mktemp("search-fts") / "magnotia.db", fts=True),
        "scan": write_store(tmp_path_factory.mktemp("search-scan") / "magnotia.db", fts=False),
    }


# Every combination the tests walk: the queries, sorts and speakers that could reach the trashed transcript.
QUERIES = ["budget launch hiring", "what did Ana say about the budget", '"budget launch"', MARKER, "kumq*", "launch"]
SORTS = ["relevance", "newest", "oldest"]
SPEAKERS = [None, "Ana", "ben"]


def call(server: ServerProcess, arguments: dict[str, Any]) -> dict[str, Any]:
    return server.result("search_transcripts", arguments)


def check_hits(result: dict[str, Any], arguments: dict[str, Any]) -> None:
    """What holds of every search result, whatever the arguments."""
    sort = arguments.get("sort", "relevance")
    # A hint only where the search found little (tools/hints); what it says the store holds is never the trash.
    assert set(result) - {"hint"} == {"query", "mode", "sort", "ranked_among", "hits", "next_cursor", "max_tokens"}
    if "hint" in result:
        assert result["hint"]["found"] == ("partial" if result["hits"] else "nothing")
        assert result["hint"]["store"]["transcripts"] == LIVE_TRANSCRIPTS
        assert MARKER not in json.dumps(result["hint"])
    assert result["query"] == arguments["query"]
    assert result["sort"] == sort
    hits = result["hits"]
    assert len(hits) <= arguments.get("limit", 10)
    assert isinstance(result["ranked_among"], int)
    if sort == "relevance":
        assert result["ranked_among"] >= len(hits)
        scores = [h["score"] for h in hits]
        assert scores == sorted(scores, reverse=True)
    else:
        assert result["ranked_among"] == len(hits)
        times = [(h["created_at"], h["transcript_id"]) for h in hits]
        assert times == sorted(times, reverse=sort == "newest")
    for hit in hits:
        assert hit["matched_terms"]
        covered = parse(arguments["query"]).clauses_matched(hit["matched_terms"])
        assert covered <= hit["score"] < covered + 1
        assert len(hit["moments"]) <= 3
        for moment in hit["moments"]:
            assert set(moment) == {"seq", "start_ms", "end_ms", "speaker", "snippet"}
            assert moment["start_ms"] <= moment["end_ms"]
            assert "**" in moment["snippet"]
        assert "segment" not in hit  # it repeated a moment
        # Moments quote where it matched, with time and speaker: no snippet repeats them; without any, a snippet.
        assert ("snippet" in hit) is not bool(hit["moments"])
        speaker = arguments.get("speaker")
        if speaker is not None:
            assert hit["moments"]
            assert {m["speaker"].lower() for m in hit["moments"]} == {speaker.strip().lower()}


# -- every revision ---------------------------------------------------------------------------

REVISION_CALLS: list[dict[str, Any]] = [
    {"query": "budget"},
    {"query": "what did we decide about the budget and the launch", "limit": 3},
    {"query": "launch budget", "sort": "newest"},
    {"query": "launch OR milk", "sort": "oldest", "limit": 50},
    {"query": "budget", "speaker": "ana"},
    {"query": "launch", "speaker": "Ben", "sort": "newest"},
    {"query": '"budget review" approved', "sort": "relevance"},
]


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_revision_gets_the_relevance_fields(
    revision: str, start_server: Start, stores: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    """sort and speaker are arguments; sort, ranked_among, score, matched_terms and moments come back, valid."""
    path, ids = stores["fts"]
    server = start_server(path)
    server.open(revision)
    tools = {t["name"]: t for t in server.request("tools/list")["result"]["tools"]}
    tool = tools["search_transcripts"]
    props = tool["inputSchema"]["properties"]
    assert props["sort"]["enum"] == ["relevance", "newest", "oldest"]
    assert props["speaker"]["type"] == "string"
    output_schema = tool.get("outputSchema")
    assert (output_schema is not None) is at_least(revision, "2025-06-18")
    if output_schema is not None:
        hit_schema = output_schema["properties"]["hits"]["items"]
        assert {"score", "matched_terms", "moments", "speakers", "duration_ms"} <= set(hit_schema["properties"])
        assert {"sort", "ranked_among"} <= set(output_schema["properties"])
    results = []
    for arguments in REVISION_CALLS:
        result = call(server, arguments)
        if output_schema is not None:
            jsonschema.validate(result, output_schema)
        check_hits(result, arguments)
        results.append(result)
    budget, question, newest, oldest, ana, ben, phrase = results
    assert [h["transcript_id"] for h in budget["hits"]] == [ids["sync"], ids["hiring"]]  # three mentions first
    assert budget["ranked_among"] == 2
    assert question["hits"][0]["transcript_id"] == ids["sync"]  # the only one with both terms
    assert [h["matched_terms"] for h in question["hits"]] == [["budget", "launch"], ["budget"], ["launch"]]
    # Both terms, then two hits of one, then one hit.
    assert [(m["seq"], m["speaker"]) for m in question["hits"][0]["moments"]] == [(0, "Ana"), (2, "Ana"), (1, "Ben")]
    assert [h["transcript_id"] for h in newest["hits"]] == [ids["sync"]]
    assert [h["transcript_id"] for h in oldest["hits"]] == [ids["sync"], ids["roadmap"], ids["groceries"]]
    assert [(m["seq"], m["speaker"]) for h in ana["hits"] for m in h["moments"]] == [(2, "Ana"), (0, "Ana")]
    assert [(m["seq"], m["speaker"]) for h in ben["hits"] for m in h["moments"]] == [(1, "Ben")]
    assert [h["score"] for h in ben["hits"]] == [1.0]  # in time order the score is the terms matched alone
    assert phrase["hits"][0]["matched_terms"] == ['"budget review"', "approved"]
    assert [m["seq"] for m in phrase["hits"][0]["moments"]] == [0, 2]


# -- bad arguments ------------------------------------------------------------------------------

BAD: list[tuple[dict[str, Any], str, str]] = [
    ({"sort": "best"}, "sort", "'relevance', 'newest', 'oldest'"),
    ({"sort": "Relevance"}, "sort", "'relevance'"),
    ({"sort": 1}, "sort", "string"),
    ({"sort": ["newest"]}, "sort", "string"),
    ({"speaker": ""}, "speaker", "at least 1"),
    ({"speaker": "   "}, "speaker", "must name a speaker"),
    ({"speaker": "x" * 201}, "speaker", "at most 200"),
    ({"speaker": 7}, "speaker", "string"),
    ({"speaker": ["Ana"]}, "speaker", "string"),
    ({"speaker": {"name": "Ana"}}, "speaker", "string"),
]


@pytest.mark.parametrize("revision", REVISIONS)
def test_bad_sort_and_speaker_are_invalid_arguments_naming_them(
    revision: str, start_server: Start, stores: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    """A clear invalid-argument answer, the revision's way: -32602 before 2025-11-25, an isError result from it."""
    server = start_server(stores["fts"][0])
    server.open(revision)
    for extra, named, says in BAD:
        response = server.call("search_transcripts", {"query": "budget", **extra})
        if at_least(revision, "2025-11-25"):
            result = response["result"]
            assert result["isError"] is True, response
            assert "structuredContent" not in result
            text = result["content"][0]["text"]
        else:
            assert "result" not in response, response
            assert response["error"]["code"] == -32602, response
            text = response["error"]["message"]
        assert f"'{named}'" in text, (extra, text)
        assert says in text, (extra, text)
    # The same arguments, valid, are answered.
    assert call(server, {"query": "budget", "sort": "oldest", "speaker": "Ana"})["hits"]


# -- the trash -----------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["fts", "scan"])
def test_the_trash_never_shows_in_any_sort_or_for_any_speaker(
    mode: str, shared_servers: SharedServers, stores: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    """The trashed transcript matches best (every term, many times, both speakers): nothing of it ever shows."""
    path, ids = stores[mode]
    server = shared_servers.get(path, "2025-11-25")
    start = len(server.raw_stdout)
    found_live = set()
    for query, sort, speaker in itertools.product(QUERIES, SORTS, SPEAKERS):
        arguments: dict[str, Any] = {"query": query, "sort": sort, "limit": 50}
        if speaker is not None:
            arguments["speaker"] = speaker
        result = call(server, arguments)
        assert result["mode"] == mode
        check_hits(result, arguments)
        hit_ids = [h["transcript_id"] for h in result["hits"]]
        assert ids["trashed"] not in hit_ids, arguments
        found_live |= set(hit_ids)
        assert MARKER not in repr(result["hits"]), arguments
        if query in (MARKER, "kumq*"):
            assert result["hits"] == [], arguments
            assert result["ranked_among"] == 0
    shown = b"".join(server.raw_stdout[start:]).decode()  # every byte written, the text blocks too
    assert SECRET_TITLE not in shown
    assert f"{MARKER} approved" not in shown
    assert ids["trashed"] not in shown
    # Not vacuous: the live transcripts these queries reach were found, in every sort and for the speakers.
    assert found_live == {ids["sync"], ids["roadmap"], ids["hiring"]}


def test_both_modes_answer_the_same(
    shared_servers: SharedServers, stores: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    """Same hits, order, terms, snippets and moments with and without the index; scores to 1e-6."""
    fts = shared_servers.get(stores["fts"][0], "2025-11-25")
    scan = shared_servers.get(stores["scan"][0], "2025-11-25")
    for query, sort, speaker in itertools.product(QUERIES, SORTS, SPEAKERS):
        arguments: dict[str, Any] = {"query": query, "sort": sort, "limit": 50}
        if speaker is not None:
            arguments["speaker"] = speaker
        a, b = call(fts, arguments), call(scan, arguments)
        assert (a["mode"], b["mode"]) == ("fts", "scan")
        assert [{**h, "score": None} for h in a["hits"]] == [{**h, "score": None} for h in b["hits"]], arguments
        assert [h["score"] for h in a["hits"]] == pytest.approx([h["score"] for h in b["hits"]], abs=1e-6)
        assert a["ranked_among"] == b["ranked_among"]
