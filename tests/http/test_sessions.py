"""Sessions of the revisions up to 2025-11-25: ``initialize`` opens one, DELETE ends it, an ended id gets 404.

Raw requests over real sockets, so that every header the server sends and takes is visible.
A session only carries the revision; requests without an id are still served (statelessly).
"""

from __future__ import annotations

import http.client
import json
import re
from typing import Any

from tests.http.conftest import TOKEN, HttpServer
from tests.support.protocol import MODERN, modern_meta

JSON_AND_SSE = "application/json, text/event-stream"
LIST = {"name": "list_transcripts", "arguments": {"limit": 1}}
SESSION_ID = re.compile(r"[\x21-\x7e]{22,}")  # visible ASCII, as the transport spec requires, and long enough


class Wire:
    """One keep-alive connection with the token, as a client holds it."""

    def __init__(self, server: HttpServer, token: str = TOKEN) -> None:
        self.conn = http.client.HTTPConnection(server.host_port, timeout=60)
        self.token = token

    def send(
        self, method: str, message: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        sent = {"Accept": JSON_AND_SSE, "Authorization": f"Bearer {self.token}"}
        if message is not None:
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        body = json.dumps(message).encode() if message is not None else None
        self.conn.request(method, "/mcp", body=body, headers=sent)
        response = self.conn.getresponse()
        raw = response.read()
        got = {k.lower(): v for k, v in response.getheaders()}
        if got.get("content-type") == "text/event-stream":
            events = [json.loads(line[6:]) for line in raw.splitlines() if line.startswith(b"data: ")]
            return response.status, got, events[-1]
        return response.status, got, json.loads(raw) if raw else None

    def initialize(self, revision: str = "2025-06-18", accept: str = JSON_AND_SSE) -> str:
        params = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
        status, headers, reply = self.send("POST", message, {"Accept": accept})
        assert status == 200, reply
        assert reply["result"]["protocolVersion"] == revision
        session = headers["mcp-session-id"]
        assert SESSION_ID.fullmatch(session), session
        return session

    def call(self, session: str | None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
        sent = {"Mcp-Session-Id": session} if session is not None else {}
        message = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": LIST}
        status, _, reply = self.send("POST", message, {**sent, **(headers or {})})
        return status, reply


def test_initialize_opens_a_session_whose_revision_applies_without_the_header(served: HttpServer) -> None:
    wire = Wire(served)
    session = wire.initialize("2025-06-18")
    assert wire.initialize("2025-06-18") != session, "each initialize gets its own id"
    # 2025-06-18 tool results carry structuredContent; 2025-03-26 (the default without header or session) do not.
    status, reply = wire.call(session)
    assert status == 200
    assert "structuredContent" in reply["result"]
    status, reply = wire.call(None)
    assert status == 200
    assert "structuredContent" not in reply["result"], "without a session or header: 2025-03-26"
    status, reply = wire.call(session, {"MCP-Protocol-Version": "2025-06-18"})
    assert (status, "structuredContent" in reply["result"]) == (200, True)


def test_a_header_that_contradicts_the_session_is_refused(served: HttpServer) -> None:
    wire = Wire(served)
    session = wire.initialize("2025-06-18")
    status, reply = wire.call(session, {"MCP-Protocol-Version": "2025-03-26"})
    assert status == 400
    assert reply["id"] == 7
    assert "2025-06-18" in reply["error"]["message"]


def test_delete_ends_the_session_and_its_id_then_gets_404(served: HttpServer) -> None:
    wire = Wire(served)
    session, other = wire.initialize(), wire.initialize()
    status, _, body = wire.send("DELETE", None, {"Mcp-Session-Id": session})
    assert (status, body) == (204, None)
    status, reply = wire.call(session)
    assert status == 404
    assert reply["id"] == 7
    assert "initialize again" in reply["error"]["message"]
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert wire.send("POST", notification, {"Mcp-Session-Id": session})[0] == 404
    assert wire.send("DELETE", None, {"Mcp-Session-Id": session})[0] == 404, "already ended"
    assert wire.call(other)[0] == 200, "ending one session leaves the others"
    assert wire.call(None)[0] == 200, "and requests without a session are still served"
    status, _, reply = wire.send("POST", notification, {"Mcp-Session-Id": other})
    assert status == 202


def test_an_unknown_id_gets_404_and_initialize_with_it_opens_a_new_session(served: HttpServer) -> None:
    wire = Wire(served)
    assert wire.call("no-such-session-" + "x" * 16)[0] == 404
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    message = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    status, headers, _ = wire.send("POST", message, {"Mcp-Session-Id": "no-such-session"})
    assert status == 200
    assert headers["mcp-session-id"] != "no-such-session"
    assert wire.call(headers["mcp-session-id"])[0] == 200


def test_a_failed_initialize_opens_no_session(served: HttpServer) -> None:
    wire = Wire(served)
    status, headers, reply = wire.send("POST", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": 5})
    assert status == 200
    assert "error" in reply
    assert "mcp-session-id" not in headers


def test_initialize_over_sse_carries_the_session_id_in_the_stream_headers(served: HttpServer) -> None:
    wire = Wire(served)
    session = wire.initialize("2025-11-25", accept="text/event-stream")
    status, reply = wire.call(session, {"Accept": "text/event-stream"})
    assert status == 200
    assert "structuredContent" in reply["result"]


def test_the_token_is_checked_before_the_session(served: HttpServer) -> None:
    session = Wire(served).initialize()
    status, reply = Wire(served, token="wrong").call(session)
    assert status == 401
    assert "result" not in reply


def test_2026_07_28_requests_have_no_sessions(served: HttpServer) -> None:
    wire = Wire(served)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**LIST, "_meta": modern_meta()}}
    headers = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "list_transcripts",
        "Mcp-Session-Id": "not-a-session",
    }
    status, got, reply = wire.send("POST", message, headers)
    assert status == 200, reply
    assert "mcp-session-id" not in got
    assert "structuredContent" in reply["result"]


def test_sessions_are_bounded_fresh_ones_first(served: HttpServer) -> None:
    """1,024 live sessions at most: opening one more ends the oldest that has made no request, and only it."""
    wire = Wire(served)
    oldest, kept = wire.initialize(), wire.initialize()
    for _ in range(1022):
        wire.initialize()
    assert wire.call(oldest)[0] == 200  # used: now the most recent, so `kept` is the least recently used
    newest = wire.initialize()
    assert wire.call(kept)[0] == 404
    assert wire.call(oldest)[0] == 200
    assert wire.call(newest)[0] == 200


def test_when_every_session_has_made_requests_the_least_recently_used_ends(served: HttpServer) -> None:
    """With 1,024 sessions that all made a request, one more ends the one idle the longest, and only it."""
    wire = Wire(served)
    sessions = [wire.initialize() for _ in range(1024)]
    for session in sessions:
        assert wire.call(session)[0] == 200
    assert wire.call(sessions[0])[0] == 200  # now the most recently used: sessions[1] is the least
    newest = wire.initialize()
    assert wire.call(sessions[1])[0] == 404
    assert [wire.call(s)[0] for s in (sessions[0], sessions[2], sessions[-1], newest)] == [200] * 4
