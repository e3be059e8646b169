"""Every answer fits what a host accepts: bounded by tokens, not characters, and continuable when cut.

Claude Code warns from 10,000 tokens of tool output and refuses more than
25,000 by default. The server holds every answer to a budget of estimated
tokens (8,000 by default, 20,000 at most). Here each answer is measured as a
host shows it to the model, the larger of its text content and its serialized
structuredContent, by two real tokenizers (tests/support/tokencount.py; the
larger count), on three 10-hour meetings: Chinese and Japanese, emoji-heavy,
and English. Where the tokenizers are not installed the counts are not checked
(the rest is). Reading on from where an answer was cut
must give back the whole text, each character once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from magnotia_mcp.budget import answer_cost
from tests.support import tokencount
from tests.support.protocol import LATEST_LEGACY
from tests.support.server import ServerProcess, SharedServers

DEFAULT_TOKENS = 8_000
HARD_CAP = 20_000
HOST_WARNS = 10_000
SEGMENTS = 21_000  # a 10-hour meeting: about 1.6 million characters in 21,000 segments

pytestmark = [pytest.mark.transports("stdio", "http"), pytest.mark.calibration]

CJK_WORDS = (
    *("会議", "予算", "来週", "の", "について", "話しました"),
    *("我们", "讨论了", "计划", "。", "、", "新しい", "製品"),
)
EMOJI_WORDS = ("👍🏽", "🎉", "ok", "👨\u200d👩\u200d👧\u200d👦", "🚀", "plan", "❤️", "😀😀", "🇯🇵", "go")
LATIN_WORDS = ("budget", "roadmap", "we", "agreed", "on", "the", "launch", "for", "next", "quarter", "and")


def _segments(words: tuple[str, ...], joiner: str, size: int) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    for k in range(SEGMENTS):
        n = size // 2 + (k * 7) % size
        out.append((("Ana", "Bo", "Chen")[k % 3], joiner.join(words[(k * 5 + i * 3) % len(words)] for i in range(n))))
    return out


MEETINGS = {
    "cjk": ("00000000-0000-4000-8000-0000000000c1", _segments(CJK_WORDS, "", 36)),
    "emoji": ("00000000-0000-4000-8000-0000000000e1", _segments(EMOJI_WORDS, " ", 30)),
    "latin": ("00000000-0000-4000-8000-0000000000a1", _segments(LATIN_WORDS, " ", 22)),
}
RAW = {kind: " ".join(text for _, text in said) for kind, (_, said) in MEETINGS.items()}
LONG_TITLE = "第三四半期の予算と採用計画についての長い会議の記録" * 40  # about 1,000 CJK characters
ITEMS = 100


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    b = StoreBuilder(tmp_path_factory.mktemp("budget") / "magnotia.db")
    for day, (kind, (tid, said)) in enumerate(MEETINGS.items(), start=1):
        assert len(RAW[kind]) > 900_000, (kind, len(RAW[kind]))  # 10-hour meeting size
        b.transcript(
            id=tid, title=f"Offsite {kind}", source="meeting", raw_text=RAW[kind], created_at=ts(day), segments=said
        )
    for k in range(ITEMS):  # a page of 100 items, each with a long CJK title, for lists and search
        tid = f"00000000-0000-4000-8000-{k:012d}"
        b.transcript(
            id=tid,
            title=f"{k} {LONG_TITLE}",
            source="meeting",
            raw_text=f"予算 会議 {k} " + "来週の計画について話しました。" * 20,
            created_at=ts(10, minute=k),
        )
        b.task(transcript_id=tid, title=f"{k} {LONG_TITLE}", notes=LONG_TITLE, created_at=ts(10, minute=k))
    b.close()
    return b.path


@pytest.fixture
def srv(shared_servers: SharedServers, store: Path) -> ServerProcess:
    return shared_servers.get(store, LATEST_LEGACY)


COUNTED = tokencount.missing() is None


def host_tokens(shown: str) -> float:
    """shown's tokens by the larger of two real tokenizers' counts; 0 where they are not installed."""
    return tokencount.most(shown) if COUNTED else 0


def tool_tokens(result: dict[str, Any]) -> float:
    """The tools/call result as a host shows it to the model: its text, or structuredContent's JSON instead
    (Claude Code shows JSON.stringify(structuredContent) when there is one); the larger of the two."""
    shown = "".join(block["text"] for block in result["content"] if block["type"] == "text")
    cost = host_tokens(shown)
    if "structuredContent" in result:
        cost = max(
            cost, host_tokens(json.dumps(result["structuredContent"], ensure_ascii=False, separators=(",", ":")))
        )
    return cost


def call(srv: ServerProcess, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """The tool's answer (checked to be one, not an error) and what it costs a host."""
    response = srv.call(tool, arguments)
    assert "result" in response, response
    result = response["result"]
    assert result["isError"] is False, result["content"][0]["text"][:500]
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    return result["structuredContent"], tool_tokens(result)


@pytest.mark.parametrize("kind", list(MEETINGS))
@pytest.mark.parametrize(
    ("arguments", "cap"),
    [
        pytest.param({}, DEFAULT_TOKENS, id="default"),
        pytest.param({"max_chars": 100_000}, DEFAULT_TOKENS, id="max_chars"),
        pytest.param({"max_chars": 100_000, "max_tokens": HARD_CAP}, HARD_CAP, id="max"),
        pytest.param(
            {"max_chars": 100_000, "max_tokens": HARD_CAP, "include_segments": True}, HARD_CAP, id="max-segments"
        ),
        pytest.param(
            {"max_chars": 100_000, "max_tokens": HARD_CAP, "format": "raw", "offset": 500_000}, HARD_CAP, id="max-mid"
        ),
    ],
)
def test_a_window_of_a_long_meeting_stays_within_the_budget_and_says_it_was_cut(
    srv: ServerProcess, kind: str, arguments: dict[str, Any], cap: int
) -> None:
    tid, _ = MEETINGS[kind]
    window, cost = call(srv, "get_transcript", {"id": tid, **arguments})
    assert cost <= cap  # within the budget, by the real tokenizers' count
    assert window["max_tokens"] == cap
    offset = arguments.get("offset", 0)
    asked = min(arguments.get("max_chars", 20_000), len(RAW[kind]) - offset)
    assert window["text"] == RAW[kind][offset : offset + len(window["text"])]
    if kind == "latin" and not arguments:  # 20,000 characters of English: about 5,000 tokens, within 8,000
        assert len(window["text"]) == asked
        assert window["truncated"] is False
        return
    assert 0 < len(window["text"]) < asked  # cut short of what max_chars asked, and not to nothing
    assert window["truncated"] is True
    assert window["next_offset"] == offset + len(window["text"])
    assert f"offset={window['next_offset']}" in window["note"]
    assert "max_tokens" in window["note"]
    # What is left of the window asked for (which ends on a character cluster's boundary, so up to a
    # cluster short of max_chars).
    assert asked - 8 <= len(window["text"]) + window["next_max_chars"] <= asked


def test_an_answer_that_fits_is_not_cut(srv: ServerProcess) -> None:
    tid, _ = MEETINGS["latin"]
    window, cost = call(srv, "get_transcript", {"id": tid, "max_chars": 2_000})
    assert cost <= DEFAULT_TOKENS
    assert window["text"] == RAW["latin"][:2_000]
    assert window["truncated"] is False
    assert "note" not in window


@pytest.mark.transports("stdio")  # hundreds of calls: the windows are the same over HTTP (checked above)
@pytest.mark.parametrize("kind", list(MEETINGS))
def test_reading_on_from_each_cut_gives_back_the_whole_meeting_once(srv: ServerProcess, kind: str) -> None:
    tid, _ = MEETINGS[kind]
    parts: list[str] = []
    offset: int | None = 0
    worst = 0.0
    while offset is not None:
        window, cost = call(
            srv,
            "get_transcript",
            {"id": tid, "format": "raw", "offset": offset, "max_chars": 100_000, "max_tokens": HARD_CAP},
        )
        worst = max(worst, cost)
        assert window["offset"] == offset
        assert window["text"]  # every call moves on
        parts.append(window["text"])
        offset = window["next_offset"]
        assert offset is None or offset == window["offset"] + len(window["text"])
    assert "".join(parts) == RAW[kind]
    assert len(parts) > 10
    assert worst <= HARD_CAP


def _spans(said: list[tuple[str | None, str]]) -> list[tuple[int, int, int, int]]:
    """(start char, end char, start_ms, end_ms) of each segment, as the store factory times them."""
    out, pos, ms = [], 0, 0
    for _, text in said:
        end_ms = ms + 1000 + 50 * len(text)
        out.append((pos, pos + len(text), ms, end_ms))
        pos += len(text) + 1
        ms = end_ms
    return out


@pytest.mark.parametrize("kind", list(MEETINGS))
def test_a_time_window_cut_for_the_budget_is_read_to_its_end_by_what_the_answer_says(
    srv: ServerProcess, kind: str
) -> None:
    tid, said = MEETINGS[kind]
    spans = _spans(said)
    first, last = 3_000, 3_600  # about half an hour of the meeting: more than two answers of 4,000 tokens hold
    budget = 4_000
    window, cost = call(
        srv,
        "get_transcript",
        {
            "id": tid,
            "format": "raw",
            "start_ms": spans[first][2],
            "end_ms": spans[last][2],
            "max_chars": 100_000,
            "max_tokens": budget,
        },
    )
    expected = RAW[kind][spans[first][0] : spans[last - 1][1]]
    assert len(expected) < 100_000  # the time window, not max_chars, ends what was asked for
    assert cost <= budget
    assert window["truncated"] is True
    parts = [window["text"]]
    while window.get("next_max_chars"):
        assert f"max_chars={window['next_max_chars']}" in window["note"]
        window, cost = call(
            srv,
            "get_transcript",
            {
                "id": tid,
                "format": "raw",
                "offset": window["next_offset"],
                "max_chars": window["next_max_chars"],
                "max_tokens": budget,
            },
        )
        assert cost <= budget
        parts.append(window["text"])
    assert len(parts) > 2
    assert "".join(parts) == expected


@pytest.mark.parametrize("kind", list(MEETINGS))
@pytest.mark.parametrize("offset", [0, 333_333, 800_000])
def test_a_window_with_segments_cut_for_the_budget_is_the_longest_that_fits(
    srv: ServerProcess, kind: str, offset: int
) -> None:
    """Cut in memory, not read again: the text from offset, exactly the segments that overlap it, within the budget
    by the server's own estimate, and one more character (or cluster), with the segments it brings, would be over."""
    tid, said = MEETINGS[kind]
    spans = _spans(said)
    arguments = {"id": tid, "format": "raw", "offset": offset, "include_segments": True}
    window, cost = call(srv, "get_transcript", arguments)
    n = len(window["text"])
    assert window["truncated"] is True
    assert 0 < n < 20_000
    assert cost <= DEFAULT_TOKENS
    assert window["text"] == RAW[kind][offset : offset + n]
    overlapping = [k for k, (start, end, _, _) in enumerate(spans) if end > offset and start < offset + n]
    assert [s["seq"] for s in window["segments"]] == overlapping
    assert [(s["speaker"], s["text"]) for s in window["segments"]] == [said[k] for k in overlapping]
    assert answer_cost(window, 2) <= DEFAULT_TOKENS
    # The next window boundary: the same window read uncut, one cluster longer.
    wider = window
    for more in range(1, 9):
        wider, _ = call(srv, "get_transcript", {**arguments, "max_chars": n + more, "max_tokens": HARD_CAP})
        if len(wider["text"]) > n:
            break
    assert wider["truncated"] is False
    assert len(wider["text"]) > n
    # That window as the cut answer would show it: its text and segments, and the note's numbers moved on.
    end, rest = offset + n, window["next_max_chars"]
    wider_end, wider_rest = offset + len(wider["text"]), rest - (len(wider["text"]) - n)
    note = window["note"]
    for said_then, said_now in (
        (f"character {end}, {rest} characters", f"character {wider_end}, {wider_rest} characters"),
        (f"offset={end}", f"offset={wider_end}"),
        (f"max_chars={rest}", f"max_chars={wider_rest}"),
    ):
        assert said_then in note
        note = note.replace(said_then, said_now)
    longer = {
        **window,
        "text": wider["text"],
        "next_offset": wider["next_offset"],
        "segments": wider["segments"],
        "next_max_chars": wider_rest,
        "note": note,
    }
    assert answer_cost(longer, 2) > DEFAULT_TOKENS


def _pages(srv: ServerProcess, tool: str, arguments: dict[str, Any], items: str) -> list[list[dict[str, Any]]]:
    """Every page of a listing, following next_cursor; each checked to be within the default budget."""
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        page, cost = call(srv, tool, {**arguments, **({"cursor": cursor} if cursor else {})})
        assert cost <= DEFAULT_TOKENS
        pages.append(page[items])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
        assert page[items]  # a page that goes on is never empty
        if len(pages) == 1:
            assert "next_cursor" in page["note"]


def test_a_page_of_long_cjk_titles_shrinks_to_the_budget_and_the_cursor_gives_the_rest(srv: ServerProcess) -> None:
    pages = _pages(srv, "list_transcripts", {"limit": 100}, "transcripts")
    assert len(pages[0]) < 100
    ids = [t["id"] for page in pages for t in page]
    assert len(ids) == len(set(ids)) == ITEMS + len(MEETINGS)  # every transcript once
    assert all(t["title"].endswith(LONG_TITLE) for page in pages for t in page if not t["title"].startswith("Off"))


@pytest.mark.parametrize("limit", [100, 60, 30])
def test_a_shrunk_page_counts_every_transcript_it_was_asked_for(srv: ServerProcess, limit: int) -> None:
    """The server stops reading rows once they fill the budget, but the note still counts the whole page."""
    left, cursor, pages = ITEMS + len(MEETINGS), None, 0
    while cursor is not None or pages == 0:
        page, _ = call(srv, "list_transcripts", {"limit": limit, **({"cursor": cursor} if cursor else {})})
        shown, asked = len(page["transcripts"]), min(limit, left)
        if shown < asked:
            assert page["note"].startswith(f"Only {shown} of the {asked} transcripts asked for fit"), page["note"]
        else:
            assert "note" not in page
        left, cursor, pages = left - shown, page["next_cursor"], pages + 1
    assert left == 0
    assert pages > (ITEMS + len(MEETINGS)) // limit + 1  # the budget shrank pages


def test_a_page_of_tasks_shrinks_to_the_budget_and_the_cursor_gives_the_rest(srv: ServerProcess) -> None:
    pages = _pages(srv, "list_tasks", {"limit": 100}, "tasks")
    assert len(pages[0]) < 100
    ids = [t["id"] for page in pages for t in page]
    assert len(ids) == len(set(ids)) == ITEMS


def test_search_hits_cut_for_the_budget_go_on_with_a_cursor(srv: ServerProcess) -> None:
    pages = _pages(srv, "search_transcripts", {"query": "予算", "limit": 50}, "hits")
    assert len(pages) > 1
    ids = [h["transcript_id"] for page in pages for h in page]
    assert len(ids) == len(set(ids)) == 50
    whole, _ = call(srv, "search_transcripts", {"query": "予算", "limit": 50, "max_tokens": HARD_CAP})
    assert ids[: len(whole["hits"])] == [h["transcript_id"] for h in whole["hits"]]  # the same order


def wire_tokens(result: dict[str, Any]) -> float:
    """A resources/read or prompts/get result, whole, as JSON: more than a host shows of it."""
    return host_tokens(json.dumps(result, ensure_ascii=False))


@pytest.mark.parametrize("kind", list(MEETINGS))
def test_reading_a_long_meeting_as_a_resource_gives_its_start_and_where_to_read_on(
    srv: ServerProcess, kind: str
) -> None:
    tid, said = MEETINGS[kind]
    response = srv.request("resources/read", {"uri": f"magnotia://transcripts/{tid}"})
    assert wire_tokens(response["result"]) <= DEFAULT_TOKENS
    text = response["result"]["contents"][0]["text"]
    lines = [line for line in text.splitlines() if line.startswith("[")]
    assert 0 < len(lines) < SEGMENTS
    for line, (speaker, words) in zip(lines, said, strict=False):
        assert line.endswith(f" {speaker}: {words}")
    start_ms = _spans(said)[len(lines) - 1][3]
    assert f"start_ms={start_ms}" in text.splitlines()[-1]
    # Reading on from there starts with the first segment the resource did not show.
    window, _ = call(srv, "get_transcript", {"id": tid, "format": "raw", "start_ms": start_ms})
    assert window["text"].startswith(said[len(lines)][1])


def test_every_page_of_resources_fits_and_the_cursor_gives_the_rest(srv: ServerProcess) -> None:
    seen: list[str] = []
    cursor: str | None = None
    while True:
        response = srv.request("resources/list", {"cursor": cursor} if cursor else {})
        assert wire_tokens(response["result"]) <= DEFAULT_TOKENS
        seen += [r["uri"] for r in response["result"]["resources"]]
        cursor = response["result"].get("nextCursor")
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == ITEMS + len(MEETINGS)


@pytest.mark.parametrize("kind", list(MEETINGS))
def test_a_prompt_that_embeds_a_long_meeting_fits(srv: ServerProcess, kind: str) -> None:
    tid, _ = MEETINGS[kind]
    response = srv.request("prompts/get", {"name": "summarize_transcript", "arguments": {"transcript_id": tid}})
    assert wire_tokens(response["result"]) <= DEFAULT_TOKENS
    resource = response["result"]["messages"][0]["content"]["resource"]
    assert "Read on with the get_transcript tool" in resource["text"]


def test_a_review_of_meetings_with_long_titles_fits(srv: ServerProcess) -> None:
    response = srv.request("prompts/get", {"name": "review_meetings", "arguments": {"since": "2026-05-01"}})
    assert wire_tokens(response["result"]) <= DEFAULT_TOKENS
    text = response["result"]["messages"][0]["content"]["text"]
    assert "most recent are listed; there are more" in text


def test_details_too_large_for_the_budget_are_shortened_and_the_window_still_moves(
    start_server: Callable[..., ServerProcess], new_store: Callable[..., StoreBuilder]
) -> None:
    """A title of 20,000 CJK characters, a speaker label of 2,000 and 300 long tasks, read with the smallest
    budget: each answer fits, says what it shortened, and reading on still gives back the whole text."""
    b = new_store()
    text = "来週の会議で予算について話しました。" * 300
    tid = b.transcript(title=LONG_TITLE * 20, source="meeting", raw_text=text, segments=[("話者" * 1_000, text)])
    for k in range(300):
        b.task(transcript_id=tid, title=f"{k} {LONG_TITLE}")
    server = start_server(b.close())
    server.initialize(LATEST_LEGACY)
    parts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        window, cost = call(server, "get_transcript", {"id": tid, "offset": offset, "max_tokens": 1_000})
        assert cost <= 1_000
        assert window["text"]
        assert "shortened" in window["note"]
        assert window["title"].endswith("…")
        parts.append(window["text"])
        offset = window["next_offset"]
    assert "".join(parts) == text
    assert len(parts) > 10


@pytest.mark.transports("stdio")  # the fitting is the tool's, the same over HTTP
def test_a_window_of_one_cluster_with_a_segment_over_the_budget_is_answered_and_read_past(
    start_server: Callable[..., ServerProcess], new_store: Callable[..., StoreBuilder]
) -> None:
    """A line break followed by a combining mark is one cluster a window never splits, and the segment the window
    falls in costs more than the budget: the answer is that cluster with the segment left out and where to read
    on, not a window cut again and again (it ran until the call's time limit, 30 s, and failed)."""
    b = new_store()
    text = "ab\n\u0301cd " + "会議 " * 883
    tid = b.transcript(source="meeting", raw_text=text, segments=[("Ana", text)])
    server = start_server(b.close())
    server.initialize(LATEST_LEGACY)
    parts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        arguments = {"id": tid, "offset": offset, "max_tokens": 1_000, "include_segments": True}
        window, cost = call(server, "get_transcript", arguments)
        assert cost <= 1_000
        parts.append(window["text"])
        offset = window["next_offset"]
    assert "".join(parts) == text
    assert "\n\u0301" in parts
