"""list_tasks by words, end to end: a query on tasks' title and notes, and where each task came from.

Over stdio and HTTP, on a store with the *_fts tables and one without (tasks have no index: the
answer must not depend on the store's mode). The query language is search_transcripts's: function
words dropped, inflections matched through stems, ``a OR b``, "phrases", ``prefix*``, case and
accents ignored. A query only filters: the tasks it keeps come in the list's own order, and pages
continue exactly (through the store's cursor and through one cut for the budget). Tasks of a
transcript in the trash never show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.protocol import LATEST_LEGACY
from tests.support.server import ServerProcess, SharedServers

pytestmark = pytest.mark.transports("stdio", "http")

TRIP = "00000000-0000-4000-8000-0000000000a1"
BUDGET = "00000000-0000-4000-8000-0000000000a2"
SECRET = "00000000-0000-4000-8000-0000000000a3"  # in the trash
FILLERS = 30
LONG_NOTE = "Nothing much to say about this one, only words to make the page long. " * 5

# (title, notes, status, due_at, created_at, transcript)
TASKS: list[tuple[str, str | None, str, str | None, str, str | None]] = [
    ("Renew the passports", "both of them, before the trip", "open", ts(20), ts(10, 1), TRIP),
    ("Book passport photo", None, "open", None, ts(10, 2), None),
    ("Take a photo of the passport", "for the visa form", "done", ts(15), ts(10, 3), TRIP),
    ("Call the embassy", "ask about the passport appointment", "open", ts(18), ts(10, 4), TRIP),
    ("Visa application", "Café near the consulate", "open", ts(25), ts(10, 5), None),
    ("Résumé review", "the re\u0301sume\u0301 template", "open", None, ts(10, 6), BUDGET),
    ("Resume template", None, "done", None, ts(10, 7), BUDGET),
    ("会议 准备", "预算", "open", None, ts(10, 8), BUDGET),
    ("Send the budget draft", "by Friday", "open", ts(12), ts(12, 1), BUDGET),
    ("Passport for the secret trip", "zanzibar passport", "open", ts(13), ts(12, 2), SECRET),
    ("Secret budget", "passports", "done", None, ts(12, 3), SECRET),
] + [
    (
        f"Filler task {i}",
        LONG_NOTE if i % 3 else None,
        "done" if i % 4 == 0 else "open",
        None if i % 5 == 0 else ts(14 + i % 6, i % 3),
        ts(7, i % 4),
        BUDGET if i % 2 else None,
    )
    for i in range(FILLERS)
]
TRANSCRIPT_REFS = {
    TRIP: {"id": TRIP, "title": "Trip planning", "created_at": ts(9), "source": "meeting"},
    BUDGET: {"id": BUDGET, "title": "Budget review", "created_at": ts(11), "source": "dictation"},
}


def task_id(i: int) -> str:
    return f"task-{i:03d}"


def build(path: Path, *, fts: bool) -> Path:
    b = StoreBuilder(path, fts=fts)
    b.transcript(id=TRIP, title="Trip planning", source="meeting", raw_text="the trip and passports", created_at=ts(9))
    b.transcript(id=BUDGET, title="Budget review", raw_text="the budget", created_at=ts(11))
    b.transcript(id=SECRET, title="Secret", source="meeting", raw_text="zanzibar", created_at=ts(12), deleted_at=ts(13))
    for i, (title, notes, status, due, created, transcript) in enumerate(TASKS):
        b.task(
            id=task_id(i),
            transcript_id=transcript,
            title=title,
            notes=notes,
            status=status,
            due_at=due,
            created_at=created,
            completed_at=ts(30) if status == "done" else None,
        )
    return b.close()


@pytest.fixture(scope="module", params=[True, False], ids=["fts", "scan"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("task-query") / "magnotia.db", fts=request.param)


@pytest.fixture(scope="module")
def scan_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("task-query-scan") / "magnotia.db", fts=False)


@pytest.fixture
def srv(shared_servers: SharedServers, store: Path) -> ServerProcess:
    return shared_servers.get(store, LATEST_LEGACY)


def tasks_of(server: ServerProcess, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Every task over all pages, each page's structuredContent checked against list_tasks's outputSchema."""
    schema = next(t for t in server.request("tools/list")["result"]["tools"] if t["name"] == "list_tasks")
    got: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(len(TASKS) + 1):  # a page holds at least one task: more pages than tasks is a loop
        response = server.call("list_tasks", {**arguments, **({"cursor": cursor} if cursor else {})})
        result = response["result"]
        assert result["isError"] is False, result
        payload = json.loads(result["content"][0]["text"])
        assert result["structuredContent"] == payload
        jsonschema.validate(payload, schema["outputSchema"])
        got += payload["tasks"]
        cursor = payload["next_cursor"]
        if cursor is None:
            return got
    raise AssertionError("list_tasks paged past its last task")


def titles(server: ServerProcess, arguments: dict[str, Any]) -> list[str]:
    return [t["title"] for t in tasks_of(server, arguments)]


def in_list_order(server: ServerProcess, wanted: set[str], **filters: Any) -> list[str]:
    """The titles wanted, in the order the list without a query gives them (with the same filters)."""
    listed = titles(server, {"limit": 100, "max_tokens": 20_000, **filters})
    assert wanted <= set(listed)
    return [t for t in listed if t in wanted]


@pytest.mark.parametrize(
    ("query", "wanted"),
    [
        pytest.param(
            "passports",
            {"Renew the passports", "Book passport photo", "Take a photo of the passport", "Call the embassy"},
            id="stem-finds-singular-and-notes",
        ),
        pytest.param(
            "PASSPORT",
            {"Renew the passports", "Book passport photo", "Take a photo of the passport", "Call the embassy"},
            id="own-stem-finds-plural-any-case",
        ),
        pytest.param("renewing", {"Renew the passports"}, id="inflection"),
        pytest.param(
            "what about the passports",
            {"Renew the passports", "Book passport photo", "Take a photo of the passport", "Call the embassy"},
            id="function-words-dropped",
        ),
        pytest.param(
            "visa OR embassy", {"Take a photo of the passport", "Call the embassy", "Visa application"}, id="or"
        ),
        pytest.param('"passport photo"', {"Book passport photo"}, id="phrase"),
        pytest.param("passport photo", {"Book passport photo", "Take a photo of the passport"}, id="all-words"),
        pytest.param("embas*", {"Call the embassy"}, id="prefix"),
        pytest.param("consulate cafe", {"Visa application"}, id="notes-and-accents"),
        pytest.param("resume", {"Résumé review", "Resume template"}, id="accents-in-the-task"),
        pytest.param("résumé template", {"Résumé review", "Resume template"}, id="accents-in-the-query"),
        pytest.param("会议", {"会议 准备"}, id="cjk"),
        pytest.param("appointment", {"Call the embassy"}, id="notes-only"),
        pytest.param("zanzibar", set(), id="only-in-the-trash"),
        pytest.param("nothing-like-it", set(), id="no-match"),
    ],
)
def test_a_query_keeps_the_tasks_it_matches_in_the_list_order(srv: ServerProcess, query: str, wanted: set[str]) -> None:
    """Title and notes (NULL notes too), in the query language of search_transcripts, whatever the store's mode."""
    assert titles(srv, {"query": query}) == in_list_order(srv, wanted)


def test_a_query_pages_without_loss_or_repeat(srv: ServerProcess) -> None:
    """Many matches, paged by limit and by a budget that cuts pages: each task once, in the list order."""
    fillers = {f"Filler task {i}" for i in range(FILLERS)}
    expected = in_list_order(srv, fillers | {"Send the budget draft"})
    for paging in ({"limit": 4}, {"limit": 7}, {"limit": 100, "max_tokens": 1_000}):
        got = tasks_of(srv, {"query": "filler OR draft", **paging})
        assert [t["title"] for t in got] == expected, paging
    first = srv.result("list_tasks", {"query": "filler", "limit": 100, "max_tokens": 1_000})
    assert first["next_cursor"] is not None  # the budget did cut it
    assert "note" in first
    assert len({t["id"] for t in tasks_of(srv, {"query": "filler", "limit": 3})}) == FILLERS


@pytest.mark.parametrize(
    "filters",
    [
        pytest.param({"status": "open"}, id="open"),
        pytest.param({"status": "done"}, id="done"),
        pytest.param({"due_before": "2026-05-19"}, id="due-before"),
        pytest.param({"status": "open", "due_before": "2026-05-19"}, id="open-and-due"),
        pytest.param({"transcript_id": TRIP}, id="transcript"),
    ],
)
def test_a_query_combines_with_the_other_filters(srv: ServerProcess, filters: dict[str, Any]) -> None:
    """status, due_before and transcript_id narrow a query's tasks as they narrow the list."""
    matching = {"Renew the passports", "Book passport photo", "Take a photo of the passport", "Call the embassy"}
    listed = titles(srv, {"limit": 100, "max_tokens": 20_000, **filters})
    expected = [t for t in listed if t in matching]
    assert expected  # every filter keeps some of them
    assert titles(srv, {"query": "passports", "limit": 2, **filters}) == expected


def test_each_task_says_where_it_came_from(srv: ServerProcess) -> None:
    """Its transcript's id, title, date and source; null without one."""
    got = {t["title"]: t for t in tasks_of(srv, {"query": "passports OR resume OR visa"})}
    assert got["Renew the passports"]["transcript"] == TRANSCRIPT_REFS[TRIP]
    assert got["Résumé review"]["transcript"] == TRANSCRIPT_REFS[BUDGET]
    assert got["Book passport photo"]["transcript"] is None
    assert got["Visa application"]["transcript"] is None
    everything = tasks_of(srv, {"limit": 100, "max_tokens": 20_000})
    by_id = {task_id(i): spec for i, spec in enumerate(TASKS)}
    for task in everything:
        source = by_id[task["id"]][5]
        assert task["transcript"] == (TRANSCRIPT_REFS[source] if source else None), task["title"]


def test_tasks_of_a_trashed_transcript_never_show(srv: ServerProcess) -> None:
    """Not by their words, not by their transcript, not in the plain list; nothing of the trash in any answer."""
    start = len(srv.raw_stdout)
    for arguments in (
        {"query": "passport"},
        {"query": "secret OR zanzibar"},
        {"query": "passports", "status": "done"},
        {"transcript_id": SECRET},
        {"query": "secret", "transcript_id": SECRET},
        {},
    ):
        got = tasks_of(srv, {"limit": 5, **arguments})
        assert not {"Passport for the secret trip", "Secret budget"} & {t["title"] for t in got}, arguments
    shown = b"".join(srv.raw_stdout[start:]).decode()
    for secret in (SECRET, "zanzibar", "Secret budget", "secret trip"):
        assert secret not in shown


def test_a_query_of_no_word_matches_nothing(srv: ServerProcess) -> None:
    """As in search_transcripts: punctuation alone looks for nothing, so finds nothing."""
    answer = srv.result("list_tasks", {"query": "?!"})
    assert (answer["tasks"], answer["next_cursor"]) == ([], None)


@pytest.mark.parametrize("store", [True], ids=["fts"], indirect=True)
def test_the_store_mode_does_not_matter(srv: ServerProcess, shared_servers: SharedServers, scan_store: Path) -> None:
    """The same answers, page for page, from a store with the full-text tables and one without."""
    scan = shared_servers.get(scan_store, LATEST_LEGACY)
    for query in ("passports", "visa OR embassy", '"passport photo"', "embas*", "resume", "filler", "the"):
        arguments = {"query": query, "limit": 3}
        assert tasks_of(srv, arguments) == tasks_of(scan, arguments), query


def test_a_page_found_by_words_holds_ten_tasks_unless_limit_says_otherwise(srv: ServerProcess) -> None:
    """A query's page is short by default (a model reads it whole); a list without one holds 50."""
    found = srv.result("list_tasks", {"query": "filler", "max_tokens": 20_000})
    assert len(found["tasks"]) == 10
    assert found["next_cursor"] is not None
    assert len(srv.result("list_tasks", {"query": "filler", "limit": 25, "max_tokens": 20_000})["tasks"]) == 25
    listed = srv.result("list_tasks", {"max_tokens": 20_000})
    assert len(listed["tasks"]) == min(50, len(TASKS) - 2)  # all but the two of the transcript in the trash
