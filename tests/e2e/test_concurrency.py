"""Concurrency, cancellation, the per-call time limit and progress, over real pipes.

The store has no full-text index (as older app versions wrote it) and tens of
thousands of transcripts of a few KB, so search_transcripts scans. Nothing here
measures time: concurrency is shown by the order of the answers on the wire (a
quick request sent while a scan runs is answered before the scan), and a
cancellation by what never comes (no answer for the cancelled request, no
progress for it after the cancellation was read), by the next request being
answered, and by the pool serving two new scans at once afterwards.
Every message the server writes is validated for its revision (tests/support/wire_schema.py).
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from devkit.storefactory import StoreBuilder
from tests.support.protocol import MODERN, modern_meta
from tests.support.server import ServerProcess

pytestmark = pytest.mark.slow

Start = Callable[..., ServerProcess]

# Many short rows, built in a second or two.
ROWS = 60_000
TEXT_CHARS = 1_000
NEWEST_ID = "00000000-fresh-memo"
# 83 two-letter words that are nowhere, each starting with a letter the texts are full of: every one is tried at
# nearly every position of every text, so the scan runs for tens of seconds (some 30 times --call-timeout 0.5
# below, thousands of times a quick request). The tests cancel it, or let --call-timeout stop it: none waits for
# it to end, so a machine ten times slower or faster changes nothing here.
ENDLESS = " OR ".join(a + b for a in "aetnr" for b in "qxzjkvw0123456789")[:494]
# One plain word that is nowhere: a full scan of both passes (titles, then texts), about a second.
NOWHERE = "nowherefoundword"


def build_big_store(path: Path, rows: int, chars: int, *, first_id: str | None = NEWEST_ID) -> Path:
    b = StoreBuilder(path, fts=False)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "budget",
        "meeting",
        "notes",
        "plan",
        "review",
        "coffee",
        "garden",
        "river",
    ]
    rng = random.Random(7)
    body = " ".join(rng.choice(words) for _ in range(chars // 6))[:chars]
    b.conn.executemany(
        "INSERT INTO transcripts (id, title, source, language, model, duration_ms, raw_text, formatted_text,"
        " created_at, updated_at, deleted_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        (
            (f"t-{i:06d}", f"Note {i}", "dictation", "en", None, 60_000, f"{i} {body}", None, stamp, stamp, None)
            for i in range(rows)
            for stamp in (f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{i // 60 % 60:02d}.000Z",)
        ),
    )
    if first_id:
        b.transcript(id=first_id, title="Fresh memo", raw_text="the newest memo", created_at="2026-06-01T00:00:00.000Z")
    return b.close()


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_big_store(tmp_path_factory.mktemp("big") / "magnotia.db", ROWS, TEXT_CHARS)


def search(
    query: str, token: Any = None, revision: str = "2025-11-25", limit: int = 5, sort: str = "relevance"
) -> dict[str, Any]:
    arguments = {"query": query, "limit": limit, "sort": sort}
    params: dict[str, Any] = {"name": "search_transcripts", "arguments": arguments}
    meta: dict[str, Any] = modern_meta() if revision == MODERN else {}
    if token is not None:
        meta["progressToken"] = token
    if meta:
        params["_meta"] = meta
    return params


def quick_call(server: ServerProcess) -> dict[str, Any]:
    """A get_transcript of the newest memo: it must be the next response (not a scan's)."""
    response = server.request(
        "tools/call", {"name": "get_transcript", "arguments": {"id": NEWEST_ID, "max_chars": 100}}
    )
    assert "result" in response, response
    assert response["result"].get("isError") is not True, response
    assert json.loads(response["result"]["content"][0]["text"])["title"] == "Fresh memo"
    return response


def finish(server: ServerProcess, never_answered: set[Any]) -> None:
    """Close stdin: the server answers what is still in flight and exits 0; none of never_answered was ever answered.

    A scan that had not stopped would be in flight here: it would be answered (or keep the
    server from exiting within close()'s limit). Either fails the test.
    """
    assert server.close() == 0, server.stderr
    server.messages_until_eof()
    assert not never_answered & server.answered_ids(), server.answered_ids()
    assert "Traceback" not in server.stderr


def test_a_scan_does_not_delay_ping_or_a_quick_call(start_server: Start, big_store: Path) -> None:
    """Sent while a scan runs (it has reported progress, and runs for many seconds more), both are answered first."""
    server = start_server(big_store)
    server.open("2025-11-25")
    server.send_request("tools/call", search(ENDLESS, token="scan-1"), id="long")
    server.wait_for_progress("scan-1")  # the scan is under way

    assert server.request("ping")["result"] == {}  # the next response on the wire, not the scan's
    quick_call(server)
    assert "long" not in server.responses
    server.notify("notifications/cancelled", {"requestId": "long", "reason": "done with it"})
    assert server.request("ping")["result"] == {}
    finish(server, {"long"})


def test_a_scan_reports_progress_up_to_its_answer(start_server: Start, big_store: Path) -> None:
    """Progress only for our token, strictly increasing across both scan passes, all of it before the response."""
    server = start_server(big_store)
    server.open("2025-11-25")
    server.send_request("tools/call", search(NOWHERE, token="scan-1"), id="long")
    long = server.response("long", timeout=120)  # only so that a hang fails instead of stalling the run
    payload = long["result"]["structuredContent"]
    assert payload["mode"] == "scan"
    assert payload["hits"] == []

    values = server.progress("scan-1")
    assert len(values) >= 10
    # The first report comes after the first few rows: the first batches grow from 16 rows to 256.
    assert values[:5] == [16, 48, 112, 240, 496], values[:5]
    assert all(a < b for a, b in itertools.pairwise(values)), values
    assert values[-1] >= ROWS  # at least one whole pass was counted
    for note in server.notifications:
        assert note["method"] == "notifications/progress"
        assert note["params"]["progressToken"] == "scan-1"
        assert note["params"]["message"].startswith("scanned ")
    # Nothing after the response, up to the end of the conversation.
    assert server.close() == 0
    assert server.messages_until_eof() == []


@pytest.mark.parametrize("sort", ["relevance", "oldest"])
@pytest.mark.parametrize("revision", ["2025-11-25", MODERN])
def test_cancelled_search_stops_and_is_never_answered(
    revision: str, sort: str, start_server: Start, big_store: Path
) -> None:
    """The relevance scan (statistics over every row) and the time-ordered scan both stop when cancelled."""
    server = start_server(big_store)
    server.open(revision)
    token = 41 if revision == MODERN else "cancel-me"
    server.send_request("tools/call", search(ENDLESS, token, revision, sort=sort), id="long")
    server.wait_for_progress(token)
    server.notify("notifications/cancelled", {"requestId": "long", "reason": "the user pressed stop"})

    # The next request is answered, and it is the next response: the cancelled call is not
    # (ping is gone in 2026-07-28: a quick tools/list stands in for it there).
    answer = server.request("tools/list" if revision == MODERN else "ping")
    assert "result" in answer, answer
    # The cancellation was read before that request: no progress for the cancelled call after it, ever.
    progress_when_answered = server.progress(token)

    # The pool is whole again: two new scans run at once (each reports progress while the other runs),
    # so the cancelled call gave its reader back.
    for name in ("pool-a", "pool-b"):
        server.send_request("tools/call", search(ENDLESS, name, revision, sort=sort), id=name)
    server.wait_for_progress("pool-a")
    server.wait_for_progress("pool-b")
    assert not server.responses
    for name in ("pool-a", "pool-b"):
        server.notify("notifications/cancelled", {"requestId": name})

    # The server stays usable: a quick call, and a new search that finds the newest memo. That search
    # reads all 60,000 rows (the relevance statistics from scratch: the cancelled scans kept none for
    # this query; the oldest-first scan reaches the memo last): 15 s for relevance beside two CI clones,
    # and a third clone took it past the usual 20 s. The timeout only turns a hang into a failure.
    quick_call(server)
    found = server.request("tools/call", search("fresh", revision=revision, limit=1, sort=sort), timeout=120)
    assert found["result"]["structuredContent"]["sort"] == sort
    assert [h["transcript_id"] for h in found["result"]["structuredContent"]["hits"]] == [NEWEST_ID]

    # None of the cancelled scans is in flight at EOF, and none was ever answered.
    finish(server, {"long", "pool-a", "pool-b"})
    assert server.progress(token) == progress_when_answered


@pytest.mark.parametrize("sort", ["relevance", "newest"])
@pytest.mark.parametrize(
    ("revision", "as_result"),
    [("2024-11-05", False), ("2025-06-18", False), ("2025-11-25", True), (MODERN, True)],
)
def test_call_timeout_turns_a_runaway_scan_into_a_clear_error(
    revision: str, as_result: bool, sort: str, start_server: Start, big_store: Path
) -> None:
    """--call-timeout 0.5 against a scan of many seconds (ranking or time order): a clear error; quick calls work."""
    server = start_server(big_store, "--call-timeout", "0.5")
    server.open(revision)
    response = server.request("tools/call", search(ENDLESS, f"t-{revision}", revision, sort=sort))
    if as_result:
        result = response["result"]
        assert result["isError"] is True
        text = result["content"][0]["text"]
    else:
        assert "result" not in response, response
        assert response["error"]["code"] == -32603
        text = response["error"]["message"]
    assert "took longer than 0.5 s" in text
    assert "search_transcripts" in text
    # Still usable, and quick calls are not hit by the limit.
    quick_call(server)


def test_the_server_answers_requests_out_of_order(start_server: Start, big_store: Path) -> None:
    """Responses are matched by id: a quick request sent after a slow one is answered first."""
    server = start_server(big_store)
    server.open("2025-11-25")
    server.send_request("tools/call", search(ENDLESS), id="slow")
    quick_id = server.send_request("tools/list")
    assert "tools" in server.read_response(quick_id)["result"]  # the next response, before the slow one's
    server.notify("notifications/cancelled", {"requestId": "slow"})
    assert server.request("ping")["result"] == {}
    finish(server, {"slow"})


def test_long_transcripts_do_not_stall_the_loop(start_server: Start, tmp_path: Path) -> None:
    """Scanning long texts happens on the reader thread: ping is answered while it runs."""
    store = build_big_store(tmp_path / "long" / "magnotia.db", 260, 60_000)
    server = start_server(store)
    server.open("2025-11-25")
    server.send_request("tools/call", search(ENDLESS, token="long-texts"), id="long")
    server.wait_for_progress("long-texts")
    assert server.request("ping")["result"] == {}  # answered before the scan, which runs for seconds more
    server.notify("notifications/cancelled", {"requestId": "long"})
    finish(server, {"long"})
