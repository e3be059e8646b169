"""Cancellation over HTTP, and what is not one: shown by events (progress, slots coming back), never clocks.

2026-07-28: closing the response stream cancels the request (the revision's only way over HTTP).
The proof: eight endless calls take all eight call slots; once their connections are closed, a
ninth call that needs a slot is answered, which it could not be while any of them ran on
(``--call-timeout`` is set far beyond the test's own safety limit). A stream starts only once its
call has a slot.
"""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import pytest

from tests.e2e.test_concurrency import ENDLESS, ROWS, TEXT_CHARS, build_big_store, search
from tests.http.conftest import SAFETY, TOKEN, closed_by_server, connect, start
from tests.http.test_security import JSON_AND_SSE, _next_event, open_session, post
from tests.support.protocol import MODERN, modern_meta
from tests.support.server import Launcher

SLOTS = 8  # transport.limits.MAX_PENDING: calls that run at once
HEADERS = {"Content-Type": "application/json", "Accept": JSON_AND_SSE, "Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_big_store(tmp_path_factory.mktemp("big") / "magnotia.db", ROWS, TEXT_CHARS)


def test_a_call_in_progress_outlives_the_request_deadline(launcher: Launcher, big_store: Path) -> None:
    """The deadline covers receiving a request, not answering it: a long SSE call goes on past it."""
    server = start(launcher, big_store, ["--request-timeout", "1"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    try:
        session = {"Mcp-Session-Id": open_session(server)}  # for the cancel at the end
        conn = http.client.HTTPConnection(server.host_port, timeout=SAFETY)
        headers = {"Content-Type": "application/json", "Accept": JSON_AND_SSE, "Authorization": f"Bearer {TOKEN}"}
        headers |= session
        call = {"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": search(ENDLESS, "tok")}
        conn.request("POST", "/mcp", body=json.dumps(call).encode(), headers=headers)
        response = conn.getresponse()
        assert json.loads(_next_event(response))["method"] == "notifications/progress"
        later = connect(server)  # opened after the call started, and cut off once the deadline passed
        assert closed_by_server(later)
        later.close()
        assert json.loads(_next_event(response))["method"] == "notifications/progress", "the call goes on"
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "long"}}
        assert post(server, cancel, headers=session)[0] == 202
        response.read()
        conn.close()
    finally:
        server.stop()


def test_2026_07_28_closing_the_stream_cancels_the_call(launcher: Launcher, big_store: Path) -> None:
    server = start(launcher, big_store, ["--call-timeout", "3600"], {"MAGNOTIA_MCP_TOKEN": TOKEN})
    try:
        modern = {**HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
        streams = []
        for n in range(SLOTS):
            conn = http.client.HTTPConnection(server.host_port, timeout=SAFETY)
            call = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": search(ENDLESS, n, revision=MODERN)}
            conn.request("POST", "/mcp", json.dumps(call).encode(), {**modern, "Mcp-Name": "search_transcripts"})
            response = conn.getresponse()
            # The stream starts once the call has a slot (two of them run, the rest wait for a store reader).
            assert (response.status, response.getheader("content-type")) == (200, "text/event-stream")
            assert response.getheader("x-accel-buffering") == "no"
            streams.append(conn)
        for conn in streams:
            conn.sock.shutdown(socket.SHUT_RDWR)
            conn.close()
        params = {"name": "list_tasks", "arguments": {}, "_meta": modern_meta()}
        status, _, body = post(
            server,
            {"jsonrpc": "2.0", "id": "after", "method": "tools/call", "params": params},
            headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "list_tasks"},
        )
        assert status == 200, body
        assert json.loads(body)["id"] == "after"
    finally:
        server.stop()
