"""The four tools, end to end: every argument, default, limit, page and window, over pipes and HTTP.

Most tests read one shared store (built once per module, identically with and
without the full-text index) through long-lived servers; tests that write to
their store build their own. Expected answers are worked out here from the
rows the test wrote, never by asking the server twice.
"""

from __future__ import annotations

import json
import math
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.server import ServerProcess, SharedServers
from tests.support.textchecks import breaks_cluster

Start = Callable[..., ServerProcess]
NewStore = Callable[..., StoreBuilder]

pytestmark = pytest.mark.transports("stdio", "http")

MARKER = "zanzibar"  # appears only in transcripts in the trash
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
LONG_TEXT = " ".join(f"word{i}" for i in range(4000))  # ~31 000 characters
SPECIAL_TEXTS = {
    "emoji": "Start 🎉 party 😀😀 and 🚀 launch, then 🎉 again. " * 6,
    "combining": "Cafe\u0301 re\u0301sume\u0301 nai\u0308ve e\u0301\u0301\u0301 " * 8,
    "zwj": f"{FAMILY} family {FAMILY}{FAMILY} 👍🏽 ok ❤️ end " * 6,
}


def tid(n: int) -> str:
    return str(uuid.UUID(int=n))


@dataclass
class Row:
    id: str
    title: str
    source: str
    created_at: str
    raw_text: str
    formatted_text: str | None = None
    deleted: bool = False
    segments: list[tuple[str | None, str]] | None = None
    language: str | None = "en"


@dataclass
class Task:
    id: str
    title: str
    status: str
    due_at: str | None
    created_at: str
    transcript_id: str | None
    notes: str | None = None
    priority: int | None = None


@dataclass
class Data:
    rows: list[Row] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    @property
    def live(self) -> list[Row]:
        return newest_first([r for r in self.rows if not r.deleted])

    def row(self, title: str) -> Row:
        return next(r for r in self.rows if r.title == title)

    @property
    def shown_tasks(self) -> list[Task]:
        """The tasks list_tasks shows: every one but those of transcripts in the trash."""
        trashed = {r.id for r in self.rows if r.deleted}
        return [t for t in self.tasks if t.transcript_id not in trashed]


def newest_first(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (r.created_at, r.id), reverse=True)


def task_order(tasks: list[Task]) -> list[Task]:
    out = sorted(tasks, key=lambda t: (t.created_at, t.id), reverse=True)
    return sorted(out, key=lambda t: (t.status == "done", t.due_at is None, t.due_at or ""))


def build_data() -> Data:
    d = Data()
    sources = ["dictation", "meeting", "file"]
    plain = [
        ("Budget review", "We agreed the quarterly budget for May. The budget is tight.", "Budget review, agreed."),
        ("Roadmap", "The release planning and roadmap for the next quarter.", None),
        ("Café chat", "A chat at the café about naïve designs and CAFE culture.", None),
        ("Pre-release checks", "Run the pre-release checks before the release.", None),
        ("Ideas", "Résumé tips and the re\u0301sume\u0301 template, decomposed.", None),
        ("Groceries", "Don't forget milk and bread.", None),
        ("Turkey trip", "İstanbul in June, then Ankara.", None),
        ("Greek lesson", "Η ΣΟΦΊΑ είναι αρετή.", None),
        ("Quarter planning", "Plan the quarter: budget, hiring, roadmap.", "Quarter plan: budget, hiring and roadmap."),
        ("", "Untitled note about the offsite venue.", None),
    ]
    n = 1
    for i, (title, raw, formatted) in enumerate(plain):
        d.rows.append(Row(tid(n), title, sources[i % 3], ts(1 + i, 9 * 60 + i), raw, formatted))
        n += 1
    for i in range(12):  # filler, some with equal created_at (ties broken by id)
        created = ts(15, 10 * 60) if i < 4 else ts(16 + i % 10, 8 * 60 + i)
        d.rows.append(Row(tid(n), f"Filler {i}", sources[i % 3], created, f"Filler text number {i} about nothing."))
        n += 1
    d.rows.append(
        Row(
            tid(n),
            "Team meeting",
            "meeting",
            ts(28, 15 * 60),
            "Ana: welcome everyone. Ben: the budget is approved. Ana: next the roadmap. Ben: budget again later.",
            segments=[
                ("Ana", "Ana: welcome everyone."),
                ("Ben", "Ben: the budget is approved."),
                ("Ana", "Ana: next the roadmap."),
                ("Ben", "Ben: budget again later."),
            ],
        )
    )
    n += 1
    d.rows.append(Row(tid(n), "Long dictation", "dictation", ts(27, 11 * 60), LONG_TEXT))
    n += 1
    for name, text in SPECIAL_TEXTS.items():
        d.rows.append(Row(tid(n), f"Special {name}", "file", ts(26, 7 * 60 + n), text, None, language=None))
        n += 1
    for i in range(2):  # the trash
        d.rows.append(
            Row(
                tid(900 + i),
                f"Secret {MARKER} budget {i}",
                "meeting",
                ts(29, 10 * 60 + i),
                f"The {MARKER} budget plan, roadmap and café. Never show this.",
                f"Formatted {MARKER} budget roadmap.",
                deleted=True,
                segments=[("Eve", f"The {MARKER} budget plan, roadmap and café. Never show this.")],
            )
        )
    budget, meeting, trashed = d.row("Budget review").id, d.row("Team meeting").id, tid(900)
    specs = [
        ("Send the budget", "open", ts(12), ts(9, 600), budget),
        ("Book the room", "open", ts(12), ts(9, 601), budget),
        ("Call the bank", "open", ts(11, 600), ts(3), None),
        ("Draft roadmap", "open", None, ts(10), meeting),
        ("Review hiring", "open", None, ts(10), meeting),
        ("Pay invoice", "done", ts(5), ts(2), budget),
        ("Old chore", "done", None, ts(1), None),
        ("Archive notes", "done", ts(20, 90), ts(8), meeting),
        ("Follow up secret", "open", ts(13), ts(9, 700), trashed),
        ("Closed secret item", "done", None, ts(9, 701), trashed),
    ]
    for i, (title, status, due, created, transcript) in enumerate(specs):
        d.tasks.append(
            Task(f"k{i:03d}", title, status, due, created, transcript, notes=f"note {i}", priority=1 + i % 3)
        )
    for i in range(23):  # filler tasks with a few ties
        due = None if i % 5 == 0 else ts(14 + i % 6, 60 * (i % 3))
        d.tasks.append(Task(f"f{i:03d}", f"Filler task {i}", "done" if i % 4 == 0 else "open", due, ts(7, i % 5), None))
    return d


def write_store(path: Path, d: Data, *, fts: bool) -> Path:
    b = StoreBuilder(path, fts=fts)
    for r in d.rows:
        b.transcript(
            id=r.id,
            title=r.title,
            source=r.source,
            language=r.language,
            raw_text=r.raw_text,
            formatted_text=r.formatted_text,
            created_at=r.created_at,
            updated_at=r.created_at,
            deleted_at=ts(30) if r.deleted else None,
            segments=r.segments,
        )
    for t in d.tasks:
        b.task(
            id=t.id,
            transcript_id=t.transcript_id,
            title=t.title,
            notes=t.notes,
            status=t.status,
            priority=t.priority,
            due_at=t.due_at,
            created_at=t.created_at,
            completed_at=ts(30) if t.status == "done" else None,
        )
    return b.close()


DATA = build_data()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same rows twice: a store with the full-text index and one an older app wrote without it."""
    return {
        "fts": write_store(tmp_path_factory.mktemp("fts") / "magnotia.db", DATA, fts=True),
        "scan": write_store(tmp_path_factory.mktemp("scan") / "magnotia.db", DATA, fts=False),
    }


@pytest.fixture
def srv(shared_servers: SharedServers, stores: dict[str, Path]) -> ServerProcess:
    """A 2025-06-18 session on the indexed store (errors are JSON-RPC errors, results structured)."""
    return shared_servers.get(stores["fts"], "2025-06-18")


@pytest.fixture
def scan_srv(shared_servers: SharedServers, stores: dict[str, Path]) -> ServerProcess:
    return shared_servers.get(stores["scan"], "2025-06-18")


@pytest.fixture
def srv_1125(shared_servers: SharedServers, stores: dict[str, Path]) -> ServerProcess:
    """Another server process on the indexed store (a 2025-11-25 session)."""
    return shared_servers.get(stores["fts"], "2025-11-25")


def invalid(server: ServerProcess, tool: str, arguments: Any, named: str) -> str:
    """Call and assert an invalid-arguments error (-32602 at 2025-06-18) that names the argument; the message."""
    response = server.call(tool, arguments)
    assert "error" in response, response
    assert response["error"]["code"] == -32602, response
    text = str(response["error"]["message"])
    assert named in text, text
    return text


def all_pages(server: ServerProcess, tool: str, key: str, arguments: dict[str, Any]) -> list[list[dict[str, Any]]]:
    pages: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        args = dict(arguments)
        if cursor is not None:
            args["cursor"] = cursor
        result = server.result(tool, args)
        pages.append(result[key])
        cursor = result["next_cursor"]
        if cursor is None:
            return pages
        assert isinstance(cursor, str)
        assert len(pages) < 500, "paging does not end"


# -- list_transcripts ---------------------------------------------------------------


def test_list_transcripts_defaults_to_20_newest_first_with_the_contract_fields(srv: ServerProcess) -> None:
    """No arguments: the 20 newest live transcripts, each with exactly the contract's fields."""
    result = srv.result("list_transcripts")
    assert set(result) == {"transcripts", "next_cursor", "max_tokens"}
    items = result["transcripts"]
    assert [t["id"] for t in items] == [r.id for r in DATA.live[:20]]
    assert isinstance(result["next_cursor"], str)
    for item in items:
        assert set(item) == {"id", "title", "source", "language", "created_at", "duration_ms", "preview", "speakers"}
    first = next(t for t in items if t["title"] == "Team meeting")
    assert first["source"] == "meeting"
    assert first["created_at"] == ts(28, 15 * 60)
    assert first["language"] == "en"
    assert first["duration_ms"] == 1000


@pytest.mark.parametrize(
    "arguments",
    [pytest.param(None, id="omitted"), pytest.param("null", id="null"), pytest.param({}, id="empty-object")],
)
@pytest.mark.parametrize("tool", ["list_transcripts", "list_tasks"])
def test_arguments_omitted_null_or_empty_mean_the_same(srv: ServerProcess, tool: str, arguments: Any) -> None:
    """arguments absent, null and {} give identical results."""
    params: dict[str, Any] = {"name": tool}
    if arguments == "null":
        params["arguments"] = None
    elif arguments is not None:
        params["arguments"] = arguments
    response = srv.request("tools/call", params)
    assert json.loads(response["result"]["content"][0]["text"]) == srv.result(tool, {})


@pytest.mark.parametrize("arguments", [pytest.param("omitted", id="omitted"), pytest.param(None, id="null")])
def test_a_tool_with_a_required_argument_called_without_arguments_names_it(srv: ServerProcess, arguments: Any) -> None:
    """search_transcripts and get_transcript with no arguments: invalid, naming the required argument."""
    for tool, named in (("search_transcripts", "query"), ("get_transcript", "id")):
        params: dict[str, Any] = {"name": tool}
        if arguments != "omitted":
            params["arguments"] = arguments
        response = srv.request("tools/call", params)
        assert response["error"]["code"] == -32602
        assert named in response["error"]["message"]


@pytest.mark.parametrize("limit", [1, 3, 7, 20, 100])
def test_list_transcripts_pages_to_the_end_without_gaps_or_duplicates(srv: ServerProcess, limit: int) -> None:
    """Following next_cursor visits every live transcript once, in order, ties on created_at included."""
    # Within the largest token budget, so that limit alone sets the page size.
    pages = all_pages(srv, "list_transcripts", "transcripts", {"limit": limit, "max_tokens": 20_000})
    ids = [t["id"] for page in pages for t in page]
    assert ids == [r.id for r in DATA.live]
    assert len(pages) == math.ceil(len(DATA.live) / limit)
    assert all(len(page) == limit for page in pages[:-1])


@pytest.mark.parametrize(
    ("arguments", "low", "high"),
    [
        pytest.param({"since": "2026-05-10"}, "2026-05-10T00:00:00.000Z", None, id="since-date"),
        pytest.param({"until": "2026-05-10"}, None, "2026-05-10T00:00:00.000Z", id="until-date"),
        pytest.param(
            {"since": "2026-05-05", "until": "2026-05-16"},
            "2026-05-05T00:00:00.000Z",
            "2026-05-16T00:00:00.000Z",
            id="date-range",
        ),
        pytest.param({"since": "2026-05-15T12:00:00+02:00"}, "2026-05-15T10:00:00.000Z", None, id="since-plus-offset"),
        pytest.param({"until": "2026-05-15T07:00:00-03:00"}, None, "2026-05-15T10:00:00.000Z", id="until-minus-offset"),
        pytest.param({"since": ts(15, 600)}, ts(15, 600), None, id="since-inclusive-at-a-tie"),
        pytest.param({"until": ts(15, 600)}, None, ts(15, 600), id="until-exclusive-at-a-tie"),
        pytest.param({"since": "2026-05-10", "until": "2026-05-10"}, "2026-05-10", "2026-05-10", id="empty-range"),
        pytest.param({"since": "2027-01-01"}, "2027-01-01", None, id="nothing-that-new"),
    ],
)
def test_list_transcripts_since_and_until_select_by_created_at(
    srv: ServerProcess, arguments: dict[str, Any], low: str | None, high: str | None
) -> None:
    """since is inclusive, until exclusive; dates mean UTC midnight; offsets are converted to UTC."""
    expected = [
        r.id for r in DATA.live if (low is None or r.created_at >= low) and (high is None or r.created_at < high)
    ]
    pages = all_pages(srv, "list_transcripts", "transcripts", {**arguments, "limit": 4})
    assert [t["id"] for page in pages for t in page] == expected


@pytest.mark.parametrize("source", ["dictation", "meeting", "file"])
def test_list_transcripts_source_filter_keeps_only_that_kind(srv: ServerProcess, source: str) -> None:
    """source=X lists exactly the live transcripts of kind X, newest first, over all pages."""
    pages = all_pages(srv, "list_transcripts", "transcripts", {"source": source, "limit": 3, "since": "2026-05-02"})
    expected = [r.id for r in DATA.live if r.source == source and r.created_at >= "2026-05-02"]
    assert [t["id"] for page in pages for t in page] == expected
    assert expected


def test_list_transcripts_preview_prefers_formatted_text_and_is_cut_short(srv: ServerProcess) -> None:
    """The preview starts the formatted text (raw where none), is at most 200 characters and ends with … when cut."""
    items = {t["title"]: t for page in all_pages(srv, "list_transcripts", "transcripts", {"limit": 100}) for t in page}
    assert items["Budget review"]["preview"] == "Budget review, agreed."
    assert items["Roadmap"]["preview"] == "The release planning and roadmap for the next quarter."
    long = items["Long dictation"]["preview"]
    assert len(long) <= 200
    assert long.endswith("…")
    assert LONG_TEXT.startswith(long[:-1].rstrip())
    assert long[:-1].rstrip().split(" ")[-1] in LONG_TEXT.split(" ")  # cut at a word boundary


def test_list_transcripts_paging_is_stable_while_the_app_inserts(start_server: Start, new_store: NewStore) -> None:
    """Rows the app adds between pages: newer ones do not shift the pages, older ones show up in place."""
    b = new_store()
    for i in range(10):
        b.transcript(id=tid(100 + i), title=f"T{i}", raw_text="x", created_at=ts(10 + i))
    db = b.close()
    server = start_server(db)
    server.initialize("2025-06-18")
    first = server.result("list_transcripts", {"limit": 4})
    assert [t["title"] for t in first["transcripts"]] == ["T9", "T8", "T7", "T6"]
    app = sqlite3.connect(db)
    try:
        rows = [
            (tid(200), "Newer", ts(25)),  # newer than everything: must not appear later
            (tid(201), "Newest", ts(26)),
            (tid(99), "Tie-after", ts(16)),  # same created_at as T6, smaller id: sorts right after T6
            (tid(202), "Older", ts(5)),  # older than everything: comes at the end
        ]
        for rid, title, created in rows:
            app.execute(
                "INSERT INTO transcripts (id, title, source, raw_text, created_at, updated_at)"
                " VALUES (?, ?, 'dictation', 'x', ?, ?)",
                (rid, title, created, created),
            )
        app.commit()
        rest = all_pages(server, "list_transcripts", "transcripts", {"limit": 4, "cursor": first["next_cursor"]})
    finally:
        app.close()
    titles = [t["title"] for page in rest for t in page]
    assert titles == ["Tie-after", "T5", "T4", "T3", "T2", "T1", "T0", "Older"]
    fresh = server.result("list_transcripts", {"limit": 3})
    assert [t["title"] for t in fresh["transcripts"]] == ["Newest", "Newer", "T9"]


@pytest.mark.parametrize(("tool", "key"), [("list_transcripts", "transcripts"), ("list_tasks", "tasks")])
def test_a_cursor_from_another_server_process_continues_the_same_list(
    srv: ServerProcess, srv_1125: ServerProcess, tool: str, key: str
) -> None:
    """Cursors survive a restart: page 1 from one server process, the rest from another, is the whole list."""
    first = srv.result(tool, {"limit": 5})
    rest = all_pages(srv_1125, tool, key, {"limit": 5, "cursor": first["next_cursor"]})
    whole = all_pages(srv, tool, key, {"limit": 100, "max_tokens": 20_000})
    assert first[key] + [item for page in rest for item in page] == whole[0]


@pytest.mark.parametrize("tool", ["list_transcripts", "list_tasks"])
def test_edited_forged_or_foreign_cursors_are_invalid_naming_cursor(srv: ServerProcess, tool: str) -> None:
    """A cursor the server did not issue for this list is an invalid 'cursor', never a wrong page."""
    own = srv.result(tool, {"limit": 1})["next_cursor"]
    other_tool = "list_tasks" if tool == "list_transcripts" else "list_transcripts"
    foreign = srv.result(other_tool, {"limit": 1})["next_cursor"]
    body, _, tag = own.partition(".")
    edited = [
        foreign,
        own[:-1] + ("0" if own[-1] != "0" else "1"),
        ("A" if body[0] != "A" else "B") + body[1:] + "." + tag,
        own + "==",
        body,
        "",
        "eyJraW5kIjoidHJhbnNjcmlwdHMifQ",
        "' OR 1=1 --",
        "🎉",
    ]
    for cursor in edited:
        invalid(srv, tool, {"cursor": cursor}, "cursor")


# -- argument checking, every tool, every argument ------------------------------------------

BAD_ARGUMENTS = [
    ("list_transcripts", {"limit": 0}, "limit"),
    ("list_transcripts", {"limit": 101}, "limit"),
    ("list_transcripts", {"limit": True}, "limit"),
    ("list_transcripts", {"limit": 2.5}, "limit"),
    ("list_transcripts", {"limit": "10"}, "limit"),
    ("list_transcripts", {"cursor": 5}, "cursor"),
    ("list_transcripts", {"since": "May 9"}, "since"),
    ("list_transcripts", {"since": 20260509}, "since"),
    ("list_transcripts", {"until": "2026-02-30"}, "until"),
    ("list_transcripts", {"until": "2026-05-09T10:00:00"}, "until"),
    ("list_transcripts", {"source": "voice"}, "source"),
    ("list_transcripts", {"source": ["meeting"]}, "source"),
    ("list_transcripts", {"sort": "oldest"}, "sort"),
    ("get_transcript", {"id": 7}, "id"),
    ("get_transcript", {"id": "x", "format": "markdown"}, "format"),
    ("get_transcript", {"id": "x", "format": None, "offset": -1}, "offset"),
    ("get_transcript", {"id": "x", "offset": True}, "offset"),
    ("get_transcript", {"id": "x", "max_chars": 0}, "max_chars"),
    ("get_transcript", {"id": "x", "max_chars": 100_001}, "max_chars"),
    ("get_transcript", {"id": "x", "include_segments": 1}, "include_segments"),
    ("get_transcript", {"id": "x", "include_segments": "yes"}, "include_segments"),
    ("get_transcript", {"id": "x", "segments": True}, "segments"),
    ("search_transcripts", {"query": ""}, "query"),
    ("search_transcripts", {"query": "x" * 501}, "query"),
    ("search_transcripts", {"query": ["budget"]}, "query"),
    ("search_transcripts", {"query": "budget", "limit": 0}, "limit"),
    ("search_transcripts", {"query": "budget", "limit": 51}, "limit"),
    ("search_transcripts", {"query": "budget", "limit": False}, "limit"),
    ("search_transcripts", {"query": "budget", "since": "soon"}, "since"),
    ("search_transcripts", {"query": "budget", "until": "2026-13-01"}, "until"),
    ("search_transcripts", {"query": "budget", "source": "email"}, "source"),
    ("search_transcripts", {"query": "budget", "mode": "scan"}, "mode"),
    ("list_tasks", {"status": "closed"}, "status"),
    ("list_tasks", {"status": True}, "status"),
    ("list_tasks", {"transcript_id": 12}, "transcript_id"),
    ("list_tasks", {"due_before": "whenever"}, "due_before"),
    ("list_tasks", {"limit": 0}, "limit"),
    ("list_tasks", {"limit": 101}, "limit"),
    ("list_tasks", {"limit": 1.0000001}, "limit"),
    ("list_tasks", {"cursor": {}}, "cursor"),
    ("list_tasks", {"priority": 1}, "priority"),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [pytest.param(t, a, n, id=f"{t}-{n}-{i}") for i, (t, a, n) in enumerate(BAD_ARGUMENTS)],
)
def test_every_bad_argument_is_refused_naming_it(
    srv: ServerProcess, tool: str, arguments: dict[str, Any], named: str
) -> None:
    """Wrong type, out of range, not in the enum, unknown: refused, and the message names the argument.

    (The same message as an isError result from 2025-11-25: tests/e2e/test_revisions.py, for every revision.)
    """
    invalid(srv, tool, arguments, named)


@pytest.mark.parametrize(
    "arguments",
    [pytest.param([], id="array"), pytest.param("limit=5", id="string"), pytest.param(3, id="number")],
)
def test_arguments_that_are_not_an_object_are_invalid(srv: ServerProcess, arguments: Any) -> None:
    """tools/call with arguments that are not an object is an invalid-arguments error."""
    response = srv.request("tools/call", {"name": "list_transcripts", "arguments": arguments})
    assert response["error"]["code"] == -32602
    assert "arguments" in response["error"]["message"]


def test_limits_at_their_bounds_are_accepted(srv: ServerProcess) -> None:
    """The smallest and largest allowed values work."""
    assert len(srv.result("list_transcripts", {"limit": 1})["transcripts"]) == 1
    assert len(srv.result("list_transcripts", {"limit": 100, "max_tokens": 20_000})["transcripts"]) == len(DATA.live)
    assert len(srv.result("list_tasks", {"limit": 100, "max_tokens": 20_000})["tasks"]) == len(DATA.shown_tasks)
    assert srv.result("list_tasks", {"limit": 1, "max_tokens": 1_000})["tasks"]
    assert len(srv.result("search_transcripts", {"query": "filler", "limit": 50})["hits"]) == 12
    assert len(srv.result("search_transcripts", {"query": "x" * 500, "limit": 1})["hits"]) == 0
    row = DATA.row("Long dictation")
    assert len(srv.result("get_transcript", {"id": row.id, "max_chars": 1})["text"]) == 1
    # All of it is asked for: the largest budget holds all of its ~31,000 characters (about 12,000 tokens), the
    # smallest a start of it, and says what is left.
    widest = srv.result("get_transcript", {"id": row.id, "max_chars": 100_000, "max_tokens": 20_000})
    assert widest["text"] == LONG_TEXT
    assert "next_max_chars" not in widest
    least = srv.result("get_transcript", {"id": row.id, "max_chars": 100_000, "max_tokens": 1_000})
    assert least["text"] == LONG_TEXT[: len(least["text"])]
    assert least["next_max_chars"] == len(LONG_TEXT) - len(least["text"]) > 0
    assert srv.result("list_transcripts", {"limit": 5.0})["transcripts"]  # an integral number is an integer


# -- get_transcript ---------------------------------------------------------------------


def test_get_transcript_defaults_to_formatted_text_with_tasks_in_order(srv: ServerProcess) -> None:
    """Defaults: formatted text from offset 0, no segments, and the transcript's tasks in the contract order."""
    row = DATA.row("Budget review")
    result = srv.result("get_transcript", {"id": row.id})
    assert result["format"] == "formatted"
    assert result["text"] == row.formatted_text
    assert result["offset"] == 0
    assert result["total_chars"] == len(row.formatted_text or "")
    assert result["next_offset"] is None
    assert "segments" not in result
    assert (result["id"], result["title"], result["source"]) == (row.id, row.title, row.source)
    assert result["model"] == "whisper-large-v3-turbo"
    assert result["created_at"] == result["updated_at"] == row.created_at
    expected = task_order([t for t in DATA.tasks if t.transcript_id == row.id])
    assert result["tasks"] == [{"id": t.id, "title": t.title, "status": t.status, "due_at": t.due_at} for t in expected]
    assert [t["title"] for t in result["tasks"]] == ["Book the room", "Send the budget", "Pay invoice"]


def test_get_transcript_raw_format_gives_the_verbatim_text(srv: ServerProcess) -> None:
    """format=raw returns raw_text even when a formatted text exists."""
    row = DATA.row("Budget review")
    result = srv.result("get_transcript", {"id": row.id, "format": "raw"})
    assert (result["format"], result["text"]) == ("raw", row.raw_text)


def test_get_transcript_formatted_falls_back_to_raw_when_not_formatted_yet(srv: ServerProcess) -> None:
    """A transcript with no formatted text yet returns its raw text, and says so."""
    row = DATA.row("Roadmap")
    assert row.formatted_text is None
    result = srv.result("get_transcript", {"id": row.id, "format": "formatted"})
    assert result["text"] == row.raw_text
    assert result["format"] == "raw"


def test_get_transcript_default_window_is_20000_characters_or_what_the_budget_holds(srv: ServerProcess) -> None:
    """A long text comes in a window of up to 20 000 characters, cut shorter to fit 8,000 tokens, then the rest."""
    row = DATA.row("Long dictation")
    first = srv.result("get_transcript", {"id": row.id})
    assert first["total_chars"] == len(LONG_TEXT)
    cut = len(first["text"])
    assert 0 < cut < 20000
    assert first["text"] == LONG_TEXT[:cut]
    assert (first["truncated"], first["next_offset"], first["next_max_chars"]) == (True, cut, 20000 - cut)
    parts, offset = [first["text"]], first["next_offset"]
    while offset is not None:
        window = srv.result("get_transcript", {"id": row.id, "offset": offset})
        assert window["offset"] == offset
        parts.append(window["text"])
        offset = window["next_offset"]
    assert "".join(parts) == LONG_TEXT


@pytest.mark.parametrize("name", list(SPECIAL_TEXTS))
@pytest.mark.parametrize("max_chars", [1, 4, 9, 50])
def test_windows_rebuild_the_whole_text_without_splitting_characters(
    srv: ServerProcess, name: str, max_chars: int
) -> None:
    """Following next_offset to the end gives back the whole text; no window splits a cluster or a surrogate pair."""
    text = SPECIAL_TEXTS[name]
    row = DATA.row(f"Special {name}")
    if max_chars == 1:
        text = text[: len(text) // 6]  # one repetition of the pattern is enough one character at a time
    pieces: list[str] = []
    offset: int | None = 0
    while offset is not None:
        result = srv.result("get_transcript", {"id": row.id, "offset": offset, "max_chars": max_chars})
        assert result["offset"] == offset
        assert result["total_chars"] == len(row.raw_text)
        piece = result["text"]
        piece.encode("utf-16-le")  # a lone surrogate would raise: windows never split a pair
        assert piece, "a window before the end is never empty"
        end = offset + len(piece)
        assert not breaks_cluster(row.raw_text, end), (offset, end)
        pieces.append(piece)
        offset = result["next_offset"]
        if offset is not None:
            assert offset == end
        if max_chars == 1 and end >= len(text):
            break
    if max_chars == 1:
        assert "".join(pieces)[: len(text)] == text
    else:
        assert "".join(pieces) == row.raw_text


@pytest.mark.parametrize("offset", [pytest.param("total", id="at-the-end"), pytest.param("beyond", id="past-the-end")])
def test_a_window_at_or_past_the_end_is_empty_and_final(srv: ServerProcess, offset: str) -> None:
    """offset >= total_chars: empty text, next_offset null, not an error."""
    row = DATA.row("Roadmap")
    start = len(row.raw_text) + (0 if offset == "total" else 1000)
    result = srv.result("get_transcript", {"id": row.id, "offset": start})
    assert result["text"] == ""
    assert result["next_offset"] is None
    assert result["total_chars"] == len(row.raw_text)


def test_include_segments_returns_the_segments_overlapping_the_window(srv: ServerProcess) -> None:
    """With the whole text, every segment in order; with small windows, the segments each window overlaps."""
    row = DATA.row("Team meeting")
    assert row.segments is not None
    whole = srv.result("get_transcript", {"id": row.id, "include_segments": True})
    assert [(s["seq"], s["speaker"], s["text"]) for s in whole["segments"]] == [
        (i, speaker, text) for i, (speaker, text) in enumerate(row.segments)
    ]
    starts = [s["start_ms"] for s in whole["segments"]]
    assert starts == sorted(starts)
    assert all(s["end_ms"] > s["start_ms"] for s in whole["segments"])
    first = srv.result("get_transcript", {"id": row.id, "include_segments": True, "max_chars": 10})
    assert [s["seq"] for s in first["segments"]] == [0]
    seen: set[int] = set()
    offset: int | None = 0
    while offset is not None:
        window = srv.result(
            "get_transcript", {"id": row.id, "include_segments": True, "max_chars": 15, "offset": offset}
        )
        for s in window["segments"]:
            assert row.raw_text.find(s["text"]) < window["offset"] + len(window["text"])
            assert row.raw_text.find(s["text"]) + len(s["text"]) > window["offset"]
            seen.add(s["seq"])
        offset = window["next_offset"]
    assert seen == {0, 1, 2, 3}


@pytest.mark.parametrize(
    "which", [pytest.param("unknown", id="unknown-id"), pytest.param("trashed", id="in-the-trash")]
)
def test_get_transcript_of_a_missing_or_trashed_id_is_not_found(srv: ServerProcess, which: str) -> None:
    """ "Transcript {id} not found", and nothing of the trashed row; the trash is not special.

    (An error before 2025-11-25, an isError result from it: tests/e2e/test_revisions.py, for every revision.)
    """
    transcript_id = tid(900) if which == "trashed" else "3f2c0000-0000-4000-8000-00000000dead"
    response = srv.call("get_transcript", {"id": transcript_id})
    assert response["error"]["code"] == -32000
    assert response["error"]["message"] == f"Transcript {transcript_id} not found"
    assert MARKER not in json.dumps(response)


ODD_IDS = ["' OR 1=1 --", "%", "_", "*", "🎉", "\ud800", "x\udfffy", "a" * 10_000, " ", "NULL"]


@pytest.mark.parametrize("odd_id", [pytest.param(v, id=f"id{i}") for i, v in enumerate(ODD_IDS)])
def test_odd_ids_are_simply_not_found(srv: ServerProcess, odd_id: str) -> None:
    """Any id naming no transcript (SQL-like, wildcard, lone surrogate, huge) is "not found", no other error."""
    response = srv.call("get_transcript", {"id": odd_id})
    assert response["error"]["code"] == -32000, response
    # A lone surrogate is not Unicode: the server echoes U+FFFD in its place.
    shown = odd_id.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if len(shown) > 100:  # a huge one is named by its start and its length, never echoed whole
        shown = f"{shown[:100]}… ({len(shown)} characters)"
    assert response["error"]["message"] == f"Transcript {shown} not found"
    assert srv.result("list_tasks", {"transcript_id": odd_id})["tasks"] == []


# -- search_transcripts ---------------------------------------------------------------------


def hit_titles(server: ServerProcess, query: str, **arguments: Any) -> list[str]:
    return [h["title"] for h in server.result("search_transcripts", {"query": query, **arguments})["hits"]]


BR, RM, QP, TM = "Budget review", "Roadmap", "Quarter planning", "Team meeting"


@pytest.mark.parametrize(
    ("query", "every", "partial"),
    [
        pytest.param("budget", {BR, QP, TM}, set(), id="word"),
        pytest.param("budget roadmap", {QP, TM}, {BR, RM}, id="terms"),
        pytest.param("roadmap budget", {QP, TM}, {BR, RM}, id="terms-any-order"),
        pytest.param("who approved the budget", {TM}, {BR, QP}, id="question"),
        pytest.param("what is the budget", {BR, QP, TM}, set(), id="function-words-dropped"),
        pytest.param('"the budget is"', {BR, TM}, set(), id="phrase"),
        pytest.param('"budget the"', set(), set(), id="phrase-order-matters"),
        pytest.param("quarter*", {BR, RM, QP}, set(), id="prefix"),
        pytest.param("quarter", {BR, RM, QP}, set(), id="word-finds-its-inflections"),
        pytest.param('"quarter"', {RM, QP}, set(), id="quoted-word-as-written"),
        pytest.param("plans", {RM, QP}, set(), id="plural-finds-singular"),
        pytest.param('"plans"', set(), set(), id="quoted-plural-as-written"),
        pytest.param("plan", {QP}, set(), id="short-word-whole"),
        pytest.param("milk OR hiring", {"Groceries", QP}, set(), id="or"),
        pytest.param("cafe", {"Café chat", "Special combining"}, set(), id="accent-insensitive"),
        pytest.param("CAFÉ", {"Café chat", "Special combining"}, set(), id="case-insensitive"),
        pytest.param("resume", {"Ideas", "Special combining"}, set(), id="decomposed-accents"),
        pytest.param("NAIVE", {"Café chat", "Special combining"}, set(), id="diaeresis"),
        pytest.param("istanbul", {"Turkey trip"}, set(), id="dotted-capital-i"),
        pytest.param("pre-release", {"Pre-release checks"}, set(), id="hyphenated"),
        pytest.param("don't", {"Groceries"}, set(), id="apostrophe"),
        pytest.param("σοφία", {"Greek lesson"}, set(), id="greek"),
    ],
)
@pytest.mark.parametrize("mode", ["fts", "scan"])
def test_search_query_language(
    srv: ServerProcess, scan_srv: ServerProcess, mode: str, query: str, every: set[str], partial: set[str]
) -> None:
    """Terms (words and their inflections, "phrases", prefix*, OR; function words dropped), case/accent folding.

    sort=newest finds exactly the transcripts with every term; relevance (the default) finds those
    first, then the ones with only some of the terms.
    """
    server = srv if mode == "fts" else scan_srv
    timed = server.result("search_transcripts", {"query": query, "limit": 50, "sort": "newest"})
    assert (timed["mode"], timed["query"], timed["sort"]) == (mode, query, "newest")
    assert {h["title"] for h in timed["hits"]} == every
    result = server.result("search_transcripts", {"query": query, "limit": 50})
    assert (result["mode"], result["query"], result["sort"]) == (mode, query, "relevance")
    titles = [h["title"] for h in result["hits"]]
    assert set(titles[: len(every)]) == every
    assert set(titles[len(every) :]) == partial
    terms = {len(h["matched_terms"]) for h in result["hits"] if h["title"] in every}
    assert all(len(h["matched_terms"]) < min(terms) for h in result["hits"] if h["title"] in partial)


# The contract: both modes give the same scores to ~1e-6 (SQLite's bm25() and the scan's own arithmetic).
SCORE_TOLERANCE = 1e-6


def assert_same_hits(fts: dict[str, Any], scan: dict[str, Any], tolerance: float = SCORE_TOLERANCE) -> None:
    """The same hits in the same order, with the same snippets, terms and moments; scores within tolerance."""
    assert [{**h, "score": None} for h in fts["hits"]] == [{**h, "score": None} for h in scan["hits"]]
    scores = [h["score"] for h in scan["hits"]]
    assert [h["score"] for h in fts["hits"]] == pytest.approx(scores, abs=tolerance)
    assert (fts["sort"], fts["ranked_among"]) == (scan["sort"], scan["ranked_among"])


ODD_QUERIES = [
    '"',
    '""',
    "*",
    "NEAR(",
    "NEAR(budget roadmap, 2)",
    "-",
    "-budget",
    "AND",
    "OR",
    "NOT budget",
    "budget OR",
    "OR budget",
    "budget AND roadmap",
    '"unclosed budget',
    'budget "',
    "🎉",
    "🎉🚀😀",
    FAMILY,
    "b" * 500,
    "'; DROP TABLE transcripts; --",
    "budget'); DELETE FROM tasks; --",
    '" OR 1=1 --',
    "title:budget",
    "transcripts_fts:budget",
    "^budget",
    "budget*roadmap",
    "{budget roadmap}",
    "(budget",
    "budget)",
    "\\",
    "%",
    "_",
    "budget +roadmap",
    "e\u0301",
    "   ",
    "\t\n",
]


@pytest.mark.parametrize("query", [pytest.param(q, id=f"odd{i}") for i, q in enumerate(ODD_QUERIES)])
def test_odd_queries_are_never_an_error_and_agree_in_both_modes(
    srv: ServerProcess, scan_srv: ServerProcess, query: str
) -> None:
    """Whatever the input, the search answers (never a syntax error), the same with and without the index."""
    fts = srv.result("search_transcripts", {"query": query, "limit": 50})
    scan = scan_srv.result("search_transcripts", {"query": query, "limit": 50})
    assert fts["query"] == scan["query"] == query
    assert (fts["mode"], scan["mode"]) == ("fts", "scan")
    assert_same_hits(fts, scan)
    for hit in fts["hits"]:
        assert MARKER not in json.dumps(hit)


SAME_QUERIES = [
    ("budget", {}),
    ("budget", {"limit": 1}),
    ("budget", {"limit": 2}),
    ("roadmap", {"source": "meeting"}),
    ("budget", {"since": "2026-05-05"}),
    ("budget", {"until": "2026-05-28"}),
    ("filler", {"limit": 5}),
    ("filler", {"since": "2026-05-15T10:00:00Z", "until": "2026-05-20"}),
    ("nothing", {"limit": 50}),
    ("Filler 3", {}),
    ('"filler text"', {"limit": 50}),
    ("fill*", {"limit": 7}),
    ("the", {"limit": 50}),
    ("café", {}),
    ("cafe naive", {}),
    ("resume", {}),
    ("résumé", {}),
    ("istanbul", {}),
    ("İSTANBUL", {}),
    ("σοφια", {}),
    ("σοφία", {}),
    ("ΣΟΦΊΑ", {}),
    ("ana ben", {}),
    ("approved OR milk", {}),
    ("word3999", {}),
    ("word39*", {"limit": 50}),
    ("🎉 party", {}),
    ("family", {}),
    ("release", {}),
    ("dont", {}),
    ('"hiring and roadmap"', {}),
    ("plan", {}),
    ("🎉", {}),
    ("\ud83d party", {}),
]


@pytest.mark.parametrize(
    ("query", "arguments"),
    [pytest.param(q, a, id=f"{q}-{json.dumps(a, sort_keys=True)}") for q, a in SAME_QUERIES],
)
def test_search_gives_the_same_hits_snippets_and_segments_with_and_without_the_index(
    srv: ServerProcess, scan_srv: ServerProcess, query: str, arguments: dict[str, Any]
) -> None:
    """A store without *_fts tables (scan mode) answers exactly as the indexed one: hits, order, snippets, segments."""
    fts = srv.result("search_transcripts", {"query": query, **arguments})
    scan = scan_srv.result("search_transcripts", {"query": query, **arguments})
    assert (fts["mode"], scan["mode"]) == ("fts", "scan")
    assert_same_hits(fts, scan)
    for sort in ("newest", "oldest"):
        timed = [s.result("search_transcripts", {"query": query, **arguments, "sort": sort}) for s in (srv, scan_srv)]
        assert_same_hits(timed[0], timed[1], tolerance=0)


@pytest.mark.parametrize("query", ["budget", "family", "word3999"])
def test_scores_agree_to_a_millionth_with_and_without_the_index(
    srv: ServerProcess, scan_srv: ServerProcess, query: str
) -> None:
    """What the contract promises, on a store whose texts hold emoji, modifiers and joiners."""
    fts = srv.result("search_transcripts", {"query": query})
    scan = scan_srv.result("search_transcripts", {"query": query})
    assert fts["hits"]
    assert_same_hits(fts, scan, tolerance=1e-6)


def test_search_hits_carry_the_contract_fields_best_first(srv: ServerProcess) -> None:
    """Each hit has exactly the contract's fields; scores never increase down the list.

    A score is the number of terms matched plus BM25 squashed into [0, 1).
    """
    result = srv.result("search_transcripts", {"query": "what about the budget roadmap", "limit": 50})
    assert set(result) == {"query", "mode", "sort", "ranked_among", "hits", "next_cursor", "max_tokens"}
    assert result["next_cursor"] is None
    assert result["sort"] == "relevance"
    hits = result["hits"]
    assert result["ranked_among"] == len(hits) == 4  # every match was compared
    fields = {"transcript_id", "title", "created_at", "source", "score", "matched_terms", "moments", "speakers"}
    for hit in hits:
        # A snippet only where no moment quotes the match (it would say the same twice).
        assert set(hit) == fields | {"duration_ms"} | (set() if hit["moments"] else {"snippet"})
        assert isinstance(hit["score"], (int, float))
        assert int(hit["score"]) == len(hit["matched_terms"]) > 0
        assert set(hit["matched_terms"]) <= {"budget", "roadmap"}
        assert len(hit["moments"]) <= 3
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert [h["matched_terms"] for h in hits[:2]] == [["budget", "roadmap"]] * 2
    by_title = {h["title"]: h for h in hits}
    assert by_title["Budget review"]["transcript_id"] == DATA.row("Budget review").id
    assert by_title["Budget review"]["created_at"] == DATA.row("Budget review").created_at
    assert by_title["Budget review"]["source"] == DATA.row("Budget review").source


def test_search_snippet_wraps_each_match_in_bold_and_comes_from_the_text(srv: ServerProcess) -> None:
    """The snippet shows the text around the first match, every match wrapped in **, at most ~200 characters."""
    hits = {h["title"]: h for h in srv.result("search_transcripts", {"query": "budget", "limit": 50})["hits"]}
    # A meeting's matches are quoted by its moments, each in bold; no snippet says them again.
    said = [m["snippet"] for m in hits["Team meeting"]["moments"]]
    assert said
    assert all("**budget**" in m for m in said)
    assert "snippet" not in hits["Team meeting"]
    long_hit = srv.result("search_transcripts", {"query": "word2000"})["hits"][0]
    [moment] = long_hit["moments"]  # one segment, the whole text: its moment quotes around the match
    long = moment["snippet"]
    assert "**word2000**" in long
    assert long.startswith("…")
    assert long.endswith("…")
    assert len(long.replace("**", "")) <= 205
    assert long.replace("**", "").strip("…") in LONG_TEXT
    accent_hit = srv.result("search_transcripts", {"query": "cafe"})["hits"][0]
    accent = accent_hit.get("snippet") or " ".join(m["snippet"] for m in accent_hit["moments"])
    assert "**café**" in accent
    assert "**CAFE**" in accent


def test_search_moments_are_the_matching_segments(srv: ServerProcess) -> None:
    """Moments point at the segments that match, with their time and speaker; none (a snippet) when none does."""
    row = DATA.row("Team meeting")
    budget = next(
        h for h in srv.result("search_transcripts", {"query": "budget"})["hits"] if h["transcript_id"] == row.id
    )
    whole = srv.result("get_transcript", {"id": row.id, "include_segments": True})
    second = whole["segments"][1]
    moment = next(m for m in budget["moments"] if m["seq"] == 1)
    assert {k: moment[k] for k in ("seq", "start_ms", "end_ms", "speaker")} == {
        k: second[k] for k in ("seq", "start_ms", "end_ms", "speaker")
    }
    assert moment["speaker"] == "Ben"
    roadmap = next(
        h for h in srv.result("search_transcripts", {"query": "roadmap"})["hits"] if h["transcript_id"] == row.id
    )
    assert roadmap["moments"][0]["seq"] == 2
    title_only = srv.result("search_transcripts", {"query": "meeting"})["hits"]
    [found] = [h for h in title_only if h["transcript_id"] == row.id]
    assert found["moments"] == []
    assert found["snippet"]


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_search_limit_caps_the_hits(srv: ServerProcess, limit: int) -> None:
    """limit=N returns at most N hits, the first N of the full list."""
    full = srv.result("search_transcripts", {"query": "filler", "limit": 50})["hits"]
    capped = srv.result("search_transcripts", {"query": "filler", "limit": limit})["hits"]
    assert capped == full[:limit]


def test_search_filters_by_time_and_source(srv: ServerProcess) -> None:
    """since/until/source restrict hits exactly as they restrict list_transcripts."""
    for arguments in (
        {"source": "meeting"},
        {"source": "file"},
        {"since": "2026-05-09"},
        {"until": "2026-05-09T12:00:00+02:00"},
        {"since": "2026-05-02", "until": "2026-05-28", "source": "dictation"},
    ):
        listed = {
            t["id"]
            for page in all_pages(srv, "list_transcripts", "transcripts", {**arguments, "limit": 100})
            for t in page
        }
        hits = srv.result("search_transcripts", {"query": "the", "limit": 50, **arguments})["hits"]
        assert hits, arguments
        assert {h["transcript_id"] for h in hits} <= listed
        unfiltered = srv.result("search_transcripts", {"query": "the", "limit": 50})["hits"]
        assert [h for h in unfiltered if h["transcript_id"] in listed] == hits


# -- list_tasks ----------------------------------------------------------------------------


def task_json(t: Task) -> dict[str, Any]:
    rows = {r.id: r for r in DATA.rows}
    ref = rows.get(t.transcript_id or "")
    return {
        "id": t.id,
        "title": t.title,
        "notes": t.notes,
        "status": t.status,
        "priority": t.priority,
        "due_at": t.due_at,
        "created_at": t.created_at,
        "completed_at": ts(30) if t.status == "done" else None,
        "transcript": None
        if ref is None
        else {"id": ref.id, "title": ref.title, "created_at": ref.created_at, "source": ref.source},
    }


@pytest.mark.parametrize("limit", [1, 4, 50, 100])
def test_list_tasks_pages_to_the_end_in_the_contract_order(srv: ServerProcess, limit: int) -> None:
    """Open before done, due soonest first, undated last, then newest first; every task once over all pages."""
    pages = all_pages(srv, "list_tasks", "tasks", {"limit": limit, "max_tokens": 20_000})  # limit sets the page
    got = [t for page in pages for t in page]
    assert got == [task_json(t) for t in task_order(DATA.shown_tasks)]
    assert len(pages) == math.ceil(len(DATA.shown_tasks) / limit)


def test_list_tasks_defaults_to_all_statuses_and_50_per_page(srv: ServerProcess) -> None:
    """No arguments: open and done tasks, up to 50 (as many as fit in the default 8,000 tokens)."""
    result = srv.result("list_tasks", {"max_tokens": 20_000})
    assert len(result["tasks"]) == min(50, len(DATA.shown_tasks))
    assert {t["status"] for t in result["tasks"]} == {"open", "done"}
    assert result["next_cursor"] is None
    default = srv.result("list_tasks")
    assert default["tasks"] == result["tasks"][: len(default["tasks"])]
    assert default["max_tokens"] == 8_000


@pytest.mark.parametrize(
    ("arguments", "keep"),
    [
        pytest.param({"status": "open"}, lambda t: t.status == "open", id="open"),
        pytest.param({"status": "done"}, lambda t: t.status == "done", id="done"),
        pytest.param({"status": "all"}, lambda _: True, id="all"),
        pytest.param({"transcript_id": tid(1)}, lambda t: t.transcript_id == tid(1), id="transcript"),
        pytest.param({"transcript_id": "no-such"}, lambda _: False, id="unknown-transcript"),
        pytest.param({"due_before": "2026-05-12"}, lambda t: t.due_at is not None and t.due_at < ts(12), id="due-date"),
        pytest.param(
            {"due_before": "2026-05-12T02:00:00+02:00"},
            lambda t: t.due_at is not None and t.due_at < ts(12),
            id="due-with-offset",
        ),
        pytest.param(
            {"status": "open", "due_before": "2026-05-16"},
            lambda t: t.status == "open" and t.due_at is not None and t.due_at < ts(16),
            id="combined",
        ),
    ],
)
def test_list_tasks_filters(srv: ServerProcess, arguments: dict[str, Any], keep: Callable[[Task], bool]) -> None:
    """status, transcript_id and due_before select exactly the matching tasks, still in order, over pages."""
    pages = all_pages(srv, "list_tasks", "tasks", {**arguments, "limit": 3})
    assert [t for page in pages for t in page] == [task_json(t) for t in task_order(DATA.shown_tasks) if keep(t)]


def test_list_tasks_paging_is_stable_while_the_app_inserts(start_server: Start, new_store: NewStore) -> None:
    """Tasks added between pages ahead of the cursor do not shift later pages; ones after it show up."""
    b = new_store()
    for i in range(6):
        b.task(id=f"t{i}", title=f"T{i}", due_at=ts(10 + i), created_at=ts(1))
    db = b.close()
    server = start_server(db)
    server.initialize("2025-06-18")
    first = server.result("list_tasks", {"limit": 3})
    assert [t["title"] for t in first["tasks"]] == ["T0", "T1", "T2"]
    app = sqlite3.connect(db)
    try:
        app.execute("INSERT INTO tasks (id, title, due_at, created_at) VALUES ('a', 'Earlier', ?, ?)", (ts(9), ts(1)))
        app.execute("INSERT INTO tasks (id, title, due_at, created_at) VALUES ('z', 'Later', ?, ?)", (ts(20), ts(1)))
        app.execute("INSERT INTO tasks (id, title, created_at) VALUES ('u', 'Undated', ?)", (ts(1),))
        app.commit()
        rest = all_pages(server, "list_tasks", "tasks", {"limit": 3, "cursor": first["next_cursor"]})
    finally:
        app.close()
    assert [t["title"] for page in rest for t in page] == ["T3", "T4", "T5", "Later", "Undated"]


# -- the trash -----------------------------------------------------------------------------


def test_the_trash_never_shows_anywhere(srv: ServerProcess, scan_srv: ServerProcess) -> None:
    """No list, search (snippets included) or task reference ever carries a trashed transcript or its text."""
    trashed = {r.id for r in DATA.rows if r.deleted}
    for server in (srv, scan_srv):
        start = len(server.raw_stdout)
        listed = [t for page in all_pages(server, "list_transcripts", "transcripts", {"limit": 7}) for t in page]
        assert not trashed & {t["id"] for t in listed}
        for query in ("budget", "roadmap café", "never show", '"budget plan"', "zanz*", "secret", "eve"):
            # Every plan: relevance, time order, and the trashed transcripts' own speaker (Eve).
            for extra in ({}, {"sort": "newest"}, {"sort": "oldest"}, {"speaker": "Eve"}, {"speaker": "ben"}):
                hits = server.result("search_transcripts", {"query": query, "limit": 50, **extra})["hits"]
                assert not trashed & {h["transcript_id"] for h in hits}, (query, extra)
                if "speaker" in extra and extra["speaker"] == "Eve":
                    assert hits == [], query
        tasks = [t for page in all_pages(server, "list_tasks", "tasks", {"limit": 9}) for t in page]
        assert len(tasks) == len(DATA.shown_tasks)
        # A task of a trashed transcript is never shown, whatever it is asked for by.
        for extra in ({}, {"query": "secret"}, {"status": "done"}, {"transcript_id": tid(900)}):
            got = [t for page in all_pages(server, "list_tasks", "tasks", {"limit": 9, **extra}) for t in page]
            assert not {"Follow up secret", "Closed secret item"} & {t["title"] for t in got}, extra
        assert all(t["transcript"] is None or t["transcript"]["id"] not in trashed for t in tasks)
        shown = b"".join(server.raw_stdout[start:]).decode()
        assert MARKER not in shown
        assert "Never show" not in shown
        for rid in trashed:
            assert rid not in shown
        assert server.result("search_transcripts", {"query": MARKER})["hits"] == []


def test_list_tasks_transcript_reference_names_the_live_transcript(srv: ServerProcess) -> None:
    """A task's transcript is {id, title, created_at, source} of its live source transcript, null when it has none."""
    tasks = {t["title"]: t for t in srv.result("list_tasks", {"limit": 100})["tasks"]}
    row = DATA.row("Budget review")
    assert tasks["Send the budget"]["transcript"] == {
        "id": tid(1),
        "title": "Budget review",
        "created_at": row.created_at,
        "source": row.source,
    }
    assert tasks["Call the bank"]["transcript"] is None
