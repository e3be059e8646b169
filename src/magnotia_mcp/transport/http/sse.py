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
# Queued after the last of them: the call has ended, the server sends nothing more for it.
END = None


def drain(out: asyncio.Queue[Sent | None]) -> list[Sent]:
    """Everything queued so far, without waiting (the end marker left out)."""
    items = []
    while not out.empty():
        item = out.get_nowait()
        if item is not END:
            items.append(item)
    return items


def event(data: bytes) -> bytes:
    return b"event: message\ndata: " + data + b"\n\n"


def _end_after(out: asyncio.Queue[Sent | None], task: object) -> None:
    """Queue END once the call has ended and everything the server sends for it is queued (task: its Future).

    The server queues the response from a done callback it adds when it starts the call (``InFlight.spawn``);
    a Future runs its done callbacks in the order they were added, so END, added here afterwards, comes after
    the response. ``task.done()`` is no such sign: it is true before any done callback has run, and a stream
    that ended on it could end in the loop turn between the call's end and its response being queued.
    """
    if isinstance(task, asyncio.Future):
        task.add_done_callback(lambda _task: out.put_nowait(END))
    else:
        out.put_nowait(END)  # answered before submit returned: what it sent is queued already


async def stream(
    out: asyncio.Queue[Sent | None], task: object, send: SendASGI, extra: Headers, settle: Callable[[Reply], object]
) -> None:
    """Write what the server sends for a request as events, in order, until the call ends (task: its Future, if any).

    The stream ends only at END (``_end_after``), so after the response, if the call has one (a cancelled
    call has none). settle is told of the response before it goes out; extra: headers of the stream.
    """
    _end_after(out, task)
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),  # a reverse proxy must pass events on at once, not buffer them
        *extra,
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    while (item := await out.get()) is not END:
        data, reply = item
        if not reply.notification:
            settle(reply)
        await send({"type": "http.response.body", "body": event(data), "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


__all__ = ["END", "Sent", "drain", "event", "stream"]
