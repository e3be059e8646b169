"""transport.http.sse through the whole App, in process: an SSE answer ends with its response, whenever the call ends.

A call's response is queued by a done callback of its task, one loop turn after the task is done. A
stream that ended when it saw the task done could end in that turn, without the response (a scan
stopped by --call-timeout just after a progress notification: tests/security/test_http_sessions.py
failed so under CPU load), or write a progress notification after the response. Here the call ends
0, 1, 2, … loop turns after its progress notification, so every order of the two is met: no timing,
only the order and count of what the stream carries.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from magnotia_mcp.protocol.jsonrpc import JSON
from magnotia_mcp.protocol.requests import Request
from magnotia_mcp.protocol.server import Method, Server
from magnotia_mcp.transport.http.app import App
from magnotia_mcp.transport.http.asgi import Message
from magnotia_mcp.transport.http.guard import Guard
from tests.unit.wire import never_opened

HOST, PORT = "127.0.0.1", 8000
TURNS = range(8)  # loop turns between the call's progress notification and its end


def _always(_revision: str) -> bool:
    return True


async def report(_server: Server, request: Request) -> JSON:
    """Sends one progress notification, waits params["turns"] loop turns, then answers (or is cancelled)."""
    sink = request.progress_sink()
    assert sink is not None
    sink(1, None, "halfway")
    for _ in range(request.params["turns"]):
        await asyncio.sleep(0)
    if request.params.get("cancel"):
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # as notifications/cancelled or a 2026-07-28 disconnect does: no response
        await asyncio.sleep(0)
    return {"turns": request.params["turns"]}


def app() -> App:
    methods = {"report": Method(report, _always)}
    return App(lambda legacy: Server(methods, never_opened, legacy_revision=legacy), Guard(HOST, PORT, [], [], None), 5)


async def post(params: dict[str, Any]) -> tuple[int, list[dict[str, Any]], bool]:
    """POST one 2025-11-25 request without a session, accepting only SSE: the status, the events, whether it ended."""
    call = {"jsonrpc": "2.0", "id": "r", "method": "report", "params": {"_meta": {"progressToken": 1}, **params}}
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "headers": [
            (b"host", f"{HOST}:{PORT}".encode()),
            (b"accept", b"text/event-stream"),
            (b"content-type", b"application/json"),
            (b"mcp-protocol-version", b"2025-11-25"),
        ],
    }
    sent: list[Message] = []
    requests = [{"type": "http.request", "body": json.dumps(call).encode(), "more_body": False}]

    async def receive() -> Message:
        if requests:
            return requests.pop()
        await asyncio.Event().wait()  # no disconnect: the client reads to the end
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    await asyncio.wait_for(app()(scope, receive, send), 10)  # a hang guard only
    assert sent[0]["type"] == "http.response.start"
    bodies = [m for m in sent[1:] if m["type"] == "http.response.body"]
    assert all(m["more_body"] for m in bodies[:-1])
    events = []
    for chunk in bodies[:-1]:
        head, _, data = chunk["body"].partition(b"\ndata: ")
        assert head == b"event: message"
        events.append(json.loads(data))
    return sent[0]["status"], events, bodies[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


@pytest.mark.parametrize("turns", TURNS)
def test_the_stream_carries_the_progress_then_the_response_and_ends(turns: int) -> None:
    status, events, ended = asyncio.run(post({"turns": turns}))
    assert status == 200
    assert [e.get("method") for e in events] == ["notifications/progress", None], events
    assert events[1] == {"jsonrpc": "2.0", "id": "r", "result": {"turns": turns}}
    assert ended


@pytest.mark.parametrize("turns", TURNS)
def test_a_cancelled_call_s_stream_ends_after_its_progress_without_a_response(turns: int) -> None:
    status, events, ended = asyncio.run(post({"turns": turns, "cancel": True}))
    assert status == 200
    assert [e.get("method") for e in events] == ["notifications/progress"], events
    assert ended
