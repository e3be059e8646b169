"""Concurrency, cancellation, the per-call time limit and progress, over real pipes.

The store has no full-text index (as older app versions wrote it) and tens of
thousands of transcripts of a few KB, so search_transcripts scans for seconds.
Every message the server writes is validated for its revision (tests/wire_schema.py).
"""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients_support import MODERN, Raw, modern_meta
from tests.server import ServerProcess
from tests.storefactory import StoreBuilder

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

Start = Callable[..., ServerProcess]

# Many short rows: a scan long enough to cancel or time out, built in a second or two.
ROWS = 60_000
TEXT_CHARS = 1_000
NEWEST_ID = "00000000-fresh-memo"
# Three words that are nowhere: the scan of both passes takes several times longer than any test waits.
ENDLESS = "nowhereone OR nowheretwo OR nowherethree"
# One plain word that is nowhere: a full scan of both passes (titles, then texts), a few seconds.
NOWHERE = "nowherefoundword"
FAST = 0.5  # seconds: "at once", with room for a slow CI machine


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


def search(query: str, token: Any = None, revision: str = "2025-11-25", limit: int = 5) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "search_transcripts", "arguments": {"query": query, "limit": limit}}
    meta: dict[str, Any] = modern_meta() if revision == MODERN else {}
    if token is not None:
        meta["progressToken"] = token
    if meta:
        params["_meta"] = meta
    return params


def timed(raw: Raw, method: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    response = raw.request(method, params)
    return response, time.perf_counter() - start


def quick_call(raw: Raw) -> tuple[dict[str, Any], float]:
    return timed(raw, "tools/call", {"name": "get_transcript", "arguments": {"id": NEWEST_ID, "max_chars": 100}})


def wait_for_progress(raw: Raw, token: Any, timeout: float = 10.0) -> None:
    """Read until the first progress notification for token: the scan is under way."""
    deadline = time.monotonic() + timeout
    while not any(n["params"].get("progressToken") == token for n in raw.notifications):
        raw.read(max(0.01, deadline - time.monotonic()))


def progress_values(raw: Raw, token: Any) -> list[float]:
    return [n["params"]["progress"] for n in raw.notifications if n["params"].get("progressToken") == token]


def test_slow_search_does_not_delay_ping_or_a_quick_call_and_reports_progress(
    start_server: Start, big_store: Path
) -> None:
    raw = Raw(start_server(big_store), "2025-11-25")
    raw.open()
    started = time.perf_counter()
    raw.send("tools/call", search(NOWHERE, token="scan-1"), id="long")
    wait_for_progress(raw, "scan-1")

    ping, ping_s = timed(raw, "ping")
    quick, quick_s = quick_call(raw)
    assert ping["result"] == {}
    assert json.loads(quick["result"]["content"][0]["text"])["title"] == "Fresh memo"
    assert "long" not in raw.responses, "the scan finished before the quick requests: the store is too small"

    long = raw.response("long", timeout=120)
    scan_s = time.perf_counter() - started
    payload = long["result"]["structuredContent"]
    assert payload["mode"] == "scan"
    assert payload["hits"] == []
    assert scan_s > 1.0, f"the scan took only {scan_s:.2f}s; it cannot show concurrency"
    assert ping_s < FAST, (ping_s, quick_s, scan_s)
    assert quick_s < FAST, (ping_s, quick_s, scan_s)

    # Progress: only for our token, strictly increasing across both scan passes, all before the response.
    values = progress_values(raw, "scan-1")
    assert len(values) >= 10
    assert all(a < b for a, b in itertools.pairwise(values)), values
    assert values[-1] >= ROWS  # at least one whole pass was counted
    for note in raw.notifications:
        assert note["method"] == "notifications/progress"
        assert note["params"]["progressToken"] == "scan-1"
        assert note["params"]["message"].startswith("scanned ")
    raw.proc.no_message(0.3)  # nothing after the response


@pytest.mark.parametrize("revision", ["2025-11-25", MODERN])
def test_cancelled_search_stops_and_is_never_answered(revision: str, start_server: Start, big_store: Path) -> None:
    raw = Raw(start_server(big_store), revision)
    raw.open()
    token = 41 if revision == MODERN else "cancel-me"
    raw.send("tools/call", search(ENDLESS, token, revision), id="long")
    wait_for_progress(raw, token)
    raw.notify("notifications/cancelled", {"requestId": "long", "reason": "the user pressed stop"})

    # Answered at once (ping is gone in 2026-07-28: a quick tools/list stands in for it there).
    if revision == MODERN:
        answer, answer_s = timed(raw, "tools/list")
    else:
        answer, answer_s = timed(raw, "ping")
    assert "result" in answer, answer
    assert answer_s < FAST, answer_s
    # The cancellation was read before that request: nothing more for the cancelled one, ever after.
    raw.proc.no_message(0.5)

    # The server stays usable: a quick call, and a new search that finds the newest memo at once.
    quick, quick_s = quick_call(raw)
    assert "result" in quick
    assert quick_s < FAST
    found = raw.request("tools/call", search("fresh", revision=revision, limit=1))
    assert [h["transcript_id"] for h in found["result"]["structuredContent"]["hits"]] == [NEWEST_ID]

    # Closing stdin makes the server answer what is in flight and exit: the cancelled scan is not in
    # flight any more (it would take far longer than this), and no response for it was ever written.
    closed = time.perf_counter()
    assert raw.proc.close() == 0
    assert time.perf_counter() - closed < 2.0
    while (line := raw.proc.lines.get(timeout=5)) is not None:
        raw.tracker.server_sent(json.loads(line))
    assert not [line for line in raw.proc.raw_stdout if json.loads(line).get("id") == "long"]
    assert "Traceback" not in raw.proc.stderr


@pytest.mark.parametrize(
    ("revision", "as_result"),
    [("2024-11-05", False), ("2025-06-18", False), ("2025-11-25", True), (MODERN, True)],
)
def test_call_timeout_turns_a_runaway_scan_into_a_clear_error(
    revision: str, as_result: bool, start_server: Start, big_store: Path
) -> None:
    raw = Raw(start_server(big_store, "--call-timeout", "0.5"), revision)
    raw.open()
    token = f"t-{revision}"
    response, took = timed(raw, "tools/call", search(ENDLESS, token, revision))
    assert took < 3.0, took
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
    # Progress before the time ran out; no "message" member in 2024-11-05 (validated per revision anyway).
    for note in raw.notifications:
        assert ("message" in note["params"]) == (revision != "2024-11-05")
    # Still usable, and quick calls are not hit by the limit.
    quick, quick_s = quick_call(raw)
    assert "result" in quick
    assert quick.get("result", {}).get("isError") is not True
    assert quick_s < FAST


def test_the_server_answers_requests_out_of_order(start_server: Start, big_store: Path) -> None:
    """Responses are matched by id: a quick request sent after a slow one is answered first."""
    raw = Raw(start_server(big_store), "2025-11-25")
    raw.open()
    raw.send("tools/call", search(ENDLESS), id="slow")
    quick_id = raw.send("tools/list")
    first = raw.read()
    assert first["id"] == quick_id
    raw.notify("notifications/cancelled", {"requestId": "slow"})
    assert raw.request("ping")["result"] == {}


def test_long_transcripts_do_not_stall_the_loop(start_server: Start, tmp_path: Path) -> None:
    """Scanning long texts happens on the reader thread: ping is answered while it runs."""
    store = build_big_store(tmp_path / "long" / "magnotia.db", 260, 60_000)
    raw = Raw(start_server(store), "2025-11-25")
    raw.open()
    raw.send("tools/call", search(ENDLESS), id="long")
    time.sleep(0.3)
    _, ping_s = timed(raw, "ping")
    raw.notify("notifications/cancelled", {"requestId": "long"})
    assert ping_s < FAST, f"ping took {ping_s:.2f}s during a scan of long transcripts"
