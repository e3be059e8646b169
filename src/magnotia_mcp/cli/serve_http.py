"""``magnotia-mcp serve --http``: the HTTP transport's settings checked, then the same store as stdio served.

Imported only with --http: uvicorn (the optional ``http`` extra) and the token
files stay off the stdio path.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from magnotia_mcp import log
from magnotia_mcp.cli.storesource import NoStoreLocation, served_store

if TYPE_CHECKING:
    from magnotia_mcp.protocol.server import Server
    from magnotia_mcp.transport.http.serving import Settings


class Unusable(Exception):
    """An option serve --http cannot use; the message says why and what to do."""


def serve_http(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or SIGINT (exit 0); 2, with one line on stderr, when an option cannot be used."""
    try:
        from magnotia_mcp.transport.http import serving as http
    except ImportError as exc:  # uvicorn missing
        if getattr(sys, "frozen", False):  # an executable built without it (packaging/magnotia-mcp.spec --no-http)
            log.error(
                "this executable was built without serve --http; for HTTP use the Python package"
                " (pip install 'magnotia-mcp[http]') or the container image"
            )
        else:
            log.error(f"--http needs the optional dependency: pip install 'magnotia-mcp[http]' ({exc})")
        return 2
    from magnotia_mcp.protocol.methods import new_server

    call_timeout: float = args.call_timeout
    try:
        settings = _settings(args)
        with served_store(args.db, demo=args.demo) as store:
            # A Server per request, every one reading this one store, which is closed once, at exit.
            def per_request(legacy: str | None) -> Server:
                return new_server(store, call_timeout=call_timeout, legacy_revision=legacy)

            return int(http.run(per_request, settings, store.close))
    except (Unusable, NoStoreLocation) as exc:
        log.error(str(exc))
        return 2


def _settings(args: argparse.Namespace) -> Settings:
    """What the transport is told: bind address, token and limits."""
    from magnotia_mcp.transport.http import serving as http

    try:
        host, port = http.parse_bind(args.http)
    except ValueError as exc:
        raise Unusable(f"--http: {exc}") from None
    token = _token(args.no_auth, args.token_file, host)
    if not args.request_timeout > 0:
        raise Unusable("--request-timeout must be a positive number of seconds")
    if args.max_connections < 1:
        raise Unusable("--max-connections must be at least 1")
    return http.Settings(
        host=host,
        port=port,
        token=token,
        allow_origins=list(args.allow_origin),
        allow_hosts=list(args.allow_host),
        request_timeout=args.request_timeout,
        max_connections=args.max_connections,
    )


def _token(no_auth: bool, token_file: str | None, host: str) -> str | None:
    """The bearer token requests must carry; None with --no-auth, which only a loopback host may use."""
    from magnotia_mcp.transport.http.bearer import TokenError, load_token
    from magnotia_mcp.transport.http.guard import is_loopback

    if no_auth:
        if not is_loopback(host):
            raise Unusable(
                f"--no-auth is refused on {host}: only a loopback address (127.0.0.1, ::1) may go without a token"
            )
        log.warning("--no-auth: any local process may call this server")
        return None
    try:
        token, source, created = load_token(token_file)
    except TokenError as exc:
        raise Unusable(str(exc)) from None
    if source.startswith("$") or source == token_file:
        log.info(f"bearer token from {source}")
    else:
        # The token itself is never logged: hosts keep servers' stderr in log files.
        log.info(
            f"bearer token ({'new, ' if created else ''}kept in {source}); "
            "`magnotia-mcp doctor` shows it and the header to configure"
        )
    return token
