"""Talking to a ``Server`` in-process, the way the stdio transport does: framed lines in, sent lines out.

``Server.submit`` takes one line and a ``send`` callback; these helpers frame a
message, collect what ``send`` receives, and decode it, so a test reads like a
client's view of the exchange.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from magnotia_mcp.protocol import revisions
from magnotia_mcp.protocol.jsonrpc import Reply
from magnotia_mcp.protocol.methods import new_server
from magnotia_mcp.protocol.requests import META_CAPABILITIES, META_VERSION
from magnotia_mcp.protocol.server import Server
from magnotia_mcp.store.pool import Store

Message = dict[str, Any]


def never_opened() -> Store:
    """A store factory for servers whose requests must never open the store."""
    raise AssertionError("the store was opened for a request that does not need it")


def request(method: str, params: Message | None = None, id: object = 1) -> Message:
    message: Message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Message | None = None) -> Message:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def frame(message: object) -> bytes:
    """One line of JSON for message (bytes are taken as an already framed line)."""
    return message if isinstance(message, bytes) else json.dumps(message, ensure_ascii=False).encode("utf-8")


class Outbox:
    """A ``send`` callback that keeps every line sent, checking each is one line of UTF-8 JSON that its Reply
    describes truly (a notification, an error and its code, a null id)."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def __call__(self, data: bytes, reply: Reply) -> None:
        assert isinstance(data, bytes)
        assert b"\n" not in data, data
        message = json.loads(data)
        assert reply.notification == (isinstance(message, dict) and "method" in message), (reply, data)
        error = message.get("error") if isinstance(message, dict) else None
        assert reply.error == (error["code"] if error is not None else None), (reply, data)
        assert reply.null_id == (error is not None and message["id"] is None), (reply, data)
        self.lines.append(data)

    def messages(self) -> list[Any]:
        return [json.loads(line.decode("utf-8")) for line in self.lines]


def answer_now(server: Server, message: object) -> list[Any]:
    """What the server sends for message before submit returns, with no event loop at all."""
    out = Outbox()
    assert server.submit(frame(message), out) is None, "answered later, not inline"
    return out.messages()


async def exchange(server: Server, message: object) -> list[Any]:
    """Everything the server sends for message, once it has finished working on it."""
    out = Outbox()
    server.submit(frame(message), out)
    await server.wait_idle()
    return out.messages()


def answer(server: Server, message: object) -> list[Any]:
    """exchange() on an event loop of its own, for servers that never open a store."""
    return asyncio.run(exchange(server, message))


def only(replies: list[Any]) -> Message:
    assert len(replies) == 1, replies
    reply = replies[0]
    assert isinstance(reply, dict), reply
    return reply


def result_of(reply: Message) -> Message:
    assert "error" not in reply, reply
    result = reply["result"]
    assert isinstance(result, dict), reply
    return result


def error_code(reply: Message) -> int:
    assert "result" not in reply, reply
    assert reply["error"]["message"], reply
    code = reply["error"]["code"]
    assert isinstance(code, int), reply
    return code


class Session:
    """A server talking one protocol revision: legacy ones after initialize, modern ones by _meta."""

    def __init__(self, server: Server, revision: str) -> None:
        self.server = server
        self.revision = revision

    @classmethod
    def open(cls, revision: str, store: Store | None = None) -> Session:
        """A new server on store (none: it must never be opened) speaking revision."""
        server = new_server(never_opened if store is None else store)
        if revision in revisions.LEGACY:
            init = request("initialize", {"protocolVersion": revision, "capabilities": {}}, id="init")
            assert result_of(only(answer_now(server, init)))["protocolVersion"] == revision
        return cls(server, revision)

    @property
    def modern(self) -> bool:
        return self.revision in revisions.MODERN

    def request(self, method: str, params: Message | None = None, id: object = 1) -> Message:
        """A request as a client of this revision sends it (modern ones carry the revision in _meta)."""
        params = dict(params or {})
        if self.modern:
            params["_meta"] = {META_VERSION: self.revision, META_CAPABILITIES: {}}
        return request(method, params, id)
