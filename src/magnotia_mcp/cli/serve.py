"""``magnotia-mcp serve`` (and no command at all): the server on stdin/stdout, or on HTTP with ``--http``.

Both transports serve the one store ``storesource`` opens. The stdio path imports
nothing it does not need before it answers ``initialize`` (tests/e2e/test_startup_imports.py):
HTTP, tokens, the install and doctor modules stay out of it.
"""

from __future__ import annotations

import argparse
import os
import sys

from magnotia_mcp import log
from magnotia_mcp.cli.storesource import NoStoreLocation, served_store


def run(args: argparse.Namespace) -> int:
    """Check serve's options, then serve until the client (or a signal) ends it; 2 on a bad option."""
    call_timeout: float = args.call_timeout
    if not call_timeout > 0:
        log.error("--call-timeout must be a positive number of seconds")
        return 2
    if not _use_time_zone(args.timezone):
        return 2
    _exit_cleanly_on_sigterm()
    if args.http is not None:
        from magnotia_mcp.cli.serve_http import serve_http

        return serve_http(args)
    return _serve_stdio(args.db, args.demo, call_timeout)


def _use_time_zone(flag: str | None) -> bool:
    """Set the zone time words mean (--timezone, else $MAGNOTIA_TZ); False, logged, when it names none."""
    zone, origin = (flag, "--timezone") if flag else (os.environ.get("MAGNOTIA_TZ"), "MAGNOTIA_TZ")
    if not zone:
        return True
    from magnotia_mcp.args.timewords import UnknownZone, use_zone

    try:
        use_zone(zone)
    except UnknownZone as exc:
        log.error(f"{exc} (from {origin})")
        return False
    return True


def _serve_stdio(db: str | None, demo: bool, call_timeout: float) -> int:
    from magnotia_mcp.protocol.methods import new_server
    from magnotia_mcp.transport.stdio.prelude import answer_first_messages, claim_stdout

    out_fd = claim_stdout()  # before the sample store is built: nothing but MCP messages reaches stdout
    try:
        with served_store(db, demo=demo) as store:
            server = new_server(store, call_timeout=call_timeout)  # it closes the store when stdin ends
            stdin_fd = sys.stdin.fileno()
            try:
                leftover = answer_first_messages(server, stdin_fd, out_fd)
                if leftover is None:
                    return 0  # stdin ended before anything needed the loop
                _without_tls()
                import asyncio

                from magnotia_mcp.transport.stdio.loop import serve

                return asyncio.run(serve(server, stdin_fd, out_fd, leftover))
            except KeyboardInterrupt:
                return 0
    except NoStoreLocation as exc:
        log.error(str(exc))
        return 2


def _without_tls() -> None:
    """Keep ssl out of the stdio server: asyncio imports it if it can, and nothing on stdio uses it.

    Loading it (and OpenSSL's libraries) adds about 5 MiB to the server's resident memory, a tenth
    of it. asyncio runs without it (it imports ssl only if it can); ``serve --http`` never comes here.
    """
    if "ssl" not in sys.modules:
        sys.modules["ssl"] = None  # type: ignore[assignment]  # "import ssl" now raises ImportError


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM is how hosts stop a server: exit 0, also before the event loop runs.

    It also matters as PID 1 in a container, where an unhandled SIGTERM is ignored.
    The event loop installs its own handler once it runs (uvicorn too, for HTTP).
    """
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, stop)
