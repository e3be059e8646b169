"""When words fail (issue 21, item 5): a search that finds little says what the store holds, end to end.

A small multilingual store (English, Portuguese, German, one transcript whose language the app did not
record, and a French one in the trash), written with the full-text index and without it. A search that
finds nothing, or only hits that match at most half of its words, gets a ``hint`` with the store's
languages and counts (never the trash's), its time span, "no semantic index" and the next calls to try;
a search with a good match has no hint, so its answer is as before. The instructions say how languages
work before anything is read, and name the store's languages once a search has read them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder, ts
from tests.e2e.test_budget import tool_tokens
from tests.support.checked import checked_result
from tests.support.protocol import MODERN
from tests.support.server import ServerProcess

Start = Callable[..., ServerProcess]
MIN_TOKENS = 1_000  # the smallest max_tokens a tool accepts

pytestmark = pytest.mark.transports("stdio", "http")


def write_store(path: Path, *, fts: bool) -> Path:
    b = StoreBuilder(path, fts=fts)
    b.transcript(title="Weekly sync", raw_text="The mobile launch moves to June; QA signs off first.", created_at=ts(3))
    standup = b.transcript(title="Standup", raw_text="Yesterday I fixed the export bug.", created_at=ts(4))
    b.task(transcript_id=standup, title="Renew the parking permit", created_at=ts(4))
    b.task(title="Pay the parking fine", notes="by bank transfer", created_at=ts(5))  # of no transcript: listed too
    b.transcript(
        title="Conversa com Beatriz",
        language="pt-BR",
        raw_text="Vamos colocar menos dinheiro nas campanhas no próximo trimestre.",
        created_at=ts(5),
    )
    b.transcript(
        title="Jour fixe",
        language="de",
        raw_text="Jonas übernimmt im Januar die Leitung der Entwicklung.",
        created_at=ts(6),
    )
    b.transcript(
        title="Nota",
        language=None,
        raw_text="Lembrar de que a reunião com o contador é na quinta, e não esquecer os recibos.",
        created_at=ts(7),
    )
    trashed = b.transcript(
        title="Notes", language="fr", raw_text="Le salon de Lyon.", created_at=ts(8), deleted_at=ts(9)
    )  # in the trash: never counted
    b.task(transcript_id=trashed, title="Book the stand at the Lyon salon", created_at=ts(8))  # nor its task
    for k in range(11):  # written first: a count reads on past a whole batch of the trash's tasks
        b.task(transcript_id=trashed, title=f"Repot the plants ({k})", created_at=ts(8))
    for k in range(12):
        b.task(title=f"Water the plants ({k})", status="done" if k % 2 else "open", created_at=ts(5))
    return b.close()


@pytest.fixture(params=["fts", "scan"])
def server(request: pytest.FixtureRequest, tmp_path: Path, start_server: Start) -> ServerProcess:
    db = write_store(tmp_path / "store" / "magnotia.db", fts=request.param == "fts")
    proc = start_server(db)
    proc.open(MODERN)
    return proc


def search(server: ServerProcess, **arguments: Any) -> dict[str, Any]:
    return checked_result(server, "search_transcripts", arguments)


def test_nothing_found_says_what_the_store_holds(server: ServerProcess) -> None:
    result = search(server, query="how do we cut the ad spend")
    assert result["hits"] == []
    hint = result["hint"]
    assert hint["found"] == "nothing"
    assert "not meanings" in hint["message"]
    store = hint["store"]
    assert store["transcripts"] == 5  # the trash is not counted
    assert store["newest_only"] is False
    assert store["semantic_index"] is False
    assert (store["first_at"], store["last_at"]) == (ts(3), ts(7))
    languages = {(lang["language"], lang.get("guessed", False)): lang["transcripts"] for lang in store["languages"]}
    assert languages == {("en", False): 2, ("pt-BR", False): 1, ("de", False): 1, ("pt", True): 1}
    assert {lang["name"] for lang in store["languages"]} == {"English", "Portuguese", "German"}
    tries = " | ".join(hint["try"])
    assert "other words" in tries
    assert "English (2), Portuguese (2), German (1)" in tries
    assert "since/until" in tries
    assert "2026-05-03 to 2026-05-07" in tries


def test_weak_partial_matches_get_a_hint(server: ServerProcess) -> None:
    result = search(server, query="mobile budget forecast")  # only "mobile" is anywhere
    assert [hit["title"] for hit in result["hits"]] == ["Weekly sync"]
    assert result["hint"]["found"] == "partial"


def test_a_filtered_search_suggests_widening_the_filters(server: ServerProcess) -> None:
    result = search(server, query="mobile launch", since="2026-05-05")
    assert result["hits"] == []
    assert "within the filters" in result["hint"]["message"]
    assert any(t.startswith("wider filters") for t in result["hint"]["try"])


def test_the_hint_keeps_within_max_tokens(server: ServerProcess) -> None:
    """The smallest budget still gets an answer (found by the property test: no hits, a hint over the budget)."""
    whole = search(server, query="how do we cut the ad spend")
    response = server.call("search_transcripts", {"query": "how do we cut the ad spend", "max_tokens": MIN_TOKENS})
    assert "result" in response, response  # was -32603: no hits to cut, and the hint alone over the budget
    assert tool_tokens(response["result"]) <= MIN_TOKENS  # the whole answer, as a host may count it
    small = search(server, query="how do we cut the ad spend", max_tokens=MIN_TOKENS)
    assert small["hits"] == []
    assert whole["hint"]["found"] == small["hint"]["found"] == "nothing"
    assert small["hint"]["message"] == whole["hint"]["message"]
    assert set(small["hint"]) <= set(whole["hint"])
    partial = search(server, query="mobile budget forecast", max_tokens=MIN_TOKENS)
    assert [hit["title"] for hit in partial["hits"]] == ["Weekly sync"]  # the hint never crowds out a hit


def test_a_search_that_finds_little_says_whether_tasks_match_as_list_tasks_would(server: ServerProcess) -> None:
    """A due date or a to-do may live in a task: the hint says so, or that none matches, sparing a list_tasks call."""
    cases = {"parking": "2 tasks match them", "renew permit": "1 task matches them", "plants": "10 or more tasks"}
    for query, said in cases.items():
        result = search(server, query=query)
        assert result["hits"] == [], query
        assert f"{said}" in result["hint"]["message"], (query, result["hint"])
        assert "list_tasks with this query" in result["hint"]["message"]
        listed = checked_result(server, "list_tasks", {"query": query, "status": "all", "limit": 100})["tasks"]
        assert len(listed) == (12 if query == "plants" else int(said[0])), query
    # The trash never shows through: the Lyon salon is only in a trashed transcript and its task.
    for query in ("Lyon salon", "how do we cut the ad spend"):
        message = search(server, query=query)["hint"]["message"]
        assert "No task matches them either." in message, message
    assert checked_result(server, "list_tasks", {"query": "Lyon salon", "status": "all"})["tasks"] == []
    # Weak hits are read first, and counting scans every task: not said there, nor for a query of no words.
    weak = search(server, query="mobile parking")  # "mobile" is in a transcript, "parking" in two tasks
    assert [hit["title"] for hit in weak["hits"]] == ["Weekly sync"]
    assert "task" not in weak["hint"]["message"]
    assert "task" not in search(server, query="🎉")["hint"]["message"]


def test_good_matches_have_no_hint(server: ServerProcess) -> None:
    for query in ("mobile launch", "what did we decide about the mobile launch", "export", "mobile launch budget"):
        result = search(server, query=query)
        assert result["hits"], query
        assert "hint" not in result, query


def test_instructions_name_the_languages_once_known(server: ServerProcess) -> None:
    before = server.request("server/discover")["result"]["instructions"]
    assert "several languages" in before
    search(server, query="ad spend")
    after = server.request("server/discover")["result"]["instructions"]
    assert after.endswith(
        " The transcripts are in English (2), Portuguese (2), German (1):"
        " search in each language a meeting may have been held in."
    ), after
    assert after.startswith(before.split(" Transcripts may be")[0])
