"""The ASGI plumbing: a request's headers and body read, a plain answer or a refusal written.

uvicorn (with h11) parses HTTP and calls the app with ASGI messages; nothing here knows MCP
beyond a refusal's body being a JSON-RPC error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from magnotia_mcp.errors import InvalidRequest
from magnotia_mcp.protocol import jsonrpc

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
SendASGI = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]


def headers_of(scope: Scope) -> dict[str, str]:
    """Request headers by lowercase name (a repeated one: its values joined with a comma)."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        found[name] = f"{found[name]}, {value}" if name in found else value
    return found


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or None once it passes limit bytes (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def disconnect(receive: Receive) -> None:
    """Returns when the client closes the connection (the body has been read: nothing else comes)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def refusal(reason: bytes) -> bytes:
    """A refusal's body: a JSON-RPC error without an id, as the spec allows."""
    text = reason.decode().lstrip(" ").removeprefix('error="invalid_request", ').removeprefix('error="invalid_token"')
    return jsonrpc.encode(jsonrpc.error(None, InvalidRequest(text or "missing or invalid bearer token")))


async def reply(
    send: SendASGI,
    status: int,
    body: bytes,
    extra: Iterable[tuple[bytes, bytes]] = (),
    *,
    content_type: bytes | None = b"application/json",
) -> None:
    """One whole answer: status, headers (content-type only with a body), body."""
    headers = [(b"content-type", content_type)] if content_type and body else []
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *extra]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["Headers", "Receive", "Scope", "SendASGI", "disconnect", "headers_of", "read_body", "refusal", "reply"]
