"""Property of the tools: any arguments get a result or a tool error, never an internal error.

For each tool, arguments are drawn from its input schema (the one ``tools/list``
advertises): valid values, values at and just past each limit, the wrong JSON
type, huge and negative numbers, unicode, time words, ids of live, trashed and
unknown transcripts, real cursors (also handed to the other tool), damaged
cursors and cursors forged with a valid tag around keys no server issues, and
unknown argument names. On a healthy store the answer is:

* from 2025-11-25 on: a result, with ``isError`` true or false;
* before: a result, or error -32602 (invalid arguments) / -32000 (not found);
* in every revision, -32602 for ``arguments`` that is not an object;
* never -32603, and a successful result's ``structuredContent`` fits the tool's outputSchema.

A second property draws only valid values (real ids, cursors issued by the same
tool, times the grammar accepts): those calls succeed.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import jsonschema
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from magnotia_mcp.args import cursors
from magnotia_mcp.tools.catalog import TOOLS
from tests.properties.conftest import Servers, Stores, budget
from tests.properties.corpus import LIVE_IDS, TRASHED_IDS, WORDS
from tests.properties.strategies import (
    SPEAKER_NAMES,
    floats,
    forged_cursors,
    integers,
    json_values,
    queries,
    texts,
    weighted,
)
from tests.support.protocol import REVISIONS, at_least
from tests.support.server import ServerProcess

TASK_IDS = ["b0000000-0000-4000-8000-000000000000"]
TIME_WORDS = (
    "now",
    "today",
    "yesterday",
    "tomorrow",
    "this week",
    "last week",
    "next week",
    "this month",
    "last month",
    "next month",
    "this year",
    "last year",
    "next year",
    "7d",
    "24h",
    "2w",
    "2 weeks ago",
    "3 months ago",
    "an hour ago",
    "a year ago",
    "last 7 days",
    "90 minutes ago",
    "  LAST   Week ",
)
ODD_TIMES = (
    "",
    " ",
    "0",
    "0000",
    "0001",
    "9999",
    "10000",
    "2026-00",
    "2026-13",
    "0000-01",
    "9999-12",
    "2026-02-30",
    "2026-05-09T25:00:00Z",
    "2026-05-09T14:03:12",
    "2026-05-09T14:03:12.9999999999Z",
    "0001-01-01T00:00:00+23:59",
    "9999-12-31T23:59:59.9999Z",
    "9999-12-31T23:59:59-23:59",
    "999999999 years ago",
    "100000 years ago",
    "99999 years ago",
    "2025 years ago",
    "999999999d",
    "1e9d",
    "-5d",
    "a w",
    "a week",
    "last fortnight",
    "٢٠٢٦",
    "٢٠٢٦-٠٥-٠٩",
    "２０２６",
    "2026-05-09t14:03:12z",
    "2026-05-09 14:03:12+0200",
)


class CursorFrom(NamedTuple):
    """A cursor issued by the server (tool's list, index into the pool), maybe damaged; resolved per test."""

    tool: str
    position: int
    damage: str  # "none", "flip", "cut", "extend", "swap-tag"


def damaged(cursor: str, damage: str) -> str:
    if damage == "flip":
        i = len(cursor) // 2
        return cursor[:i] + ("A" if cursor[i] != "A" else "B") + cursor[i + 1 :]
    if damage == "cut":
        return cursor[:-3]
    if damage == "extend":
        return cursor + "=="
    if damage == "swap-tag":
        body, _, tag = cursor.partition(".")
        return tag + "." + body
    return cursor


def times() -> st.SearchStrategy[str]:
    rfc = st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat())
    dates = st.dates().map(lambda d: d.isoformat())
    ages = st.builds(
        "{}{}{}".format,
        st.integers(0, 10**6).map(str),
        st.sampled_from(["", " "]),
        st.sampled_from(["d", "h", "w", "min", "days", "weeks ago", "months ago", "years ago", "y", "fortnights"]),
    )
    return weighted(
        (3, st.sampled_from(TIME_WORDS)), (3, st.sampled_from(ODD_TIMES)), (2, rfc), (2, dates), (2, ages), (1, texts)
    )


def _integer(spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    low, high = spec.get("minimum"), spec.get("maximum")
    edges = [0, -1, 1, 2**31, 2**63, -(2**63), 10**30, -(10**30)]
    edges += [x for x in (low, high) if x is not None] + [x + d for x in (low, high) if x is not None for d in (-1, 1)]
    return weighted(
        (4, st.integers(min_value=low, max_value=high)),
        (3, st.sampled_from(edges)),
        (1, st.integers()),
        (1, st.sampled_from([5.0, 1.5, -0.0, 1e300, "5", True, False])),
    )


def _string(name: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in spec:
        enum = spec["enum"]
        return weighted(
            (5, st.sampled_from(enum)),
            (1, st.sampled_from([e.upper() for e in enum] + [" " + enum[0], ""])),
            (1, texts),
        )
    if name == "query":
        return weighted(
            (6, queries(WORDS)),
            (1, st.sampled_from(["", " ", "x" * 500, "x" * 501, "é" * 500, "\U0001f389" * 300])),
            (1, texts),
        )
    if name == "speaker":
        return weighted((4, st.sampled_from(SPEAKER_NAMES)), (1, st.sampled_from(["", "  ", "a" * 201])), (1, texts))
    if name in ("id", "transcript_id"):
        known = st.sampled_from([*LIVE_IDS, *TRASHED_IDS, *TASK_IDS])
        return weighted(
            (5, known),
            (1, known.map(str.upper)),
            (1, known.map(lambda t: " " + t)),
            (1, st.sampled_from(["", "%", "_", "' OR 1=1 --", "\x00"])),
            (1, texts),
        )
    if name == "cursor":
        pooled = st.builds(
            CursorFrom,
            st.sampled_from(["list_transcripts", "list_tasks"]),
            st.integers(0, 1000),
            st.sampled_from(["none", "none", "flip", "cut", "extend", "swap-tag"]),
        )
        return weighted(
            (4, pooled), (2, forged_cursors()), (1, st.sampled_from(["", ".", "e30.0", "null"])), (1, texts)
        )
    if name in ("since", "until", "due_before"):
        return times()
    return texts


def value(name: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = spec["type"]
    if kind == ["string", "array"]:  # one string or an array of them (list_transcripts' speaker)
        one = _string(name, {"type": "string"})
        return weighted((4, one), (4, st.lists(one, max_size=12)), (1, st.none()), (1, json_values))
    typed = (
        _integer(spec)
        if kind == "integer"
        else _string(name, spec)
        if kind == "string"
        else st.one_of(st.booleans(), st.sampled_from([0, 1, "true", None]))
    )
    return weighted((8, typed), (1, st.none()), (1, json_values))


@st.composite
def arguments(draw: st.DrawFn, tool: str) -> Any:
    """Arguments for tool: mostly an object of its own properties, sometimes anything at all."""
    shape = draw(st.sampled_from(["object"] * 12 + ["none", "empty", "not-object"]))
    if shape == "none":
        return None
    if shape == "empty":
        return {}
    if shape == "not-object":
        return draw(st.one_of(st.booleans(), integers, floats, texts, st.lists(json_values, max_size=3)))
    schema = TOOLS[tool].input_schema
    required = set(schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if draw(st.integers(0, 9)) < (9 if name in required else 4):
            out[name] = draw(value(name, spec))
    if draw(st.integers(0, 14)) == 0:
        out[draw(st.sampled_from(["Query", "limit ", "page", "", "_meta"]))] = draw(json_values)
    return out


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, Any]:
    tool = draw(st.sampled_from(sorted(TOOLS)))
    return tool, draw(arguments(tool))


# -- the servers, and the cursors they issue ---------------------------------------------------


class Pool:
    """The server the calls go to, and the cursors it issued (by tool)."""

    def __init__(self, server: ServerProcess, cursors: dict[str, list[str]]) -> None:
        self.server = server
        self.cursors = cursors

    def __repr__(self) -> str:  # Hypothesis prints the arguments of a failing example: keep it short
        return f"Pool({sum(map(len, self.cursors.values()))} cursors)"


def issued_cursors(server: ServerProcess) -> dict[str, list[str]]:
    """Every next_cursor the paged tools give for a few page sizes and filters (and a search cut to fit)."""
    pool: dict[str, list[str]] = {"list_transcripts": [], "list_tasks": []}
    for tool, filters in (
        ("list_transcripts", [{}, {"source": "meeting"}, {"since": "2026-05"}]),
        ("list_tasks", [{}, {"status": "open"}, {"due_before": "2026-06"}]),
    ):
        for base in filters:
            for limit in (1, 3, 7):
                args: dict[str, Any] = {**base, "limit": limit}
                while True:
                    page = server.result(tool, args)
                    cursor = page["next_cursor"]
                    if cursor is None:
                        break
                    pool[tool].append(cursor)
                    args = {**args, "cursor": cursor}
    # search_transcripts issues a cursor only for hits left out to fit max_tokens: the smallest budget.
    pool["search_transcripts"] = []
    args = {"query": " OR ".join(WORDS[:60])[:500].rsplit(" OR ", 1)[0], "limit": 50, "max_tokens": 1_000}
    while (cursor := server.result("search_transcripts", args)["next_cursor"]) is not None:
        pool["search_transcripts"].append(cursor)
        args = {**args, "cursor": cursor}
    assert pool["list_transcripts"]
    assert pool["list_tasks"]
    assert pool["search_transcripts"]
    return pool


@pytest.fixture(scope="module")
def pool(servers: Servers, stores: Stores) -> Pool:
    server = servers.start(stores.fts)
    listed = server.request("tools/list")["result"]["tools"]
    assert {t["name"]: t["inputSchema"] for t in listed} == {t.name: t.input_schema for t in TOOLS.values()}
    return Pool(server, issued_cursors(server))


def resolve(arguments: Any, cursors: dict[str, list[str]]) -> Any:
    if not isinstance(arguments, dict):
        return arguments
    out = dict(arguments)
    ref = out.get("cursor")
    if isinstance(ref, CursorFrom):
        issued = cursors[ref.tool]
        out["cursor"] = damaged(issued[ref.position % len(issued)], ref.damage)
    return out


def call(pool: Pool, revision: str, tool: str, arguments: Any) -> dict[str, Any]:
    """tools/call at revision (legacy: after initialize; 2026-07-28: with its _meta) on a server in step."""
    server = pool.server
    server.sync()
    if revision == REVISIONS[-1]:
        server.revision = revision
    else:
        server.initialize(revision)
    params: dict[str, Any] = {"name": tool}
    if arguments is not None:
        params["arguments"] = arguments
    return server.request("tools/call", params)


def check_answer(response: dict[str, Any], revision: str, tool: str, arguments: Any) -> str:
    """What the tool contract allows for any arguments; returns a word saying which it was."""
    shown = f"{tool} {json.dumps(arguments, ensure_ascii=False)[:300]} at {revision}: {response}"
    if "error" in response:
        code = response["error"]["code"]
        if arguments is not None and not isinstance(arguments, dict):
            assert code == -32602, shown
        else:
            assert not at_least(revision, "2025-11-25"), f"a tool error must be a result from 2025-11-25: {shown}"
            assert code in (-32602, -32000), shown
        return f"error {code}"
    assert arguments is None or isinstance(arguments, dict), f"arguments that are not an object: {shown}"
    result = response["result"]
    text = result["content"][0]["text"]
    if result.get("isError"):
        assert text, shown
        return "isError"
    parsed = json.loads(text)
    if at_least(revision, "2025-06-18"):
        assert result["structuredContent"] == parsed, shown
        jsonschema.validate(parsed, TOOLS[tool].output_schema)
    return "result"


@budget(200)
@given(call_=calls(), revision=st.sampled_from(REVISIONS))
@example(call_=("list_tasks", {"cursor": CursorFrom("list_transcripts", 0, "none")}), revision="2025-11-25").via(
    "a cursor of the other list"
)
@example(call_=("list_transcripts", {"cursor": cursors.encode("transcripts", (None, []))}), revision="2025-11-25").via(
    "a forged cursor (valid tag) holding a list: was -32603, 'Error binding parameter'"
)
@example(
    call_=("list_transcripts", {"cursor": cursors.encode("transcripts", (2**64, "x"))}), revision="2025-11-25"
).via("a forged cursor holding an integer past 64 bits: was -32603, 'Python int too large'")
@example(call_=("list_tasks", {"cursor": cursors.encode("tasks", ("x", 0, "", "", ""))}), revision="2025-11-25").via(
    "a forged task cursor with a string for its segment: was -32603, '<' between int and str"
)
def test_any_arguments_get_a_result_or_a_tool_error(pool: Pool, call_: tuple[str, Any], revision: str) -> None:
    tool, drawn = call_
    arguments = resolve(drawn, pool.cursors)
    response = call(pool, revision, tool, arguments)
    event(f"{tool}: {check_answer(response, revision, tool, arguments)}")


# -- valid arguments succeed ---------------------------------------------------------------------

VALID_TIMES = st.sampled_from([*TIME_WORDS, "2026", "2026-05", "2026-05-09", "2026-05-09T14:03:12Z", "1999-01-01"])


@st.composite
def valid_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    tool = draw(st.sampled_from(sorted(TOOLS)))
    schema = TOOLS[tool].input_schema
    args: dict[str, Any] = {}
    for name, spec in schema["properties"].items():
        if name not in schema.get("required", ()) and draw(st.booleans()):
            continue
        if name in ("since", "until", "due_before"):
            args[name] = draw(VALID_TIMES)
        elif name == "cursor":
            args[name] = CursorFrom(tool, draw(st.integers(0, 1000)), "none")
        elif name == "id":
            args[name] = draw(st.sampled_from(LIVE_IDS))
        elif name == "transcript_id":
            args[name] = draw(st.sampled_from([*LIVE_IDS, *TRASHED_IDS, "no-such-id"]))
        elif name == "query":
            args[name] = draw(queries(WORDS))
        elif name == "speaker":
            one = st.sampled_from(SPEAKER_NAMES)
            several = st.lists(one, min_size=1, max_size=spec.get("maxItems", 1))
            args[name] = draw(st.one_of(one, several) if spec["type"] != "string" else one)
        elif "enum" in spec:
            args[name] = draw(st.sampled_from(spec["enum"]))
        elif spec["type"] == "integer":
            args[name] = draw(st.integers(spec.get("minimum"), spec.get("maximum", 10**6)))
        elif spec["type"] == "boolean":
            args[name] = draw(st.booleans())
    # Constraints between arguments that a schema cannot state: a time window ends after it starts, and
    # replaces the character offset.
    if "start_ms" in args and "end_ms" in args:
        args["end_ms"] = args["start_ms"] + draw(st.integers(1, 10**7))
    if "start_ms" in args or "end_ms" in args:
        args.pop("offset", None)
    # A search inside one transcript: a live one, without the filters that choose transcripts and with no
    # cursor of a search across them (tests/e2e/test_search_inside.py pages through its own).
    if tool == "search_transcripts" and "transcript_id" in args:
        args["transcript_id"] = draw(st.sampled_from(LIVE_IDS))
        for name in ("since", "until", "source", "cursor"):
            args.pop(name, None)
    return tool, args


@budget(100)
@given(call_=valid_calls(), revision=st.sampled_from(REVISIONS))
def test_valid_arguments_succeed(pool: Pool, call_: tuple[str, dict[str, Any]], revision: str) -> None:
    tool, drawn = call_
    arguments = resolve(drawn, pool.cursors)
    response = call(pool, revision, tool, arguments)
    assert check_answer(response, revision, tool, arguments) == "result", response
