"""Unit tests of the pure parts: dispatcher, search language, text windows, arguments, cursors, line splitting.

No server process here: each test calls the module the way the server does and
asserts on what a client would end up seeing. Where SQLite is the reference
(FTS5 tokenizing), a real in-memory SQLite answers.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from magnotia_mcp import cursors, revisions
from magnotia_mcp.arguments import parse_time, validate
from magnotia_mcp.dispatch import Server
from magnotia_mcp.errors import InvalidArguments
from magnotia_mcp.querylang import fold, parse, snippet
from magnotia_mcp.stdio import MAX_LINE_BYTES, LineSplitter
from magnotia_mcp.text import PREVIEW_CHARS, preview, window_end
from magnotia_mcp.tools import TOOLS
from tests.textchecks import breaks_cluster

ODD_QUERIES = [
    '"',
    '""',
    "*",
    "**",
    "NEAR(",
    "NEAR(a b)",
    "-",
    "-foo",
    "AND",
    "OR",
    "NOT",
    "a OR",
    "OR a",
    "a OR OR b",
    '"unclosed phrase',
    'one "two',
    "🎉🎉",
    "👩‍👩‍👧",
    "x" * 500,
    "'; DROP TABLE transcripts; --",
    "title:foo",
    "foo:",
    "^foo",
    "a + b",
    "(a",
    "a)",
    "{a b}",
    "col : x",
    "*foo",
    "fo*o",
    "\\",
    "\x00",
    "e\u0301",
    "_",
    "a_b",
    "   ",
    '"*"',
    '"a" * "b"',
    "İ",
]


# -- the dispatcher --------------------------------------------------------------


def _never_opened() -> Any:
    raise AssertionError("the store was opened for a request that does not need it")


def _handle(server: Server, message: object) -> Any:
    return asyncio.run(server.handle_message(message))


def _request(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


@pytest.mark.parametrize("version", [pytest.param(v, id=v) for v in revisions.LEGACY])
def test_dispatcher_echoes_each_legacy_revision_without_opening_the_store(version: str) -> None:
    """initialize answers with the revision the client asked for, and never touches the store."""
    server = Server(_never_opened)
    response = _handle(server, _request("initialize", {"protocolVersion": version, "capabilities": {}}))
    assert response["result"]["protocolVersion"] == version
    assert server.legacy_revision == version


@pytest.mark.parametrize(
    "requested",
    [
        pytest.param("1999-01-01", id="unknown-date"),
        pytest.param("2026-07-28", id="modern-in-initialize"),
        pytest.param(20241105, id="a-number"),
        pytest.param(None, id="missing"),
    ],
)
def test_dispatcher_answers_an_unknown_revision_with_the_latest_legacy_one(requested: object) -> None:
    """A protocolVersion the server does not speak gets a counter-offer of 2025-11-25, not an error."""
    params: dict[str, Any] = {"capabilities": {}}
    if requested is not None:
        params["protocolVersion"] = requested
    response = _handle(Server(_never_opened), _request("initialize", params))
    assert response["result"]["protocolVersion"] == "2025-11-25"


def test_dispatcher_stays_silent_for_notifications_even_unknown_ones() -> None:
    """Notifications, known or not, get no response at all."""
    server = Server(_never_opened)
    for method in ("notifications/initialized", "notifications/cancelled", "notifications/whatever"):
        assert _handle(server, {"jsonrpc": "2.0", "method": method}) is None


@pytest.mark.parametrize(
    ("message", "code", "echoed_id"),
    [
        pytest.param({"jsonrpc": "2.0", "method": 1, "params": "bar"}, -32600, None, id="spec-example-no-id"),
        pytest.param({"id": 7, "method": "ping"}, -32600, 7, id="jsonrpc-missing"),
        pytest.param({"jsonrpc": "1.0", "id": "a", "method": "ping"}, -32600, "a", id="jsonrpc-wrong"),
        pytest.param({"jsonrpc": "2.0", "id": 3, "method": 5}, -32600, 3, id="method-not-string"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600, None, id="id-bool"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600, None, id="id-float"),
        pytest.param({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, -32600, None, id="id-object"),
        pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, -32600, None, id="id-null"),
        pytest.param({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}, -32600, 4, id="params-array"),
        pytest.param("just a string", -32600, None, id="not-an-object"),
        pytest.param(42, -32600, None, id="a-number"),
        pytest.param([], -32600, None, id="empty-array"),
        pytest.param([_request("ping")], -32600, None, id="array-before-initialize"),
        pytest.param(_request("no/such/method"), -32601, 1, id="unknown-method"),
    ],
)
def test_dispatcher_answers_invalid_messages_with_the_contract_code(
    message: object, code: int, echoed_id: object
) -> None:
    """Each malformed message gets one error object with the contract's code and the id when usable."""
    response = _handle(Server(_never_opened), message)
    assert isinstance(response, dict), response
    assert response["jsonrpc"] == "2.0"
    assert response["id"] == echoed_id
    assert response["error"]["code"] == code
    assert response["error"]["message"]


def test_dispatcher_answers_a_batch_only_in_2025_03_26() -> None:
    """2025-03-26 answers an array with an array (notifications left out); 2025-06-18 refuses arrays."""
    batch = [_request("ping", id=1), {"jsonrpc": "2.0", "method": "notifications/initialized"}, _request("ping", id=2)]
    old = Server(_never_opened)
    _handle(old, _request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}}))
    replies = _handle(old, batch)
    assert sorted(r["id"] for r in replies) == [1, 2]
    assert all(r["result"] == {} for r in replies)
    new = Server(_never_opened)
    _handle(new, _request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    refused = _handle(new, batch)
    assert refused["error"]["code"] == -32600
    assert refused["id"] is None


def test_dispatcher_decodes_invalid_utf8_and_bad_json_as_parse_errors() -> None:
    """handle_line turns undecodable bytes into -32700 with a null id."""
    server = Server(_never_opened)
    for line in (
        b"\xff\xfe{}",
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
        b"{'single': 'quotes'}",
        b"[" * 100_000,
    ):
        out = asyncio.run(server.handle_line(line))
        assert out is not None
        response = json.loads(out)
        assert response["error"]["code"] == -32700, line[:40]
        assert response["id"] is None


def test_dispatcher_encodes_a_lone_surrogate_as_valid_json_on_one_line() -> None:
    """A "\\ud800" escape echoed back still becomes one line of valid UTF-8 JSON."""
    server = Server(_never_opened)
    out = asyncio.run(server.handle_line(b'{"jsonrpc":"2.0","id":"\\ud800","method":"no/such"}'))
    assert out is not None
    assert b"\n" not in out
    response = json.loads(out.decode("utf-8"))
    assert response["id"] == "\ufffd"  # not Unicode: replaced, so strict JSON parsers accept the line
    assert response["error"]["code"] == -32601


def test_tool_input_schemas_describe_every_property_and_forbid_unknown_ones() -> None:
    """Each tool's inputSchema is an object schema, closed, with a description on every property."""
    assert list(TOOLS) == ["list_transcripts", "get_transcript", "search_transcripts", "list_tasks"]
    for tool in TOOLS.values():
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        for name, spec in schema["properties"].items():
            assert spec.get("description"), (tool.name, name)


# -- arguments ---------------------------------------------------------------------

LIST_SCHEMA = TOOLS["list_transcripts"].input_schema
GET_SCHEMA = TOOLS["get_transcript"].input_schema


@pytest.mark.parametrize("arguments", [pytest.param(None, id="null"), pytest.param({}, id="empty")])
def test_arguments_null_and_empty_both_mean_all_defaults(arguments: object) -> None:
    """null and {} give the same defaults."""
    assert validate(LIST_SCHEMA, arguments) == {"limit": 20}
    assert validate(TOOLS["list_tasks"].input_schema, arguments) == {"status": "all", "limit": 50}


def test_arguments_null_values_count_as_absent() -> None:
    """An argument given as null is the same as one left out."""
    assert validate(LIST_SCHEMA, {"limit": None, "cursor": None}) == {"limit": 20}


def test_arguments_accept_an_integral_float_as_an_integer() -> None:
    """JSON has one number type: 5.0 is the integer 5."""
    assert validate(LIST_SCHEMA, {"limit": 5.0})["limit"] == 5


@pytest.mark.parametrize(
    ("schema", "arguments", "named"),
    [
        pytest.param(LIST_SCHEMA, {"limit": True}, "limit", id="bool-as-integer"),
        pytest.param(LIST_SCHEMA, {"limit": False}, "limit", id="false-as-integer"),
        pytest.param(LIST_SCHEMA, {"limit": 2.5}, "limit", id="fraction"),
        pytest.param(LIST_SCHEMA, {"limit": "5"}, "limit", id="string-number"),
        pytest.param(LIST_SCHEMA, {"limit": 0}, "limit", id="below-range"),
        pytest.param(LIST_SCHEMA, {"limit": 101}, "limit", id="above-range"),
        pytest.param(LIST_SCHEMA, {"limit": 10**30}, "limit", id="huge"),
        pytest.param(LIST_SCHEMA, {"limit": float("inf")}, "limit", id="infinity"),
        pytest.param(LIST_SCHEMA, {"source": "voice"}, "source", id="not-in-enum"),
        pytest.param(LIST_SCHEMA, {"source": 1}, "source", id="enum-wrong-type"),
        pytest.param(LIST_SCHEMA, {"cursor": ["x"]}, "cursor", id="array-as-string"),
        pytest.param(LIST_SCHEMA, {"bogus": 1}, "bogus", id="unknown"),
        pytest.param(LIST_SCHEMA, {"bogus": None}, "bogus", id="unknown-null"),
        pytest.param(GET_SCHEMA, {}, "id", id="required-missing"),
        pytest.param(GET_SCHEMA, {"id": None}, "id", id="required-null"),
        pytest.param(GET_SCHEMA, {"id": 5}, "id", id="id-number"),
        pytest.param(GET_SCHEMA, {"id": "x", "include_segments": 1}, "include_segments", id="int-as-bool"),
        pytest.param(GET_SCHEMA, {"id": "x", "include_segments": "true"}, "include_segments", id="string-as-bool"),
        pytest.param(GET_SCHEMA, {"id": "x", "offset": -1}, "offset", id="negative-offset"),
        pytest.param(GET_SCHEMA, {"id": "x", "max_chars": 100_001}, "max_chars", id="window-too-big"),
        pytest.param(TOOLS["search_transcripts"].input_schema, {"query": ""}, "query", id="empty-query"),
        pytest.param(TOOLS["search_transcripts"].input_schema, {"query": "x" * 501}, "query", id="query-too-long"),
    ],
)
def test_arguments_reject_bad_values_naming_the_argument(schema: dict[str, Any], arguments: object, named: str) -> None:
    """Wrong types, out-of-range values and unknown names are refused with a message naming the argument."""
    with pytest.raises(InvalidArguments) as caught:
        validate(schema, arguments)
    assert caught.value.argument == named
    assert f"'{named}'" in caught.value.message


@pytest.mark.parametrize(
    "arguments",
    [pytest.param([], id="array"), pytest.param("limit=5", id="string"), pytest.param(5, id="number")],
)
def test_arguments_that_are_not_an_object_are_refused(arguments: object) -> None:
    """'arguments' must be an object (or null/absent)."""
    with pytest.raises(InvalidArguments, match="'arguments' must be an object"):
        validate(LIST_SCHEMA, arguments)


def test_arguments_query_length_counts_characters_not_bytes() -> None:
    """500 emoji is a 500-character query, within the limit."""
    assert validate(TOOLS["search_transcripts"].input_schema, {"query": "🎉" * 500})["query"] == "🎉" * 500


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        pytest.param("2026-05-09", "2026-05-09T00:00:00.000Z", id="date"),
        pytest.param("2026-05-09T14:03:12Z", "2026-05-09T14:03:12.000Z", id="utc"),
        pytest.param("2026-05-09t14:03:12z", "2026-05-09T14:03:12.000Z", id="lower-case"),
        pytest.param("2026-05-09T14:03:12.042Z", "2026-05-09T14:03:12.042Z", id="millis"),
        pytest.param("2026-05-09T14:03:12.0421Z", "2026-05-09T14:03:12.043Z", id="sub-millis-rounds-up"),
        pytest.param("2026-05-09T23:59:59.9999Z", "2026-05-10T00:00:00.000Z", id="round-up-carries"),
        pytest.param("2026-05-09T16:03:12+02:00", "2026-05-09T14:03:12.000Z", id="plus-offset"),
        pytest.param("2026-05-09T10:33:12-03:30", "2026-05-09T14:03:12.000Z", id="minus-offset"),
        pytest.param("2026-05-10T01:00:00+0200", "2026-05-09T23:00:00.000Z", id="offset-across-midnight"),
        pytest.param("2026-05-09 14:03Z", "2026-05-09T14:03:00.000Z", id="space-no-seconds"),
        pytest.param("0999-12-31", "0999-12-31T00:00:00.000Z", id="year-below-1000"),
    ],
)
def test_times_become_the_stores_utc_text(given: str, stored: str) -> None:
    """Dates and RFC 3339 times with any offset become sortable UTC text with milliseconds."""
    assert parse_time("since", given) == stored


@pytest.mark.parametrize(
    "given",
    [
        pytest.param("yesterday", id="words"),
        pytest.param("2026-02-30", id="no-such-day"),
        pytest.param("2026-05-09T14:03:12", id="no-zone"),
        pytest.param("2026-05-09T25:00:00Z", id="hour-25"),
        pytest.param("2026-13-01", id="month-13"),
        pytest.param("0000-01-01", id="year-zero"),
        pytest.param("0001-01-01T00:00:00+01:00", id="before-year-one-after-offset"),
        pytest.param("9999-12-31T23:59:59-01:00", id="after-9999-after-offset"),
        pytest.param("9999-12-31T23:59:59.9999Z", id="after-9999-after-rounding"),
        pytest.param("", id="empty"),
    ],
)
def test_bad_times_are_invalid_arguments_naming_the_argument(given: str) -> None:
    """A time that is not a real RFC 3339 time or date is refused, naming the argument."""
    with pytest.raises(InvalidArguments) as caught:
        parse_time("until", given)
    assert caught.value.argument == "until"


# -- cursors -----------------------------------------------------------------------


def test_cursors_round_trip_their_key() -> None:
    """A cursor decodes to exactly the key it was made from, including non-ASCII text."""
    key = ("2026-05-09T14:03:12.042Z", "id-é-🎉")
    assert cursors.decode("transcripts", cursors.encode("transcripts", key), 2) == key


def _edits(cursor: str) -> list[str]:
    body, _, tag = cursor.partition(".")
    flipped = body[:-1] + ("A" if body[-1] != "A" else "B")
    return [
        "",
        "x",
        ".",
        cursor + "x",
        cursor[:-1],
        f"{flipped}.{tag}",
        body,
        f"{body}.{'0' * len(tag)}",
        cursor.upper(),
        "é" + cursor,
        cursor.replace(".", ".."),
    ]


def test_edited_or_forged_cursors_are_refused_naming_cursor() -> None:
    """Any change to a cursor, or one invented by the client, is an invalid 'cursor' argument."""
    good = cursors.encode("transcripts", ("2026-05-09T14:03:12.042Z", "abc"))
    for bad in _edits(good):
        with pytest.raises(InvalidArguments) as caught:
            cursors.decode("transcripts", bad, 2)
        assert caught.value.argument == "cursor", bad


def test_a_cursor_from_one_list_is_refused_by_the_other() -> None:
    """A list_tasks cursor is not accepted by list_transcripts, and vice versa."""
    tasks = cursors.encode("tasks", (0, 0, "2026-05-09", "2026-05-09T14:03:12.042Z", "t1"))
    transcripts = cursors.encode("transcripts", ("2026-05-09T14:03:12.042Z", "abc"))
    with pytest.raises(InvalidArguments):
        cursors.decode("transcripts", tasks, 2)
    with pytest.raises(InvalidArguments):
        cursors.decode("tasks", transcripts, 5)


# -- text windows and previews ------------------------------------------------------

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # one ZWJ sequence, 7 code points
THUMBS = "\U0001f44d\U0001f3fd"  # emoji + skin tone modifier
WINDOW_TEXTS = {
    "ascii": "The quick brown fox jumps over the lazy dog. " * 7,
    "emoji": "ok 🎉 go 😀😀 end " * 9,
    "combining": ("cafe\u0301 re\u0301sume\u0301 nai\u0308ve " * 9) + "e\u0301\u0301\u0301",
    "zwj": (f"{FAMILY} and {FAMILY}{FAMILY} " * 6),
    "skin-tone": (f"{THUMBS} yes {THUMBS}{THUMBS} " * 7),
    "variation": ("\u2764\ufe0f love \u263a\ufe0f " * 8),
    "mixed": "Olá, coração! 日本語のテキスト " + FAMILY + " e\u0301 " + THUMBS + " done",
}


@pytest.mark.parametrize("name", list(WINDOW_TEXTS))
@pytest.mark.parametrize("max_chars", [1, 2, 3, 5, 7, 64])
def test_windows_rebuild_the_whole_text_and_never_split_a_cluster(name: str, max_chars: int) -> None:
    """Walking window_end from 0 to the end covers the text exactly, cutting only between clusters."""
    text = WINDOW_TEXTS[name]
    offset, pieces = 0, []
    while offset < len(text):
        end = window_end(text, offset, max_chars)
        assert end > offset, "a window must make progress"
        assert not breaks_cluster(text, end), (offset, end, text[end - 2 : end + 2])
        piece = text[offset:end]
        piece.encode("utf-16-le")  # no lone surrogates in UTF-16 terms
        if end - offset > max_chars:  # only a single cluster longer than the window may overflow it
            assert all(breaks_cluster(text, i) for i in range(offset + 1, end))
        pieces.append(piece)
        offset = end
    assert "".join(pieces) == text


def test_preview_is_short_cut_at_a_word_and_marked() -> None:
    """A long text previews as at most 200 characters, ending at a word with an ellipsis."""
    text = "word " * 100
    out = preview(text)
    assert len(out) <= PREVIEW_CHARS
    assert out.endswith("…")
    assert out[:-1].rstrip().endswith("word")
    assert preview("  short\n\ttext  ") == "short text"
    long_word = "x" * 500
    assert len(preview(long_word)) <= PREVIEW_CHARS


# -- the search language ---------------------------------------------------------------


@pytest.fixture(scope="module")
def fts_reference() -> sqlite3.Connection:
    """An in-memory FTS5 table with the store's tokenizer: the reference for what a query means."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE docs USING fts5 (title, body, tokenize = 'unicode61 remove_diacritics 2')")
    return conn


@pytest.mark.parametrize("text", [pytest.param(q, id=f"q{i}") for i, q in enumerate(ODD_QUERIES)])
def test_any_query_parses_and_is_a_valid_fts5_expression(text: str, fts_reference: sqlite3.Connection) -> None:
    """No input is a syntax error: parsing never fails and FTS5 accepts every expression produced."""
    query = parse(text)
    if query.empty:
        return
    for column in (None, "title"):
        fts_reference.execute("SELECT count(*) FROM docs WHERE docs MATCH ?", (query.fts(column),)).fetchone()
    query.matches(fold(text))
    snippet(query, text)


CORPUS = [
    "The café opens at nine",
    "CAFE society meeting",
    "Cafe\u0301 au lait, decomposed",
    "Ein schönes Café in Köln",
    "e\u0301cole primaire, decomposed",
    "École normale",
    "İstanbul trip notes",
    "istanbul again",
    "ΣΟΦΊΑ lecture",
    "σοφια lecture",
    "أحمد called",
    "احمد called",
    "naïve approach",
    "quarterly budget review",
    "budget for the quarter",
    "review of the budget",
    "release planning and roadmap",
    "pre-release checks",
    "don't forget milk",
    "Straße und Strasse",
    "mañana temprano",
    "Ærøskøbing harbour",
]
SEARCHES = [
    "cafe",
    "CAFÉ",
    "café",
    "ecole",
    "école",
    "istanbul",
    "İstanbul",
    "σοφια",
    "σοφία",
    "احمد",
    "naive",
    "budget review",
    '"budget review"',
    "review budget",
    "quarter*",
    "budget OR roadmap",
    "release",
    "pre-release",
    "don't",
    "dont",
    "strasse",
    "manana",
    "aerøskøbing",
    "ærøskøbing",
]


@pytest.mark.parametrize("text", [pytest.param(q, id=q) for q in SEARCHES])
def test_a_query_matches_the_same_rows_with_and_without_the_index(text: str, fts_reference: sqlite3.Connection) -> None:
    """Scan-mode matching agrees with FTS5 (unicode61, remove_diacritics 2) on every row."""
    fts_reference.execute("DELETE FROM docs")
    fts_reference.executemany(
        "INSERT INTO docs (rowid, title, body) VALUES (?, '', ?)", list(enumerate(CORPUS, start=1))
    )
    query = parse(text)
    by_fts = {
        rowid - 1 for (rowid,) in fts_reference.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (query.fts(),))
    }
    by_scan = {i for i, doc in enumerate(CORPUS) if query.matches(fold(doc))}
    assert by_scan == by_fts, {
        "only fts": [CORPUS[i] for i in sorted(by_fts - by_scan)],
        "only scan": [CORPUS[i] for i in sorted(by_scan - by_fts)],
    }


@pytest.mark.parametrize(
    ("query", "text", "hit"),
    [
        pytest.param("budget review", "review of the budget", True, id="and-any-order"),
        pytest.param("budget review", "budget only", False, id="and-needs-all"),
        pytest.param('"budget review"', "review of the budget", False, id="phrase-in-order"),
        pytest.param('"the budget"', "review of the budget", True, id="phrase-found"),
        pytest.param("budg*", "the budget", True, id="prefix"),
        pytest.param("budg", "the budget", False, id="word-is-not-prefix"),
        pytest.param("milk OR bread", "buy bread", True, id="or-either"),
        pytest.param("milk OR bread", "buy eggs", False, id="or-neither"),
        pytest.param("or", "this or that", True, id="lone-or-is-a-word"),
        pytest.param("CAFE", "le café", True, id="case-and-accent"),
        pytest.param("café", "CAFE", True, id="accent-in-query"),
    ],
)
def test_the_query_language_means_what_the_contract_says(query: str, text: str, hit: bool) -> None:
    """AND in any order, phrases, prefixes, OR, case and accents behave as documented."""
    assert parse(query).matches(fold(text)) is hit


def test_fold_keeps_every_offset() -> None:
    """Folding never changes a text's length, so snippet offsets stay right."""
    for text in [*CORPUS, *WINDOW_TEXTS.values(), "ǅ ǈ ẞ ﬁ İ ß Σ ς µ ſ"]:
        assert len(fold(text)) == len(text), text


def test_snippet_wraps_each_match_and_stays_near_the_first() -> None:
    """The snippet bolds every match within it, starts at a word and stays within ~200 characters."""
    text = ("filler words here " * 30) + "the Budget meeting about the budget " + ("tail words " * 40)
    out = snippet(parse("budget"), text)
    assert out is not None
    assert out.count("**Budget**") == 1
    assert out.count("**budget**") == 1
    assert out.startswith("…")
    assert out.endswith("…")
    assert len(out) <= 200 + 2 + 4 * 2
    assert snippet(parse("absent"), text) is None


# -- stdio line splitting ---------------------------------------------------------------


def test_line_splitter_reassembles_lines_split_across_chunks() -> None:
    """Lines come out whole whatever the chunk boundaries; a final unterminated line comes from finish()."""
    data = b'{"a":1}\n\n{"b":2}\r\n{"c":3}'
    for size in (1, 2, 3, 7, len(data)):
        splitter = LineSplitter()
        out: list[bytes | None] = []
        for i in range(0, len(data), size):
            out += splitter.feed(data[i : i + size])
        assert out == [b'{"a":1}', b"", b'{"b":2}\r']
        assert splitter.finish() == b'{"c":3}'


def test_line_splitter_drops_an_over_long_line_once_and_goes_on() -> None:
    """A line over the limit yields exactly one None, is never buffered whole, and the next line is intact."""
    splitter = LineSplitter(limit=10)
    out: list[bytes | None] = []
    for chunk in (b"ok\n0123", b"456789ABCDEF", b"GHIJ", b"KL\nnext\n"):
        out += splitter.feed(chunk)
        assert len(splitter._buf) <= 10
    assert out == [b"ok", None, b"next"]
    at_limit = LineSplitter(limit=10)
    assert at_limit.feed(b"0123456789\n01234567890\n") == [b"0123456789", None]
    assert LineSplitter().limit == MAX_LINE_BYTES == 8 * 1024 * 1024


def test_a_stray_print_after_claiming_stdout_goes_to_stderr() -> None:
    """Once stdout is claimed, print() and writes to fd 1 land on stderr; only the protocol fd reaches stdout."""
    code = (
        "import os, sys\n"
        "from magnotia_mcp.prelude import claim_stdout\n"
        "fd = claim_stdout()\n"
        "print('stray print')\n"
        "sys.stdout.write('stray write\\n'); sys.stdout.flush()\n"
        "os.write(1, b'stray fd write\\n')\n"
        'os.write(fd, b\'{"jsonrpc":"2.0","id":1,"result":{}}\\n\')\n'
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30, check=True)
    assert done.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    for stray in (b"stray print", b"stray write", b"stray fd write"):
        assert stray in done.stderr


def test_schema_file_in_the_package_matches_the_contract() -> None:
    """The packaged schema copy is the contract's schema, byte for byte."""
    contract = Path(__file__).resolve().parents[2] / "shared" / "contract" / "store-schema-v1.sql"
    if not contract.exists():
        pytest.skip("the shared contract folder is not beside this checkout")
    packaged = Path(__file__).resolve().parents[1] / "src" / "magnotia_mcp" / "schema_v1.sql"
    assert packaged.read_bytes() == contract.read_bytes()


def test_the_fast_fold_table_covers_every_character_that_loses_a_diacritic() -> None:
    """Past the fast path's table, folding is plain lower-casing: no character there loses a mark."""
    from magnotia_mcp.querylang import _FOLD, _LATIN_BLOCKS_END

    beyond = [
        code
        for code in range(_LATIN_BLOCKS_END, 0x110000)
        if not 0xD800 <= code <= 0xDFFF and len(chr(code).lower()) == 1 and _FOLD[code] != chr(code).lower()
    ]
    assert beyond == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Café ÉCOLE naïve", id="latin"),
        pytest.param("ΟΔΟΣ οδός", id="greek-capital-sigma"),
        pytest.param("İstanbul", id="dotted-capital-i"),
        pytest.param("Tiếng Việt", id="vietnamese"),
        pytest.param("e\u0301cole", id="decomposed"),
        pytest.param("Ångström Å", id="angstrom-sign"),
    ],
)
def test_fold_keeps_length_and_matches_the_per_character_table(text: str) -> None:
    """fold's fast path gives what folding each character alone gives, at the same offsets."""
    from magnotia_mcp.querylang import _FOLD, fold

    assert fold(text) == text.translate(_FOLD)
    assert len(fold(text)) == len(text)
