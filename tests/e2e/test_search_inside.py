"""search_transcripts inside one transcript (transcript_id), end to end, with and without the full-text index.

A long meeting (well over the size read whole) is paged through: the moments of every page, put together,
are exactly the segments that match, in spoken order, none lost and none twice, each with its times and
speaker as the store holds them. The segments that match are worked out here from the words the meeting
was built from, not by the server's code. Also: one speaker's moments, a dictation without segments (its
matches as snippets at character offsets get_transcript reads from), ids that name nothing or the trash,
and misused cursors and filters. Every answer validates against the tool's outputSchema.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.args import cursors
from tests.support.protocol import LATEST_LEGACY
from tests.support.server import ServerProcess, SharedServers

pytestmark = pytest.mark.transports("stdio", "http")

MEETING = "t-offsite"
DICTATION = "t-dictation"
TRASHED = "t-trashed"
SEGMENTS = 2_400
# "hiring" is matched whole (its stem would be too short a prefix); "budget" as the prefix "budg" (budgets too).
WORDS = ("budget", "roadmap", "hiring", "hired", "review", "launch", "café", "numbers", "budgets", "hire", "plan")
SPEAKERS = ("Dana", "Ben", None, "Ána")


def _said(k: int) -> tuple[str | None, str]:
    """Segment k: a few words of WORDS, most often without hiring (or hired, or hire)."""
    n = 3 + k % 7
    words = [WORDS[(k * 5 + i * 3) % len(WORDS)] for i in range(n)]
    if k % 3:  # two segments in three say nothing of hiring
        words = [w for w in words if not w.startswith("hir")] or ["periwinkle"]
    if k in (11, 1_200, 2_398):
        words += ["the", "periwinkle", "plan"]
    return SPEAKERS[k % len(SPEAKERS)], " ".join(words)


SAID = [_said(k) for k in range(SEGMENTS)]
DICTATED = (
    "Notes on the budget. Call the bank first thing tomorrow about the loan, then the accountant about "
    + "the budget again, and again the budget. "
    + "filler words to move along " * 12
    + "Last: the budgets for next year, and the café on the corner. "
    + "more filler to move along " * 12
    + "Budget ends it."
)


def _write(path: Path, *, fts: bool) -> Path:
    b = StoreBuilder(path, fts=fts)
    raw = " ".join(text for _, text in SAID)
    assert len(raw.encode()) > 64 * 1024  # read by window, never whole
    b.transcript(id=MEETING, title="Offsite", source="meeting", raw_text=raw, created_at=ts(10), segments=SAID)
    b.transcript(id=DICTATION, title="Memo", raw_text="draft", formatted_text=DICTATED, created_at=ts(11), segments=[])
    b.transcript(
        id=TRASHED,
        title="Hiring plan",
        source="meeting",
        raw_text="hiring budget hiring",
        created_at=ts(12),
        deleted_at=ts(13),
        segments=[("Dana", "hiring budget"), ("Dana", "hiring")],
    )
    b.transcript(id="t-other", title="Other", raw_text="hiring elsewhere, a budget too", created_at=ts(9))
    return b.close()


@pytest.fixture(scope="module", params=["fts", "scan"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    mode = request.param
    return _write(tmp_path_factory.mktemp(f"inside-{mode}") / "magnotia.db", fts=mode == "fts")


class Client:
    """One server: search_transcripts answers, checked against its outputSchema; errors as the model reads them."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        tools = server.request("tools/list")["result"]["tools"]
        self.schema = next(t["outputSchema"] for t in tools if t["name"] == "search_transcripts")

    def search(self, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self.server.result("search_transcripts", arguments)
        jsonschema.validate(result, self.schema)
        return result

    def error(self, arguments: dict[str, Any]) -> str:
        result = self.server.call("search_transcripts", arguments)["result"]
        assert result["isError"] is True, result
        return str(result["content"][0]["text"])


@pytest.fixture
def client(shared_servers: SharedServers, store: Path) -> Client:
    return Client(shared_servers.get(store, LATEST_LEGACY))


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _expected(matches: Any, speaker: str | None = None) -> list[dict[str, Any]]:
    """The moments a search inside the meeting must give: (seq, times, speaker) of each segment that matches."""
    out, start = [], 0
    for seq, (who, text) in enumerate(SAID):
        end = start + 1000 + 50 * len(text)  # as the store factory times segments
        if matches(_tokens(text)) and (speaker is None or who == speaker):
            out.append({"seq": seq, "start_ms": start, "end_ms": end, "speaker": who})
        start = end
    assert 20 < len(out) < SEGMENTS  # some, not all: a real selection to page through
    return out


def _pages(client: Client, arguments: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every page of a search inside one transcript: (the moments in order, the answers)."""
    moments, answers = [], []
    call = dict(arguments)
    while True:
        answer = client.search(call)
        answers.append(answer)
        assert len(answer["hits"]) == 1
        hit = answer["hits"][0]
        assert (hit["transcript_id"], hit["title"], hit["source"]) == (arguments["transcript_id"], "Offsite", "meeting")
        assert "segment" not in hit
        assert "snippet" not in hit
        assert 1 <= len(hit["moments"]) <= arguments.get("limit", 10)
        moments += hit["moments"]
        if answer["next_cursor"] is None:
            return moments, answers
        call = {**arguments, "cursor": answer["next_cursor"]}


HIRING = {"query": "hiring", "transcript_id": MEETING}


def _hiring(tokens: list[str]) -> bool:
    return "hiring" in tokens


@pytest.mark.parametrize("page", [{"limit": 7}, {"limit": 50, "max_tokens": 2000, "speaker": "ben"}])
def test_every_matching_moment_comes_once_in_spoken_order_across_pages(client: Client, page: dict[str, Any]) -> None:
    """Pages cut by limit, or by the budget: together, exactly the segments that match, in order."""
    expected = _expected(_hiring, "Ben" if "speaker" in page else None)
    moments, answers = _pages(client, {**HIRING, **page})
    assert [{k: m[k] for k in ("seq", "start_ms", "end_ms", "speaker")} for m in moments] == expected
    assert all(a["moments_found"] == len(expected) for a in answers)
    assert len(answers) >= 3
    for m in moments:
        marked = re.findall(r"\*\*(.+?)\*\*", m["snippet"])
        assert marked, m
        assert all(w.lower() == "hiring" for w in marked), m
    if "max_tokens" in page:  # cut for the budget, as every answer is: the note says so
        assert len(answers[0]["hits"][0]["moments"]) < 50
        assert "fit within max_tokens=2000" in answers[0]["note"]
    else:
        assert all(len(a["hits"][0]["moments"]) == 7 for a in answers[:-1])


def test_a_phrase_or_a_word_and_one_speaker(client: Client) -> None:
    """The same query language as every search: a phrase, OR, stems; speaker keeps only theirs (any case, accent)."""
    query = {"query": '"periwinkle plan" OR budget', "transcript_id": MEETING, "limit": 50}

    def matches(tokens: list[str]) -> bool:
        joined = " ".join(tokens)
        return "periwinkle plan" in joined or any(t.startswith("budg") for t in tokens)

    moments, answers = _pages(client, query)
    assert [m["seq"] for m in moments] == [m["seq"] for m in _expected(matches)]
    assert sorted(answers[0]["hits"][0]["matched_terms"]) == ['"periwinkle plan"', "budget"]  # each alternative
    details = client.server.result("get_transcript", {"id": MEETING, "max_chars": 1})
    assert {k: answers[0]["hits"][0][k] for k in ("speakers", "duration_ms")} == {
        k: details[k] for k in ("speakers", "duration_ms")
    }

    for asked, label in (("dana", "Dana"), ("ana", "Ána")):
        mine, _ = _pages(client, {**HIRING, "speaker": asked, "limit": 50})
        assert [m["seq"] for m in mine] == [m["seq"] for m in _expected(_hiring, label)]
        assert {m["speaker"] for m in mine} == {label}
    nobody = client.search({**HIRING, "speaker": "Mallory"})
    assert (nobody["hits"], nobody["moments_found"], nobody["next_cursor"]) == ([], 0, None)


def test_a_dictation_without_segments_gives_snippets_at_offsets_get_transcript_reads(client: Client) -> None:
    """Each match is in one snippet; the offset is where its text starts in the text get_transcript shows."""
    answer = client.search({"query": "budget", "transcript_id": DICTATION, "limit": 50})
    assert answer["next_cursor"] is None
    (hit,) = answer["hits"]
    moments = hit["moments"]
    assert answer["moments_found"] == len(moments) >= 3
    assert all(set(m) == {"offset", "snippet"} for m in moments)
    plain = [m["snippet"].replace("**", "").strip("…") for m in moments]
    for m, text in zip(moments, plain, strict=True):
        window = client.server.result("get_transcript", {"id": DICTATION, "offset": m["offset"], "max_chars": 300})
        assert window["format"] == "formatted"
        assert window["text"].startswith(text), (m, window["text"])
    # Every match of the word (any ending) is shown in exactly one snippet.
    spans = [(m["offset"], m["offset"] + len(text)) for m, text in zip(moments, plain, strict=True)]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    found = [w.start() for w in re.finditer(r"(?i)\bbudget", DICTATED)]
    assert len(found) == 5
    assert all(sum(a <= f < b for a, b in spans) == 1 for f in found)
    # Paged one at a time: the same snippets.
    one, seen = {"query": "budget", "transcript_id": DICTATION, "limit": 1}, []
    while True:
        page = client.search(one)
        seen += page["hits"][0]["moments"]
        if page["next_cursor"] is None:
            break
        one = {**one, "cursor": page["next_cursor"]}
    assert seen == moments
    # No segments, so no speaker said anything.
    assert client.search({"query": "budget", "transcript_id": DICTATION, "speaker": "Dana"})["hits"] == []


def test_a_title_term_matches_no_moment(client: Client) -> None:
    """title:... restricts a term to titles: inside one transcript it matches none of its segments, with or without
    the index (the index's segment table has no title to filter on: it once answered -32603)."""
    alone = client.search({"query": "title:offsite", "transcript_id": MEETING})
    assert (alone["hits"], alone["moments_found"]) == ([], 0)
    moments, _ = _pages(client, {"query": "title:offsite OR hiring", "transcript_id": MEETING, "limit": 50})
    assert [m["seq"] for m in moments] == [m["seq"] for m in _expected(_hiring)]


def test_no_transcript_or_one_in_the_trash_is_not_found(client: Client) -> None:
    for tid in ("no-such-id", TRASHED):
        said = client.error({"query": "hiring", "transcript_id": tid})
        assert said == f"Transcript {tid} not found"
        got = client.server.call("get_transcript", {"id": tid})["result"]
        assert got["content"][0]["text"] == said


def test_cursors_and_filters_misused_are_invalid_arguments_naming_them(client: Client) -> None:
    first = client.search({**HIRING, "limit": 2})
    cursor = first["next_cursor"]
    assert cursor is not None
    across = cursors.encode("search", (1, 10))  # what a search across transcripts issues
    for arguments, named in (
        ({"query": "hiring", "transcript_id": DICTATION, "cursor": cursor}, "cursor"),  # another transcript's
        ({"query": "hiring", "cursor": cursor}, "cursor"),  # without its transcript
        ({**HIRING, "cursor": across}, "cursor"),  # a search's, across transcripts
        ({**HIRING, "cursor": cursor[:-3] + "abc"}, "cursor"),  # edited
        ({**HIRING, "since": "2026-05-01"}, "since"),
        ({**HIRING, "source": "meeting"}, "source"),
    ):
        said = client.error(arguments)
        assert f"'{named}'" in said, (arguments, said)
    # The cursor itself, as issued, goes on.
    assert client.search({**HIRING, "limit": 2, "cursor": cursor})["hits"][0]["moments"][0]["seq"] > 0
