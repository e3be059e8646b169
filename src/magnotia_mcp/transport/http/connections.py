"""The connections ``serve --http`` keeps open: how many, which one goes when it is full, and their deadlines.

uvicorn's own bound (``limit_concurrency``) counts connections, so about 135 sockets that never
sent a byte made every request get 503. Here a connection that has not sent a whole request
head costs nothing a request needs:

- At most ``limit`` connections are open (``--max-connections``, default ``MAX_CONNECTIONS``,
  lowered to what the file-descriptor limit allows; the soft limit is raised towards the hard
  one first). Requests themselves are bounded by the app (running and waiting calls).
- A connection is *waiting* from when it opens, and again from each answer, until a whole
  request head has arrived; it is *busy* while its request is handled and answered.
- When a new connection finds the server full, the waiting connection that has waited longest
  is closed to make room, taken from the peer (an IPv4 address, an IPv6 /64) with the most
  waiting connections: one peer cannot push out another peer's connections while it has more
  of its own. Only when every connection is busy is the new one closed instead.
- A waiting connection is closed ``request_timeout`` seconds after it opened or was last
  answered; a busy one whose answer the client does not read for ``request_timeout`` seconds
  (the transport's write buffer stays full) is closed too: a client that stops reading would
  otherwise hold its connection, and any call slot, for ever.

This module is the one place that leans on uvicorn's internals (``H11Protocol``'s hooks): the
http extra bounds uvicorn's version (pyproject.toml), tests/unit/transport/test_http_uvicorn_hooks.py checks the
hooks and attributes used, and tests/security/test_http_sockets.py shows the behaviour relied on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import struct
import sys
from typing import Protocol

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from magnotia_mcp.transport.http.throttle import Throttle

if sys.platform != "win32":  # Windows: sockets are handles, not bounded by an RLIMIT_NOFILE
    import resource

MAX_CONNECTIONS = 4096
# Descriptors kept for everything else: the listening socket, stdio, the store's connections and
# their -wal/-shm, the event loop's own.
RESERVED_FDS = 64
# macOS refuses a soft limit above OPEN_MAX even when the hard limit says "unlimited".
MACOS_OPEN_MAX = 10240
MAX_HEAD_BYTES = 64 * 1024  # a request line and headers; beyond: 400 and the connection closed
# SO_LINGER on, 0 s: closing resets the connection at once (struct linger: two u_short on Windows).
LINGER_NONE = struct.pack("HH" if sys.platform == "win32" else "ii", 1, 0)


class Connection(Protocol):
    def evict(self) -> None: ...


def affordable(wanted: int) -> int:
    """How many connections the file-descriptor limit allows (at most wanted), raising the soft limit if it helps."""
    if sys.platform == "win32":
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = wanted + RESERVED_FDS
    if soft != resource.RLIM_INFINITY and soft < need:
        ceiling = need if hard == resource.RLIM_INFINITY else min(need, hard)
        for target in (ceiling, min(ceiling, MACOS_OPEN_MAX)):
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
                soft = target
                break
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - RESERVED_FDS))


def peer_of(address: object) -> str:
    """The peer a connection counts against: its IP address, or for IPv6 its /64 (one host usually has a whole /64)."""
    host = address[0] if isinstance(address, tuple) and address else ""
    try:
        ip = ipaddress.ip_address(str(host).partition("%")[0])
    except ValueError:
        return str(host)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)  # an IPv4 client of a dual-stack [::] bind
    if ip.version == 6 and not ip.is_loopback:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class Registry:
    """Every open connection, and the waiting ones per peer in the order they started waiting."""

    def __init__(self, limit: int, throttle: Throttle) -> None:
        self.limit = limit
        self.throttle = throttle
        self.peers: dict[Connection, str] = {}
        self.waiting: dict[str, dict[Connection, None]] = {}  # per peer, oldest first (an ordered set)

    def __len__(self) -> int:
        return len(self.peers)

    def opened(self, conn: Connection, peer: str) -> bool:
        """Count a new connection, waiting; False if there is no room (every open connection is busy)."""
        if len(self.peers) >= self.limit:
            victim = self.longest_waiting()
            if victim is None:
                self.throttle.note(
                    "connections-refused",
                    f"connection limit reached ({self.limit} open, each with a request in progress): "
                    "closed a new connection at once",
                )
                return False
            self.closed(victim)
            victim.evict()
            self.throttle.note(
                "connections-evicted",
                f"connection limit reached ({self.limit} open): closed the connection that had waited longest "
                "without sending a request, to let a new one in",
            )
        self.peers[conn] = peer
        self.mark_waiting(conn)
        return True

    def mark_waiting(self, conn: Connection) -> None:
        """conn has no request in progress (just opened, or answered): it goes to the end of its peer's queue."""
        peer = self.peers.get(conn)
        if peer is None:
            return
        queue = self.waiting.setdefault(peer, {})
        queue.pop(conn, None)
        queue[conn] = None

    def mark_busy(self, conn: Connection) -> None:
        """conn's request head has arrived: it is not closed to make room until it is answered."""
        peer = self.peers.get(conn)
        queue = self.waiting.get(peer) if peer is not None else None
        if queue is not None and peer is not None:
            queue.pop(conn, None)
            if not queue:
                del self.waiting[peer]

    def closed(self, conn: Connection) -> None:
        self.mark_busy(conn)
        self.peers.pop(conn, None)

    def longest_waiting(self) -> Connection | None:
        """The oldest waiting connection of the peer with the most waiting connections."""
        if not self.waiting:
            return None
        peer = max(self.waiting, key=lambda p: len(self.waiting[p]))
        return next(iter(self.waiting[peer]))


class BoundedHead(h11.Connection):
    """h11's server side, refusing a request head over MAX_HEAD_BYTES.

    h11's own limit (max_incomplete_event_size) applies only while a head is incomplete: one
    that arrives whole in a single read (asyncio reads up to 256 KiB) passes whatever its size.
    """

    def __init__(self) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)

    def next_event(self) -> type[h11.NEED_DATA] | type[h11.PAUSED] | h11.Event:
        event = super().next_event()
        if isinstance(event, h11.Request):
            size = len(event.method) + len(event.target) + sum(len(n) + len(v) + 4 for n, v in event.headers)
            if size > MAX_HEAD_BYTES:
                # uvicorn answers a RemoteProtocolError with 400 and closes the connection.
                raise h11.RemoteProtocolError("request head too large", error_status_hint=431)
        return event


def protocol_class(request_timeout: float, registry: Registry) -> type[H11Protocol]:
    """uvicorn's h11 protocol, counted in registry, with the deadlines of the module's docstring.

    The head deadline: uvicorn times out only idle keep-alive connections after an answer, so a
    connection that never sends, or sends its headers a byte at a time, would be kept for ever.
    Here the headers must arrive within ``request_timeout`` of connecting or of the last answer
    (the body gets the same time once the app reads it: 408, in the app).
    """

    class Counted(H11Protocol):
        deadline: asyncio.TimerHandle | None = None
        stalled: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self.conn = BoundedHead()
            super().connection_made(transport)
            if not registry.opened(self, peer_of(self.client)):
                self.drop()
                return
            self.arm()

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                registry.mark_waiting(self)
                self.arm()  # before: a pipelined request handled inside this call disarms it
            super().on_response_complete()

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not cycle:  # a request's headers arrived
                registry.mark_busy(self)
                self.disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            registry.closed(self)
            self.disarm()
            self.unstall()
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            if self.stalled is None:
                self.stalled = self.loop.call_later(request_timeout, self.drop)

        def resume_writing(self) -> None:
            self.unstall()
            super().resume_writing()

        def arm(self) -> None:
            self.disarm()
            self.deadline = self.loop.call_later(request_timeout, self.drop)

        def disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def unstall(self) -> None:
            if self.stalled is not None:
                self.stalled.cancel()
                self.stalled = None

        def evict(self) -> None:
            self.drop()

        def drop(self) -> None:
            """Close now. With unsent bytes (a client that does not read), reset: close() would wait for them."""
            self.disarm()
            self.unstall()
            registry.closed(self)
            if self.transport.is_closing() and not self.transport.get_write_buffer_size():
                return
            with contextlib.suppress(h11.LocalProtocolError):
                self.conn.send(h11.ConnectionClosed())
            if self.transport.get_write_buffer_size():
                # Reset, not FIN: the kernel would otherwise keep the unread bytes (megabytes) and go
                # on offering them to a client that does not read.
                sock = self.transport.get_extra_info("socket")
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_NONE)
                self.transport.abort()
            else:
                self.transport.close()

    return Counted
