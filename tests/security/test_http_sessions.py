"""Another client with the token against a session or a call that is not its own: floods of sessions, stray cancels.

Real server, real sockets. No timing assertions: a session is shown alive by a request that would
get 404 if it had been ended, a call shown cancelled by its stream ending without a response, and
shown not cancelled by its stream ending with a response (the one ``--call-timeout`` writes: the
calls here scan for tens of seconds, so only the client's cancel or that timeout ends them).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_concurrency import ENDLESS, ROWS, TEXT_CHARS, build_big_store, search
from tests.http.conftest import TOKEN, HttpServer, start
from tests.http.test_sessions import Wire
from tests.support.protocol import MODERN, modern_meta
from tests.support.server import Launcher

SAFETY = 60.0  # only so that a broken server fails the test instead of hanging it
MAX_SESSIONS = 1024  # sessions.MAX_SESSIONS
# Ends an uncancelled scan with an error response. Long enough for the few requests each test sends
# meanwhile: if it ran out first, a test meant to fail on a stray cancel would pass.
CALL_TIMEOUT = "8"
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_big_store(tmp_path_factory.mktemp("big") / "magnotia.db", ROWS, TEXT_CHARS)


@pytest.fixture
def scanning(launcher: Launcher, big_store: Path) -> Iterator[HttpServer]:
    # Debug: a call's failure message then says what cancelled it (notifications/cancelled, a stream that ended).
    env = {"MAGNOTIA_MCP_TOKEN": TOKEN, "MAGNOTIA_MCP_LOG_LEVEL": "debug"}
    server = start(launcher, big_store, ["--call-timeout", CALL_TIMEOUT], env)
    yield server
    assert server.stop() == 0, "".join(server.stderr)
    assert server.stdout == b""


class Scan:
    """An endless search over its own connection, answered as an SSE stream (it asks for progress)."""

    def __init__(self, server: HttpServer, request_id: str, headers: dict[str, str], revision: str) -> None:
        self.conn = http.client.HTTPConnection(server.host_port, timeout=SAFETY)
        call = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": search(ENDLESS, 1, revision)}
        sent = {**HEADERS, "Authorization": f"Bearer {TOKEN}", **headers}
        self.conn.request("POST", "/mcp", json.dumps(call).encode(), sent)
        self.response = self.conn.getresponse()
        # The stream starts once the call is running, and so cancellable.
        assert (self.response.status, self.response.getheader("content-type")) == (200, "text/event-stream")
        self.events: list[dict[str, Any]] = []  # every message the stream carried, for a failure message

    def end(self) -> dict[str, Any] | None:
        """The response the stream ends with; None when it ends without one (the call was cancelled)."""
        lines = self.response.read().splitlines()
        self.events = [json.loads(line[6:]) for line in lines if line.startswith(b"data: ")]
        self.conn.close()
        responses = [e for e in self.events if "method" not in e]
        assert len(responses) <= 1, responses
        return responses[0] if responses else None


def cancel(server: HttpServer, request_id: str, headers: dict[str, str] | None = None, *, modern: bool = False) -> None:
    """notifications/cancelled on a connection of its own (202: taken, whatever it did)."""
    params: dict[str, Any] = {"requestId": request_id}
    sent = {**HEADERS, "Authorization": f"Bearer {TOKEN}", **(headers or {})}
    if modern:
        params["_meta"] = modern_meta()
        sent |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": "notifications/cancelled"}
    conn = http.client.HTTPConnection(server.host_port, timeout=SAFETY)
    try:
        body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
        conn.request("POST", "/mcp", json.dumps(body).encode(), sent)
        response = conn.getresponse()
        response.read()
        assert response.status == 202
    finally:
        conn.close()


def said(server: HttpServer, scan: Scan | None = None) -> str:
    """The server's stderr so far and what the scan's stream carried, for a failure message."""
    carried = "" if scan is None else f"the stream carried {len(scan.events)} messages, the last: {scan.events[-3:]}\n"
    return carried + "the server said:\n" + "".join(server.stderr)


def timed_out(response: dict[str, Any] | None, request_id: str) -> bool:
    """The call ran until --call-timeout stopped it: its response says so."""
    if response is None or response["id"] != request_id:
        return False
    return "took longer than" in response["result"]["content"][0]["text"]


def ping(wire: Wire, session: str) -> int:
    """A ping in the session (over a new Wire when the last was idle: idle keep-alive connections are closed)."""
    return wire.send("POST", {"jsonrpc": "2.0", "id": "p", "method": "ping"}, {"Mcp-Session-Id": session})[0]


# -- the session table ---------------------------------------------------------------------------


def test_a_flood_of_new_sessions_does_not_end_a_session_in_use(served: HttpServer) -> None:
    """1,025 fresh initializes (more than the table holds) end only sessions that never made a request."""
    legit = Wire(served)
    session = legit.initialize()
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert legit.send("POST", initialized, {"Mcp-Session-Id": session})[0] == 202  # its first request
    flood = Wire(served)
    fresh = [flood.initialize() for _ in range(MAX_SESSIONS + 1)]
    assert Wire(served).call(session)[0] == 200, "a session that made a request survives sessions that never did"
    assert flood.call(fresh[-1])[0] == 200, "the newest of the flood is open"
    assert flood.call(fresh[0])[0] == 404, "the oldest of the flood made way for it"


def test_a_session_with_a_call_in_flight_outlives_1025_busy_sessions(
    launcher: Launcher, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Even sessions that all made requests never end one whose call is running; it is still cancellable."""
    # The call must run through the flood of 2,050 requests, and the flood is slow while the scan runs (they
    # share the server's cores and its GIL): on a store four times big_store, here, the flood took 49.5 s and
    # the scan ended on its own 0.8 s after it; a CI run got 404 when the scan ended first, and its session,
    # idle by then, was rightly ended. So the store is eight times big_store, and the order is checked, not
    # assumed: when the cancel sent after the flood still stops the call, the call ran through the flood and
    # its session survived it. When the call ended on its own (its stream ends with its response), the run
    # proves nothing either way, and the test goes again on a larger store; a server that ended a busy session
    # fails on both.
    for size in (8, 12):
        store = build_big_store(tmp_path_factory.mktemp(f"longer{size}") / "magnotia.db", size * ROWS, TEXT_CHARS)
        server = start(launcher, store, ["--call-timeout", "3600"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
        try:
            legit = Wire(server)
            session = legit.initialize("2025-11-25")
            scan = Scan(server, "mine", {"Mcp-Session-Id": session}, "2025-11-25")
            flood = Wire(server)
            for _ in range(MAX_SESSIONS + 1):
                assert ping(flood, flood.initialize()) == 200
            if ping(Wire(server), session) == 200:
                cancel(server, "mine", {"Mcp-Session-Id": session})
                if scan.end() is None:  # its own cancel reached the call: it ran all through the flood
                    return
            else:
                assert scan.end() is not None, "the session was ended while its call ran, and the call cut off"
        finally:
            assert server.stop() == 0, "".join(server.stderr)
    raise AssertionError(
        "on both stores the session was ended or its call had ended by the time the flood was over: "
        "either the server ends busy sessions, or the scan could not be held open through the flood"
    )


# -- cancellation is the caller's ----------------------------------------------------------------


def test_a_cancel_from_another_connection_does_not_stop_a_call_without_a_session(scanning: HttpServer) -> None:
    """A 2025-11-25 call sent without a session id is no one else's to cancel, with or without a header."""
    legacy = Scan(scanning, "same", {"MCP-Protocol-Version": "2025-11-25"}, "2025-11-25")
    cancel(scanning, "same", {"MCP-Protocol-Version": "2025-11-25"})
    cancel(scanning, "same")  # no header: 2025-03-26
    cancel(scanning, "same", modern=True)
    stopped = "another client's cancel stopped a sessionless call"
    assert timed_out(legacy.end(), "same"), f"{stopped}, or its stream lost the response; {said(scanning, legacy)}"


def test_a_cancel_from_another_connection_does_not_stop_a_2026_07_28_call(scanning: HttpServer) -> None:
    """2026-07-28 has no sessions: only closing its own stream cancels a call (tests/http/test_cancellation.py)."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "search_transcripts"}
    modern = Scan(scanning, "same", headers, MODERN)
    cancel(scanning, "same", modern=True)
    cancel(scanning, "same")
    stopped = "another client's cancel stopped a 2026-07-28 call"
    assert timed_out(modern.end(), "same"), f"{stopped}, or its stream lost the response; {said(scanning, modern)}"


def test_a_cancel_from_another_session_does_not_stop_a_call(scanning: HttpServer) -> None:
    """Holds already: a session's call is cancelled only from that session."""
    wire = Wire(scanning)
    mine, other = wire.initialize("2025-11-25"), wire.initialize("2025-11-25")
    scan = Scan(scanning, "same", {"Mcp-Session-Id": mine}, "2025-11-25")
    cancel(scanning, "same", {"Mcp-Session-Id": other})
    cancel(scanning, "same")
    cancel(scanning, "same", modern=True)
    assert timed_out(scan.end(), "same"), said(scanning, scan)
