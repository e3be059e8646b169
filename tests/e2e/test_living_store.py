"""The store changes under a running server, the app playing in another process (issue 10).

The app (tests/support/app.py) drops and rebuilds its full-text index, changes
its schema version, VACUUMs with every rowid renumbered, moves transcripts to
the trash between two pages, or the file is replaced by a rename: each time
the next call, on the same server process, answers for the store as it now is.
Every step of the app is acknowledged before the test goes on: no sleeps.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.support.app import App
from tests.support.server import Launcher, ServerProcess

Start = Callable[..., ServerProcess]
NewStore = Callable[..., StoreBuilder]
REVISION = "2025-06-18"
TOPICS = ("budget", "hiring", "roadmap", "pricing", "security", "onboarding")


def topic_store(new_store: NewStore, *, fts: bool = True) -> tuple[Path, dict[str, str]]:
    """One transcript per topic (its word in the title and text, said by one speaker); returns the ids by topic."""
    b = new_store(fts=fts)
    ids = {}
    for day, topic in enumerate(TOPICS, start=1):
        text = f"notes on the {topic} plan, then other business"
        ids[topic] = b.transcript(
            title=f"{topic.title()} meeting",
            source="meeting",
            raw_text=text,
            created_at=ts(day),
            segments=[
                ("Ana", "good morning everyone"),
                ("Bo", f"notes on the {topic} plan"),
                ("Ana", "other business"),
            ],
        )
    return b.close(), ids


def serve(start_server: Start, db: Path) -> ServerProcess:
    server = start_server(db)
    server.initialize(REVISION)
    return server


def search(server: ServerProcess, query: str, **more: Any) -> dict[str, Any]:
    return server.result("search_transcripts", {"query": query, **more})


def assert_finds_each_topic(server: ServerProcess, ids: dict[str, str], mode: str) -> None:
    """Each topic's word finds its transcript alone: the right id, title and moment, the word in bold."""
    for topic, tid in ids.items():
        found = search(server, topic)
        assert found["mode"] == mode, found
        assert [(h["transcript_id"], h["title"]) for h in found["hits"]] == [(tid, f"{topic.title()} meeting")]
        hit = found["hits"][0]
        assert [(m["seq"], m["speaker"]) for m in hit["moments"]] == [(1, "Bo")], hit
        assert f"**{topic}**" in hit["moments"][0]["snippet"].lower(), hit
        assert server.result("get_transcript", {"id": tid})["text"] == f"notes on the {topic} plan, then other business"


def store_error(server: ServerProcess, tool: str, arguments: dict[str, Any]) -> str:
    response = server.call(tool, arguments)
    assert response.get("error", {}).get("code") == -32603, response
    return str(response["error"]["message"])


def titles(server: ServerProcess, tool: str = "list_transcripts", **arguments: Any) -> list[str]:
    key = "tasks" if tool == "list_tasks" else "transcripts"
    return [row["title"] for row in server.result(tool, arguments)[key]]


def test_full_text_tables_dropped_and_rebuilt_mid_session_switch_search_to_scan_and_back(
    start_server: Start, new_store: NewStore, apps: Callable[[Path], App]
) -> None:
    """No *_fts tables: the next search scans (same hits); the index back: the next one uses it, new rows included."""
    db, ids = topic_store(new_store)
    app = apps(db)
    server = serve(start_server, db)
    assert_finds_each_topic(server, ids, "fts")
    before = search(server, "plan notes", limit=10)
    app.drop_fts()
    assert_finds_each_topic(server, ids, "scan")
    scanned = search(server, "plan notes", limit=10)
    assert scanned["mode"] == "scan"
    assert [(h["transcript_id"], h["score"]) for h in scanned["hits"]] == [
        (h["transcript_id"], pytest.approx(h["score"])) for h in before["hits"]
    ]
    # Written while there is no index (and no trigger to feed one): the scan sees it.
    newer = app.insert("Budget meeting", "notes on the budget plan, then other business", ts(20))
    late = search(server, "budget")
    assert late["mode"] == "scan"
    assert [h["transcript_id"] for h in late["hits"]] == [newer, ids["budget"]]  # same text: newest first
    app.rebuild_fts()
    found = search(server, "budget")
    assert found["mode"] == "fts"
    assert [h["transcript_id"] for h in found["hits"]] == [h["transcript_id"] for h in late["hits"]]
    app.close()


def test_a_schema_version_bumped_then_restored_mid_session_errors_then_answers(
    start_server: Start, new_store: NewStore, apps: Callable[[Path], App], launcher: Launcher
) -> None:
    """user_version 2: each call gets the newer-schema error the server gives at start; back to 1: answers again."""
    db, ids = topic_store(new_store)
    app = apps(db)
    server = serve(start_server, db)
    assert len(titles(server)) == len(TOPICS)
    app.user_version(2)
    for tool, arguments in (
        ("list_transcripts", {}),
        ("search_transcripts", {"query": "budget"}),
        ("get_transcript", {"id": ids["budget"]}),
        ("list_tasks", {}),
    ):
        message = store_error(server, tool, arguments)
        assert "schema version 2" in message, message
        assert "upgrade magnotia-mcp" in message, message
        assert launcher.served_path(db) in message
    assert server.request("ping")["result"] == {}
    app.user_version(1)
    assert len(titles(server)) == len(TOPICS)
    assert [h["transcript_id"] for h in search(server, "budget")["hits"]] == [ids["budget"]]
    app.close()


@pytest.mark.parametrize("fts", [pytest.param(True, id="fts"), pytest.param(False, id="scan")])
def test_a_vacuum_that_renumbers_every_rowid_mid_session_keeps_search_results_right(
    start_server: Start, new_store: NewStore, apps: Callable[[Path], App], fts: bool
) -> None:
    """Rowids reversed, VACUUM, index rebuilt: every word still finds its own transcript, title, text and moment."""
    db, ids = topic_store(new_store, fts=fts)
    app = apps(db)
    server = serve(start_server, db)
    mode = "fts" if fts else "scan"
    assert_finds_each_topic(server, ids, mode)  # anything the server keeps between calls is filled now
    rowids = app.vacuum_renumbered()
    assert set(rowids) == set(ids.values())
    assert_finds_each_topic(server, ids, mode)
    newest = search(server, "plan", sort="newest", limit=10)
    assert [h["transcript_id"] for h in newest["hits"]] == [ids[t] for t in reversed(TOPICS)]
    app.close()


def test_a_transcript_trashed_between_two_pages_is_never_shown_and_nothing_is_skipped(
    start_server: Start, new_store: NewStore, apps: Callable[[Path], App]
) -> None:
    """list_transcripts and list_tasks pages: the app trashes one shown and one not yet shown between pages."""
    b = new_store()
    tids = [b.transcript(title=f"T{n}", raw_text=f"text {n}", created_at=ts(n)) for n in range(1, 7)]
    for n, tid in enumerate(tids, start=1):
        b.task(transcript_id=tid, title=f"K{n}", due_at=ts(n, month=6), created_at=ts(n))
    db = b.close()
    app = apps(db)
    server = serve(start_server, db)

    first = server.result("list_transcripts", {"limit": 2})
    assert [t["title"] for t in first["transcripts"]] == ["T6", "T5"]
    tasks_first = server.result("list_tasks", {"limit": 2})
    assert [(k["title"], k["transcript"]["title"]) for k in tasks_first["tasks"]] == [("K1", "T1"), ("K2", "T2")]

    answered = len(server.raw_stdout)
    app.trash(tids[5])  # T6: on the first page already
    app.trash(tids[3])  # T4: on the next page
    app.trash(tids[2])  # T3: its task K3 is on the next page of tasks
    app.insert("T7", "text 7", ts(7))  # newer than the first page: not on the later ones

    rest = pages(server, "list_transcripts", "transcripts", first["next_cursor"])
    assert [t["title"] for t in rest] == ["T2", "T1"]
    tasks_rest = pages(server, "list_tasks", "tasks", tasks_first["next_cursor"])
    # K3, K4 and K6: their transcripts are in the trash, and so neither they nor their transcripts show.
    assert [(k["title"], k["transcript"]["title"]) for k in tasks_rest] == [("K5", "T5")]
    since_trash = b"".join(server.raw_stdout[answered:]).decode()
    for trashed in ('"T3"', '"T4"', '"T6"', "text 3", "text 4", "text 6", *tids[2:4], tids[5]):
        assert trashed not in since_trash, trashed
    app.close()


def test_a_transcript_trashed_after_a_search_is_not_found_by_the_next(
    start_server: Start, new_store: NewStore, apps: Callable[[Path], App]
) -> None:
    """What the server remembers of the trash between searches follows the app: trashed, then gone from search."""
    b = new_store()
    tids = [b.transcript(title=f"T{n}", raw_text=f"budget notes {n}", created_at=ts(n)) for n in range(1, 5)]
    db = b.close()
    app = apps(db)
    server = serve(start_server, db)
    for query in ("budget", "budget notes", "budget OR zebra"):
        assert {h["transcript_id"] for h in search(server, query)["hits"]} == set(tids)
    app.trash(tids[1])
    for query in ("budget", "budget notes", "budget OR zebra"):
        found = search(server, query)
        assert {h["transcript_id"] for h in found["hits"]} == set(tids) - {tids[1]}, query
    app.close()


def pages(server: ServerProcess, tool: str, key: str, cursor: str | None) -> list[dict[str, Any]]:
    """Every row from cursor to the last page (limit 2 a page)."""
    assert cursor is not None, "the first page should say there is more"
    rows: list[dict[str, Any]] = []
    while cursor is not None:
        page = server.result(tool, {"limit": 2, "cursor": cursor})
        rows += page[key]
        cursor = page["next_cursor"]
    return rows


def _same_ids_other_texts(path: Path, padding: int) -> Path:
    """Transcripts with fixed ids and times; padding makes the first one's text longer (and its BM25 lower)."""
    b = StoreBuilder(path, fts=False)
    b.transcript(id="a", title="Alpha", raw_text="budget " + "filler " * padding, created_at=ts(1))
    b.transcript(id="b", title="Beta", raw_text="budget plan", created_at=ts(2))
    for n in range(3, 9):  # rows without the word, so that it weighs something (BM25's idf)
        b.transcript(id=f"other{n}", title=f"Other {n}", raw_text="nothing here", created_at=ts(n))
    return b.close()


def test_a_store_replaced_by_a_rename_is_followed(start_server: Start, tmp_path: Path, launcher: Launcher) -> None:
    """os.replace of another store over the path: the next call answers from the new file, as a fresh server does."""
    db = _same_ids_other_texts(tmp_path / "live" / "magnotia.db", padding=0)
    server = serve(start_server, db)
    old = search(server, "budget")
    assert old["mode"] == "scan"
    other = _same_ids_other_texts(tmp_path / "staging" / "magnotia.db", padding=40)
    os.replace(other, db)
    new = search(server, "budget")
    fresh = serve(start_server, db)
    assert new == search(fresh, "budget")
    assert [h["score"] for h in new["hits"]] != [h["score"] for h in old["hits"]]  # the texts did change
    assert server.result("get_transcript", {"id": "a"})["text"].startswith("budget filler filler")
