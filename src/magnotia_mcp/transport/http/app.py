"""The Streamable HTTP transport (opt-in, ``serve --http``): HTTP in, the same ``Server`` as stdio, JSON or SSE out.

uvicorn (with h11) parses HTTP; this module is a thin ASGI app that checks the request
(Host, Origin, bearer token, method, headers, body size) and hands the body, one JSON-RPC
message, to ``Server.submit`` exactly as stdio hands it a line. It imports uvicorn only in
``run``; nothing on the stdio path imports this module.

Every POST stands alone. 2026-07-28 requests carry their revision in ``_meta`` (stateless
by design). For the older revisions, ``initialize`` opens a session (``Mcp-Session-Id``, see
``sessions``): a request carrying its id gets the negotiated revision when it has no
``MCP-Protocol-Version`` header (without either: ``2025-03-26``, as the spec says), an
unknown or ended id gets 404, DELETE ends it; a request without an id is served as before.
Cancellation by ``notifications/cancelled`` reaches only calls of the same session. Paths a
host probes for OAuth after a 401 answer with how to send the token (``discovery``).
GET gets 405: the server sends no messages of its own, so there is no stream to open. Each
request gets its own ``Server`` sharing one store, so requests of different clients never
share protocol state.

Answers: ``application/json`` (one JSON object), unless the request asked for progress
(``_meta.progressToken``) and the client accepts ``text/event-stream``, or the client
accepts only ``text/event-stream``: then an SSE stream carrying the progress notifications
and, last, the response.

Bounds: bodies over ``MAX_BODY_BYTES`` get 413; at most ``stdio.MAX_PENDING`` calls run
at once and ``MAX_WAITING`` more wait for a slot, beyond which 503 (with Retry-After: the
server is busy, not the client at fault, so not 429). Connections, their deadlines and which
one is closed when the server is full: ``connections``; the Host and Origin checks: ``hostcheck``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import hmac
import json
import re
import signal
import socket
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import uvicorn

from magnotia_mcp import __version__, log
from magnotia_mcp.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    InvalidParams,
    InvalidRequest,
    ProtocolError,
)
from magnotia_mcp.protocol import jsonrpc, revisions
from magnotia_mcp.protocol.jsonrpc import JSON, RequestId
from magnotia_mcp.protocol.server import META_VERSION, Server
from magnotia_mcp.transport.http import connections, discovery, throttle
from magnotia_mcp.transport.http.hostcheck import HostCheck, is_loopback
from magnotia_mcp.transport.http.sessions import Sessions
from magnotia_mcp.transport.stdio.lines import MAX_LINE_BYTES
from magnotia_mcp.transport.stdio.loop import MAX_PENDING

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
SendASGI = Callable[[Message], Awaitable[None]]

PATH = "/mcp"
MAX_BODY_BYTES = MAX_LINE_BYTES  # the same limit as one stdio line
MAX_WAITING = 64  # calls waiting for one of the MAX_PENDING slots; beyond: 503
HEADER_MISMATCH = -32020  # 2026-07-28: an HTTP header disagrees with the body
# 2026-07-28: the HTTP status of a JSON-RPC error (others: 200).
MODERN_ERROR_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# The body param each 2026-07-28 method mirrors in the Mcp-Name header.
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# Query parameters that would carry a credential: refused, as URLs end up in logs.
TOKEN_PARAMS = frozenset({"token", "access_token", "auth", "authorization", "api_key", "key", "bearer"})


_UNKNOWN_SESSION = b"unknown or ended session (Mcp-Session-Id): send initialize again, without the header"


class Mismatch(ProtocolError):
    code = HEADER_MISMATCH


@dataclass(frozen=True)
class Request:
    """A POSTed request, checked: its body, id and revision, and the session it belongs to or opens."""

    body: bytes
    request_id: RequestId | None
    revision: str
    modern: bool
    session_id: str | None
    opens_session: bool


@dataclass
class Settings:
    """What ``serve --http`` was told: the bind address, the token, and what widens the checks."""

    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None  # None: --no-auth (loopback only)
    allow_origins: list[str] = field(default_factory=list)
    allow_hosts: list[str] = field(default_factory=list)
    timeout_keep_alive: float = 5.0
    request_timeout: float = 10.0  # a whole request (headers, then body) must arrive within this
    max_connections: int = connections.MAX_CONNECTIONS  # open at once; lowered to what the fd limit allows


def parse_bind(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (an IPv6 host in brackets) as (host, port); ValueError if it is neither."""
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"{value!r} is not [HOST:]PORT (a port is 0 to 65535)")
    return host, int(port_text)


class App:
    """The ASGI application: ``/mcp`` answered by per-request Servers over one shared store."""

    def __init__(self, new_server: Callable[[], Server], settings: Settings) -> None:
        self.new_server = new_server
        self.settings = settings
        self.token = settings.token.encode() if settings.token is not None else None
        self.slots = asyncio.Semaphore(MAX_PENDING)
        self.waiting = 0
        self.sessions = Sessions()
        # Calls in flight by (session, request id), for notifications/cancelled (which comes in its own POST).
        self.calls: dict[tuple[str | None, RequestId | None], list[Server]] = {}
        self.bound(settings.port)

    def bound(self, port: int) -> None:
        """Set the checks that depend on the port actually bound (0 picks a free one)."""
        settings = self.settings
        self.hosts = HostCheck(settings.host, port, settings.allow_hosts, settings.allow_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: SendASGI) -> None:
        if scope["type"] != "http":
            return  # lifespan is off; websockets are not served
        headers = _headers(scope)
        status, reason = self.refuse(scope, headers)
        if status == 404 and self.token is not None and (probe := discovery.answer(scope["method"], scope["path"])):
            await _reply(send, *probe)  # a host refused for want of the token looking for OAuth: tell it the fix
            return
        if status == 401:
            await _reply(send, status, *discovery.unauthorized(bool(reason)))
            return
        if status:
            await _reply(send, status, _refusal(reason))
            return
        if scope["method"] == "DELETE":
            await self.delete(headers, send)
            return
        if scope["method"] != "POST":
            await _reply(
                send,
                405,
                _refusal(b"POST a message; GET opens no stream: this server sends no messages of its own"),
                [(b"allow", b"POST, DELETE")],
            )
            return
        await self.post(headers, receive, send)

    async def delete(self, headers: dict[str, str], send: SendASGI) -> None:
        """End a session: 204; 404 if it is unknown or already ended."""
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await _reply(send, 400, _refusal(b"DELETE ends a session: send its Mcp-Session-Id"))
        elif self.sessions.end(session_id):
            await _reply(send, 204, b"", content_type=None)
        else:
            await _reply(send, 404, _refusal(_UNKNOWN_SESSION))

    def refuse(self, scope: Scope, headers: dict[str, str]) -> tuple[int, bytes]:
        """The status (0: none) and reason refusing a request before its body is read."""
        if not self.hosts.host_ok(headers.get("host", "")):
            return 403, b"Host not allowed (DNS-rebinding protection; see --allow-host)"
        origin = headers.get("origin")
        if origin is not None and not self.hosts.origin_ok(origin):
            return 403, b"Origin not allowed (see --allow-origin)"
        if scope["path"] != PATH:
            return 404, b"not found: the MCP endpoint is /mcp"
        query = scope.get("query_string", b"").decode("latin-1")
        if any(k.lower() in TOKEN_PARAMS for k, _ in parse_qsl(query, keep_blank_values=True)):
            return 400, b' error="invalid_request", a credential in the URL is refused: send Authorization: Bearer'
        if self.token is not None:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token):
                return 401, b' error="invalid_token"' if given else b""
        return 0, b""

    async def post(self, headers: dict[str, str], receive: Receive, send: SendASGI) -> None:
        accept = _media_types(headers.get("accept", ""))
        wants_json = bool(accept & {"application/json", "application/*", "*/*"})
        wants_sse = bool(accept & {"text/event-stream", "text/*", "*/*"})
        if not (wants_json or wants_sse):
            await _reply(send, 406, _refusal(b"Accept must list application/json and text/event-stream"))
            return
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            await _reply(send, 415, _refusal(b"Content-Type must be application/json"))
            return
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_BODY_BYTES:
            await _reply(send, 413, _refusal(b"request body too large"))
            return
        try:
            body = await asyncio.wait_for(_read_body(receive), self.settings.request_timeout)
        except asyncio.TimeoutError:
            await _reply(send, 408, _refusal(b"the request body came too slowly"), [(b"connection", b"close")])
            return
        if body is None:
            await _reply(send, 413, _refusal(b"request body too large"))
            return
        try:
            message = jsonrpc.decode(body)
        except ProtocolError as exc:
            await _reply(send, 400, jsonrpc.encode(jsonrpc.error(None, exc)))
            return
        session_id = headers.get("mcp-session-id")
        negotiated = self.sessions.enter(session_id) if session_id is not None else None
        try:
            await self.dispatch(message, body, headers, (wants_json, wants_sse), negotiated, receive, send)
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
            revision, modern = self.revision(message, headers, negotiated)
        except ProtocolError as exc:
            await _reply(send, 400, jsonrpc.encode(jsonrpc.error(jsonrpc.request_id(message), exc)))
            return
        opens_session = not modern and _is_initialize(message)
        if modern or opens_session:
            session_id = None  # 2026-07-28 has no sessions; initialize starts a new one
        elif session_id is not None and negotiated is None:
            error = jsonrpc.error(jsonrpc.request_id(message), InvalidRequest(_UNKNOWN_SESSION.decode()))
            await _reply(send, 404, jsonrpc.encode(error))
            return
        if _needs_no_answer(message):
            if isinstance(message, dict) and "method" in message:
                self.notify(message, body, revision, session_id)
            await _reply(send, 202, b"", content_type=None)
            return
        use_sse = wants_sse and (not wants_json or _asks_progress(message))
        request = Request(body, jsonrpc.request_id(message), revision, modern, session_id, opens_session)
        await self.answer(request, use_sse, receive, send)

    def notify(self, message: JSON, body: bytes, revision: str, session_id: str | None) -> None:
        """A notification: notifications/cancelled goes to the one call of its session in flight with that id."""
        params = message.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        servers: list[Server] = []
        if session_id is not None and isinstance(target, (str, int)) and jsonrpc.is_id(target):
            servers = self.calls.get((session_id, target), [])
        if message.get("method") == "notifications/cancelled" and len(servers) == 1:
            servers[0].submit(body, lambda _data: None)  # ids are the client's: with several, which is meant is unknown
            return
        server = self.new_server()
        server.legacy_revision = revision
        server.submit(body, lambda _data: None)

    def revision(self, message: object, headers: dict[str, str], negotiated: str | None) -> tuple[str, bool]:
        """The revision a message speaks (and whether it is 2026-07-28 or later); checks MCP-Protocol-Version.

        negotiated: what the request's session agreed on, if it names a live one.
        """
        header = headers.get("mcp-protocol-version")
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        body_version = meta.get(META_VERSION) if isinstance(meta, dict) else None
        if body_version is not None or header in revisions.MODERN:
            if body_version is None:
                raise InvalidParams(f"params._meta must carry {META_VERSION!r} (MCP-Protocol-Version is {header!r})")
            # Only what a header can carry is compared: a body value that is not a string is the
            # body's own error (-32602 from the server), not a mismatch.
            if isinstance(body_version, str) and header != body_version:
                raise Mismatch("MCP-Protocol-Version header does not match params._meta's protocol version")
            method = message.get("method") if isinstance(message, dict) else None
            if headers.get("mcp-method") != method:
                raise Mismatch("Mcp-Method header does not match the request body's method")
            key = NAME_BEARING.get(method) if isinstance(method, str) else None
            value = params.get(key) if key and isinstance(params, dict) else None
            if isinstance(value, str) and _header_value(headers.get("mcp-name")) != value:
                raise Mismatch(f"Mcp-Name header does not match the request body's {key!r}")
            return (body_version if body_version in revisions.MODERN else revisions.MODERN[-1]), True
        if header is None:
            return negotiated or "2025-03-26", False
        if header not in revisions.LEGACY:
            raise InvalidRequest(
                f"unsupported MCP-Protocol-Version {header!r} (supported: {', '.join(revisions.KNOWN)})"
            )
        if negotiated is not None and header != negotiated and not _is_initialize(message):
            raise InvalidRequest(f"MCP-Protocol-Version {header!r} is not {negotiated!r}, this session's revision")
        return header, False

    async def answer(self, request: Request, use_sse: bool, receive: Receive, send: SendASGI) -> None:
        """Run one request on its own Server and write what it sends: one JSON object, or an SSE stream.

        2026-07-28: the client closing the connection before the response cancels the call (the
        revision's only cancellation over HTTP). Older revisions: a disconnect is not a
        cancellation (notifications/cancelled in the call's session is); the call runs on and its
        answer is dropped.
        """
        body, request_id, session_id = request.body, request.request_id, request.session_id
        # Where notifications/cancelled finds the call: in its session only. Without one, nothing ties a
        # notification to the call's client (HTTP/1.1 carries one request at a time, so it comes on another
        # connection, which may be anyone's): such calls are not registered.
        key = (session_id, request_id) if session_id is not None and request_id is not None else None
        server = self.new_server()
        server.legacy_revision = None if request.modern else request.revision
        out: asyncio.Queue[bytes] = asyncio.Queue()
        new_session = Sessions.new_id() if request.opens_session else None

        def settle(response: bytes) -> list[tuple[bytes, bytes]]:
            """Before the response goes out: open the session a successful initialize asked for."""
            revision = _negotiated(response) if new_session is not None else None
            # Not opened when every session has a request in flight (more than the connection limit allows):
            # then the client goes on without a session (over SSE it has the id already, and gets 404 with it).
            if new_session is None or revision is None or not self.sessions.open(new_session, revision):
                return []
            return [(b"mcp-session-id", new_session.encode())]

        task = server.submit(body, out.put_nowait, inline_only=True)
        slot = False
        watcher: asyncio.Future[None] | None = None
        if task is not None:  # needs the loop: a slot first
            if self.slots.locked() and self.waiting >= MAX_WAITING:
                await _reply(
                    send, 503, _refusal(b"busy: too many calls in flight, retry shortly"), [(b"retry-after", b"1")]
                )
                return
            self.waiting += 1
            try:
                await self.slots.acquire()
            finally:
                self.waiting -= 1
            slot = True
        try:
            if task is not None:
                task = server.submit(body, out.put_nowait)
                if key is not None:
                    self.calls.setdefault(key, []).append(server)
                if request.modern and isinstance(task, asyncio.Future):
                    watcher = asyncio.ensure_future(_disconnect(receive))
                    watcher.add_done_callback(functools.partial(_cancel_on_disconnect, task))
            if use_sse:
                # The id goes in the stream's headers, before the response says whether initialize worked;
                # if it failed, the id was never opened and gets 404.
                start = [(b"mcp-session-id", new_session.encode())] if new_session is not None else []
                await self.stream(out, task, send, start, settle)
            else:
                if isinstance(task, asyncio.Future):
                    await asyncio.wait({task})  # cancelled by the client: no response
                answer = _response(_drain(out))
                if answer is None:
                    await _reply(send, 204, b"", content_type=None)  # cancelled: nothing to say
                else:
                    await _reply(send, _status(answer, request.modern), answer, settle(answer))
        finally:
            if key is not None and server in self.calls.get(key, ()):
                self.calls[key].remove(server)
                if not self.calls[key]:
                    del self.calls[key]
            if watcher is not None:
                watcher.cancel()
            if isinstance(task, asyncio.Future) and not task.done():
                task.cancel()  # the client went away
            if slot:
                self.slots.release()

    @staticmethod
    async def stream(
        out: asyncio.Queue[bytes],
        task: object,
        send: SendASGI,
        extra: list[tuple[bytes, bytes]],
        settle: Callable[[bytes], object],
    ) -> None:
        headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),  # a reverse proxy must pass events on at once, not buffer them
            *extra,
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        while True:
            if out.empty() and isinstance(task, asyncio.Future) and not task.done():
                getter = asyncio.ensure_future(out.get())
                await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    out.put_nowait(getter.result())
                else:
                    getter.cancel()
            messages = _drain(out)
            for data in messages:
                if not _is_notification(data):
                    settle(data)
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"event: message\ndata: " + data + b"\n\n",
                        "more_body": True,
                    }
                )
            if out.empty() and not (isinstance(task, asyncio.Future) and not task.done()):
                break
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _drain(out: asyncio.Queue[bytes]) -> list[bytes]:
    items = []
    while not out.empty():
        items.append(out.get_nowait())
    return items


async def _disconnect(receive: Receive) -> None:
    """Returns when the client closes the connection (the body has been read: nothing else comes)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _cancel_on_disconnect(task: asyncio.Future[Any], watcher: asyncio.Future[None]) -> None:
    if not watcher.cancelled() and not task.done():
        task.cancel()


def _is_notification(data: bytes) -> bool:
    """Whether an encoded message the server sent is a notification (jsonrpc.encode puts "method" second)."""
    return data.startswith(b'{"jsonrpc":"2.0","method":')


def _response(messages: list[bytes]) -> bytes | None:
    """The response among what the server sent (the rest are progress notifications), None if cancelled."""
    for data in reversed(messages):
        if not _is_notification(data):
            return data
    return None


def _is_initialize(message: object) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize" and "id" in message


def _negotiated(response: bytes) -> str | None:
    """The revision a successful initialize response agreed on; None for an error."""
    try:
        reply = json.loads(response)
    except ValueError:
        return None
    result = reply.get("result") if isinstance(reply, dict) else None
    version = result.get("protocolVersion") if isinstance(result, dict) else None
    return version if isinstance(version, str) else None


def _status(answer: bytes, modern: bool) -> int:
    """200, or for an error: 400 when the body was no usable request, and what 2026-07-28 names."""
    # Parse only errors: a whole result can be large (a page of 100 transcripts: ~0.8 ms to parse).
    # In encoded JSON the bytes "result": and "error": occur unescaped only as keys, so whichever
    # comes first is the response's own member (a nested "error" key sits inside "result").
    error_at, result_at = answer.find(b'"error":'), answer.find(b'"result":')
    if error_at == -1 or -1 < result_at < error_at:
        return 200
    try:
        reply = json.loads(answer) if answer else None
    except ValueError:
        return 200
    if not isinstance(reply, dict) or not isinstance(error := reply.get("error"), dict):
        return 200
    if reply.get("id") is None:
        return 400
    code = error.get("code")
    return MODERN_ERROR_STATUS.get(code, 200) if modern and isinstance(code, int) else 200


def _needs_no_answer(message: object) -> bool:
    """A notification, or a client's response (this server sends no requests): 202."""
    if isinstance(message, list):
        return bool(message) and all(_needs_no_answer(m) for m in message)
    if not isinstance(message, dict):
        return False
    if "method" in message:
        return "id" not in message
    return "id" in message and ("result" in message or "error" in message)


def _asks_progress(message: object) -> bool:
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and jsonrpc.is_id(meta.get("progressToken"))


def _header_value(value: str | None) -> str | None:
    """An Mcp-Name value, decoding the ``=?base64?...?=`` form used for non-ASCII names."""
    if value is None:
        return None
    match = re.fullmatch(r"=\?base64\?(.*)\?=", value)
    if match is None:
        return value
    try:
        return base64.b64decode(match.group(1), validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers by lowercase name (a repeated one: its values joined with a comma)."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        found[name] = f"{found[name]}, {value}" if name in found else value
    return found


def _media_types(accept: str) -> set[str]:
    return {part.split(";")[0].strip().lower() for part in accept.split(",") if part.strip()}


def _refusal(reason: bytes) -> bytes:
    """A refusal's body: a JSON-RPC error without an id, as the spec allows."""
    text = reason.decode().lstrip(" ").removeprefix('error="invalid_request", ').removeprefix('error="invalid_token"')
    return jsonrpc.encode(jsonrpc.error(None, InvalidRequest(text or "missing or invalid bearer token")))


async def _read_body(receive: Receive) -> bytes | None:
    """The request body, or None once it passes MAX_BODY_BYTES (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _reply(
    send: SendASGI,
    status: int,
    body: bytes,
    extra: Iterable[tuple[bytes, bytes]] = (),
    *,
    content_type: bytes | None = b"application/json",
) -> None:
    headers = [(b"content-type", content_type)] if content_type and body else []
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": body})


# -- running it ---------------------------------------------------------------------


class _Server(uvicorn.Server):
    """uvicorn's server, except that SIGINT/SIGTERM end it as they end stdio: cleanly, exit status 0.

    uvicorn re-raises the signal it caught once it has shut down, so the process died of it
    (status 143) before the store was closed.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def run(new_server: Callable[[], Server], settings: Settings, on_exit: Callable[[], Awaitable[None]]) -> int:
    """Bind, say where on stderr ("listening on http://HOST:PORT/mcp"), serve until SIGINT/SIGTERM."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP, and without it each
    # answer (uvicorn writes its head and body separately) waited ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((settings.host, settings.port))
    except OSError as exc:
        sock.close()
        log.error(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}")
        return 1
    sock.listen(128)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    app = App(new_server, settings)
    app.bound(port)
    limit = connections.affordable(settings.max_connections)
    if limit < settings.max_connections:
        log.warning(
            f"the open-file limit allows {limit} connections, not {settings.max_connections}: "
            "raise it (ulimit -n) to keep more open"
        )
    quiet = throttle.Throttle()
    registry = connections.Registry(limit, quiet)
    config = uvicorn.Config(
        app,
        http=connections.protocol_class(settings.request_timeout, registry),
        loop="asyncio",
        lifespan="off",
        ws="none",  # no websockets: uvicorn would otherwise look for a websockets library at start
        log_config=None,
        access_log=False,  # never log request lines: they are where a token would show
        server_header=False,
        timeout_keep_alive=int(settings.timeout_keep_alive),
        # No limit_concurrency: it counts connections, so idle sockets made every request 503. Calls
        # are bounded by App (MAX_PENDING running, MAX_WAITING waiting), connections by the registry.
        h11_max_incomplete_event_size=connections.MAX_HEAD_BYTES,
    )
    server = _Server(config)
    shown = f"[{settings.host}]" if family == socket.AF_INET6 else settings.host

    async def main() -> None:
        log.info(f"magnotia-mcp {__version__} listening on http://{shown}:{port}{PATH}")
        try:
            await server.serve(sockets=[sock])
        finally:
            await on_exit()

    undo = throttle.route(quiet)  # uvicorn's and asyncio's warnings: one line per kind, then counts
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(main())
    finally:
        quiet.flush()
        undo()
    return 0


__all__ = ["MAX_BODY_BYTES", "MAX_WAITING", "PATH", "App", "Settings", "is_loopback", "parse_bind", "run"]
