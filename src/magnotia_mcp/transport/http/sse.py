"""An answer as a Server-Sent Events stream: the progress notifications as they come, and last, the response.

Chosen when the request asked for progress and the client accepts ``text/event-stream``, or
when the client accepts nothing else. Each message the server sends is one ``message`` event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from magnotia_mcp.protocol.jsonrpc import Reply
from magnotia_mcp.transport.http.asgi import Headers, SendASGI

# What the server sent for one request, in order: each encoded message with what the server says of it.
Sent = tuple[bytes, Reply]


def drain(out: asyncio.Queue[Sent]) -> list[Sent]:
    """Everything queued so far, without waiting."""
    items = []
    while not out.empty():
        items.append(out.get_nowait())
    return items


def event(data: bytes) -> bytes:
    return b"event: message\ndata: " + data + b"\n\n"


async def stream(
    out: asyncio.Queue[Sent], task: object, send: SendASGI, extra: Headers, settle: Callable[[Reply], object]
) -> None:
    """Write what the server sends for a request as events until the call ends (task: its Future, if it has one).

    settle is told of the response before it goes out; extra: headers of the stream.
    """
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
        for data, reply in drain(out):
            if not reply.notification:
                settle(reply)
            await send({"type": "http.response.body", "body": event(data), "more_body": True})
        if out.empty() and not (isinstance(task, asyncio.Future) and not task.done()):
            break
    await send({"type": "http.response.body", "body": b"", "more_body": False})


__all__ = ["Sent", "drain", "event", "stream"]
