"""Serving the app: the listening socket, uvicorn's configuration, and SIGINT/SIGTERM ending it cleanly.

It imports uvicorn, so only ``serve --http`` imports it; nothing on the stdio path does.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field

import uvicorn

from magnotia_mcp import __version__, log
from magnotia_mcp.transport.http import connections, throttle
from magnotia_mcp.transport.http.app import App, NewServer
from magnotia_mcp.transport.http.guard import PATH, Guard


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


def run(new_server: NewServer, settings: Settings, on_exit: Callable[[], Awaitable[None]]) -> int:
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
    port = sock.getsockname()[1]  # the port actually bound (0 picks a free one): the Host checks need it
    guard = Guard(settings.host, port, settings.allow_hosts, settings.allow_origins, settings.token)
    app = App(new_server, guard, settings.request_timeout)
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


__all__ = ["Settings", "parse_bind", "run"]
