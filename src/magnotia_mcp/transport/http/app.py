"""The Streamable HTTP transport (opt-in, ``serve --http``): HTTP in, the same ``Server`` as stdio, JSON or SSE out.

uvicorn (with h11) parses HTTP (``serving``); this module is a thin ASGI app that checks the
request (``guard``: Host, Origin, bearer token; here: method, headers, body size) and hands the
body, one JSON-RPC message, to ``Server.submit`` exactly as stdio hands it a line.

Every POST stands alone. 2026-07-28 requests carry their revision in ``_meta`` (stateless
by design). For the older revisions, ``initialize`` opens a session (``Mcp-Session-Id``, see
``sessions``): a request carrying its id gets the negotiated revision when it has no
``MCP-Protocol-Version`` header (``negotiation``), an unknown or ended id gets 404, DELETE ends
it; a request without an id is served as before. Cancellation by ``notifications/cancelled``
reaches only calls of the same session. Paths a host probes for OAuth after a 401 answer with
how to send the token (``discovery``). GET gets 405: the server sends no messages of its own, so
there is no stream to open. Each request gets its own ``Server`` sharing one store, so requests
of different clients never share protocol state.

Answers: ``application/json`` (one JSON object), unless the request asked for progress
(``_meta.progressToken``) and the client accepts ``text/event-stream``, or the client
accepts only ``text/event-stream``: then an SSE stream (``sse``) carrying the progress
notifications and, last, the response. The server says of each message it sends whether it is
a notification or an error (``Reply``): nothing here looks into encoded bytes.

Bounds: bodies over ``MAX_BODY_BYTES`` get 413; at most ``limits.MAX_PENDING`` calls run
at once and ``MAX_WAITING`` more wait for a slot, beyond which 503 (with Retry-After: the
server is busy, not the client at fault, so not 429). Connections, their deadlines and which
one is closed when the server is full: ``connections``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from magnotia_mcp import log
from magnotia_mcp.errors import InvalidRequest, ProtocolError
from magnotia_mcp.protocol import jsonrpc
from magnotia_mcp.protocol.jsonrpc import JSON, Reply, RequestId
from magnotia_mcp.protocol.server import Server
from magnotia_mcp.transport.http import discovery, negotiation, sse
from magnotia_mcp.transport.http.asgi import (
    Headers,
    Receive,
    Scope,
    SendASGI,
    disconnect,
    headers_of,
    read_body,
    refusal,
    reply,
)
from magnotia_mcp.transport.http.guard import Guard
from magnotia_mcp.transport.http.sessions import Sessions
from magnotia_mcp.transport.limits import MAX_LINE_BYTES, MAX_PENDING

# A new Server, given the legacy revision its client already agreed on (None: none yet, or 2026-07-28).
NewServer = Callable[[str | None], Server]

MAX_BODY_BYTES = MAX_LINE_BYTES  # the same limit as one stdio line
MAX_WAITING = 64  # calls waiting for one of the MAX_PENDING slots; beyond: 503

_UNKNOWN_SESSION = b"unknown or ended session (Mcp-Session-Id): send initialize again, without the header"
_BUSY = b"busy: too many calls in flight, retry shortly"


@dataclass(frozen=True)
class Request:
    """A POSTed request, checked: its body, id and revision, and the session it belongs to or opens."""

    body: bytes
    request_id: RequestId | None
    revision: str
    modern: bool
    session_id: str | None
    opens_session: bool


class Calls:
    """Calls in flight over all requests: the slots that bound them, and where notifications/cancelled finds one."""

    def __init__(self) -> None:
        self.slots = asyncio.Semaphore(MAX_PENDING)
        self.waiting = 0
        # By (session, request id); notifications/cancelled comes in its own POST.
        self.by_key: dict[tuple[str, RequestId], list[Server]] = {}

    async def take_slot(self) -> bool:
        """Wait for a slot; False at once when MAX_WAITING calls wait already."""
        if self.slots.locked() and self.waiting >= MAX_WAITING:
            return False
        self.waiting += 1
        try:
            await self.slots.acquire()
        finally:
            self.waiting -= 1
        return True

    def free_slot(self) -> None:
        self.slots.release()

    def add(self, key: tuple[str, RequestId], server: Server) -> None:
        self.by_key.setdefault(key, []).append(server)

    def remove(self, key: tuple[str, RequestId], server: Server) -> None:
        if server in self.by_key.get(key, ()):
            self.by_key[key].remove(server)
            if not self.by_key[key]:
                del self.by_key[key]

    def named(self, key: tuple[str, RequestId]) -> list[Server]:
        return self.by_key.get(key, [])


class App:
    """The ASGI application: ``/mcp`` answered by per-request Servers over one shared store."""

    def __init__(self, new_server: NewServer, guard: Guard, request_timeout: float) -> None:
        self.new_server = new_server
        self.guard = guard
        self.request_timeout = request_timeout  # the body must arrive within this
        self.calls = Calls()
        self.sessions = Sessions()

    async def __call__(self, scope: Scope, receive: Receive, send: SendASGI) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; websockets are not served
        headers = headers_of(scope)
        status, reason = self.guard.refuse(scope["path"], scope.get("query_string", b""), headers)
        token_needed = self.guard.token is not None
        if status == 404 and token_needed and (probe := discovery.answer(scope["method"], scope["path"])):
            await reply(send, *probe)  # a host refused for want of the token looking for OAuth: tell it the fix
        elif status == 401:
            await reply(send, status, *discovery.unauthorized(bool(reason)))
        elif status:
            await reply(send, status, refusal(reason))
        elif scope["method"] == "DELETE":
            await self.delete(headers, send)
        elif scope["method"] != "POST":
            why = b"POST a message; GET opens no stream: this server sends no messages of its own"
            await reply(send, 405, refusal(why), [(b"allow", b"POST, DELETE")])
        else:
            await self.post(headers, receive, send)

    async def delete(self, headers: dict[str, str], send: SendASGI) -> None:
        """End a session: 204; 404 if it is unknown or already ended."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await reply(send, 400, refusal(b"DELETE ends a session: send its Mcp-Session-Id"))
        elif self.sessions.end(session_id):
            await reply(send, 204, b"", content_type=None)
        else:
            await reply(send, 404, refusal(_UNKNOWN_SESSION))

    async def post(self, headers: dict[str, str], receive: Receive, send: SendASGI) -> None:
        wants = negotiation.accepted(headers)
        if not any(wants):
            await reply(send, 406, refusal(b"Accept must list application/json and text/event-stream"))
            return
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            await reply(send, 415, refusal(b"Content-Type must be application/json"))
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            await reply(send, 413, refusal(b"request body too large"))
            return
        try:
            body = await asyncio.wait_for(read_body(receive, MAX_BODY_BYTES), self.request_timeout)
        except asyncio.TimeoutError:
            await reply(send, 408, refusal(b"the request body came too slowly"), [(b"connection", b"close")])
            return
        if body is None:
            await reply(send, 413, refusal(b"request body too large"))
            return
        try:
            message = jsonrpc.decode(body)
        except ProtocolError as exc:
            await reply(send, 400, jsonrpc.encode(jsonrpc.error(None, exc)))
            return
        session_id = headers.get("mcp-session-id")
        negotiated = self.sessions.enter(session_id) if session_id is not None else None
        try:
            await self.dispatch(message, body, headers, wants, negotiated, receive, send)
        finally:
            if session_id is not None and negotiated is not None:
                self.sessions.leave(session_id)  # the session has no request in flight any more, unless another

    async def dispatch(
        self,
        message: object,
        body: bytes,
        headers: dict[str, str],
        wants: tuple[bool, bool],
        negotiated: str | None,
        receive: Receive,
        send: SendASGI,
    ) -> None:
        """A decoded message, checked against its session, then answered.

        wants: whether the client accepts JSON, and SSE; negotiated: the revision of the live session the
        request names (None: it names none, or one that is unknown or ended).
        """
        wants_json, wants_sse = wants
        session_id = headers.get("mcp-session-id")
        try:
            revision, modern = negotiation.revision(message, headers, negotiated)
        except ProtocolError as exc:
            await reply(send, 400, jsonrpc.encode(jsonrpc.error(jsonrpc.request_id(message), exc)))
            return
        opens_session = not modern and negotiation.is_initialize(message)
        if modern or opens_session:
            session_id = None  # 2026-07-28 has no sessions; initialize starts a new one
        elif session_id is not None and negotiated is None:
            error = jsonrpc.error(jsonrpc.request_id(message), InvalidRequest(_UNKNOWN_SESSION.decode()))
            await reply(send, 404, jsonrpc.encode(error))
            return
        if _needs_no_answer(message):
            if isinstance(message, dict) and "method" in message:
                self.notify(message, body, revision, session_id)
            await reply(send, 202, b"", content_type=None)
            return
        use_sse = wants_sse and (not wants_json or negotiation.asks_progress(message))
        request = Request(body, jsonrpc.request_id(message), revision, modern, session_id, opens_session)
        await Exchange(self, request).run(use_sse, receive, send)

    def notify(self, message: JSON, body: bytes, revision: str, session_id: str | None) -> None:
        """A notification: notifications/cancelled goes to the one call of its session in flight with that id."""
        params = message.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        servers: list[Server] = []
        if session_id is not None and isinstance(target, (str, int)) and jsonrpc.is_id(target):
            servers = self.calls.named((session_id, target))
        if message.get("method") == "notifications/cancelled" and len(servers) == 1:
            servers[0].submit(body, _drop)  # ids are the client's: with several, which is meant is unknown
            return
        self.new_server(revision).submit(body, _drop)


class Exchange:
    """One request run on its own Server: its slot, where notifications/cancelled finds it, what it sends written."""

    def __init__(self, app: App, request: Request) -> None:
        self.app = app
        self.request = request
        self.server = app.new_server(None if request.modern else request.revision)
        self.out: asyncio.Queue[sse.Sent | None] = asyncio.Queue()
        self.new_session = Sessions.new_id() if request.opens_session else None

    def put(self, data: bytes, kind: Reply) -> None:
        self.out.put_nowait((data, kind))

    def settle(self, kind: Reply) -> Headers:
        """Before the response goes out: open the session a successful initialize asked for."""
        # Not opened when every session has a request in flight (more than the connection limit allows):
        # then the client goes on without a session (over SSE it has the id already, and gets 404 with it).
        revision = self.server.legacy_revision if kind.error is None else None  # what initialize agreed on
        if self.new_session is None or revision is None or not self.app.sessions.open(self.new_session, revision):
            return []
        return [(b"mcp-session-id", self.new_session.encode())]

    async def run(self, use_sse: bool, receive: Receive, send: SendASGI) -> None:
        """Run the request and write what its Server sends: one JSON object, or an SSE stream.

        2026-07-28: the client closing the connection before the response cancels the call (the
        revision's only cancellation over HTTP). Older revisions: a disconnect is not a
        cancellation (notifications/cancelled in the call's session is); the call runs on and its
        answer is dropped.
        """
        request, server, calls = self.request, self.server, self.app.calls
        # Where notifications/cancelled finds the call: in its session only. Without one, nothing ties a
        # notification to the call's client (HTTP/1.1 carries one request at a time, so it comes on another
        # connection, which may be anyone's): such calls are not registered.
        key = None
        if request.session_id is not None and request.request_id is not None:
            key = (request.session_id, request.request_id)
        task = server.submit(request.body, self.put, inline_only=True)
        slot = False
        watcher: asyncio.Future[None] | None = None
        if task is not None:  # needs the loop: a slot first
            if not await calls.take_slot():
                await reply(send, 503, refusal(_BUSY), [(b"retry-after", b"1")])
                return
            slot = True
        try:
            if task is not None:
                task = server.submit(request.body, self.put)
                if key is not None:
                    calls.add(key, server)
                if request.modern and isinstance(task, asyncio.Future):
                    watcher = asyncio.ensure_future(disconnect(receive))
                    watcher.add_done_callback(functools.partial(_cancel_on_disconnect, task))
            if use_sse:
                # The id goes in the stream's headers, before the response says whether initialize worked;
                # if it failed, the id was never opened and gets 404.
                start = [(b"mcp-session-id", self.new_session.encode())] if self.new_session is not None else []
                await sse.stream(self.out, task, send, start, self.settle)
            else:
                if isinstance(task, asyncio.Future):
                    await asyncio.wait({task})  # cancelled by the client: no response
                response = _response(sse.drain(self.out))
                if response is None:
                    await reply(send, 204, b"", content_type=None)  # cancelled: nothing to say
                else:
                    data, kind = response
                    await reply(send, negotiation.status(kind, request.modern), data, self.settle(kind))
        finally:
            if key is not None:
                calls.remove(key, server)
            if watcher is not None:
                watcher.cancel()
            if isinstance(task, asyncio.Future) and not task.done():
                log.debug(f"request {request.request_id!r}: its stream ended before it did; cancelling it")
                task.cancel()
            if slot:
                calls.free_slot()


def _drop(_data: bytes, _kind: Reply) -> None:
    """Where a notification's replies go: it has none (a client's response gets none either)."""


def _cancel_on_disconnect(task: asyncio.Future[Any], watcher: asyncio.Future[None]) -> None:
    if not watcher.cancelled() and not task.done():
        log.debug("a 2026-07-28 client closed the connection before the response: cancelling its call")
        task.cancel()


def _response(sent: list[sse.Sent]) -> sse.Sent | None:
    """The response among what the server sent (the rest are progress notifications), None if cancelled."""
    for data, kind in reversed(sent):
        if not kind.notification:
            return data, kind
    return None


def _needs_no_answer(message: object) -> bool:
    """A notification, or a client's response (this server sends no requests): 202."""
    if isinstance(message, list):
        return bool(message) and all(_needs_no_answer(m) for m in message)
    if not isinstance(message, dict):
        return False
    if "method" in message:
        return "id" not in message
    return "id" in message and ("result" in message or "error" in message)


__all__ = ["MAX_BODY_BYTES", "MAX_WAITING", "App", "Calls", "Exchange", "NewServer"]
