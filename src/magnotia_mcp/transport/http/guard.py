"""What every request passes before its body is read: Host, Origin, path, no credential in the URL, the token.

Host and Origin (DNS-rebinding protection): on a loopback bind the server answers only to
the names a local client uses for it:
``localhost``, ``127.0.0.1``, ``::1`` and the address it is bound to (``127.0.0.2``, say), an
address in any of its textual forms (``[0:0:0:0:0:0:0:1]`` is ``[::1]``), with this server's
port or none, plus ``--allow-host`` names. A page that DNS rebinding points at the server
carries its own name in ``Host``, never one of these. On other binds ``Host`` is checked only
when ``--allow-host`` is given. ``Origin``, when present, must be this server's own
``http://`` origin (on a loopback bind) or an ``--allow-origin`` value.

A credential in the query string is refused (URLs end up in logs); the bearer token is
compared in constant time.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from urllib.parse import parse_qsl

PATH = "/mcp"
# Query parameters that would carry a credential: refused, as URLs end up in logs.
TOKEN_PARAMS = frozenset({"token", "access_token", "auth", "authorization", "api_key", "key", "bearer"})

LOOPBACK_ADDRESSES = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_authority(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` (an IPv6 address in brackets) as (host, port or None); None if it is neither."""
    if value.startswith("["):
        host, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        host, colon, port_text_ = value.partition(":")
        port_text = port_text_ if colon else None
    if port_text is None:
        return host, None
    if not port_text.isdigit() or not port_text.isascii() or len(port_text) > 5:
        return None
    return host, int(port_text)


def _address(host: str) -> Address | None:
    if "%" in host:
        return None  # a zone (scope) id: no loopback address has one
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class HostCheck:
    """The Host and Origin checks of one server, bound to host:port."""

    def __init__(self, host: str, port: int, allow_hosts: list[str], allow_origins: list[str]) -> None:
        self.port = port
        self.loopback = is_loopback(host)
        bound = _address(host.strip("[]"))
        self.own: set[Address] = set(LOOPBACK_ADDRESSES) | ({bound} if bound is not None else set())
        hosts = {h.lower() for h in allow_hosts}
        hosts |= {f"{h}:{port}" for h in hosts if (parts := split_authority(h)) is not None and parts[1] is None}
        self.allow_hosts = hosts
        self.allow_origins = {o.rstrip("/").lower() for o in allow_origins}

    def own_authority(self, value: str, *, port_required: bool) -> bool:
        """Whether value names this loopback server: a loopback name or its own address, and its port."""
        parts = split_authority(value.lower())
        if parts is None:
            return False
        host, port = parts
        if port is None and port_required and self.port != 80:
            return False
        if port is not None and port != self.port:
            return False
        return host == "localhost" or _address(host) in self.own

    def host_ok(self, value: str) -> bool:
        value = value.lower()
        if value in self.allow_hosts:
            return True
        if self.loopback:
            return self.own_authority(value, port_required=False)
        return not self.allow_hosts  # another bind: checked only when told the names

    def origin_ok(self, value: str) -> bool:
        origin = value.rstrip("/").lower()
        if origin in self.allow_origins:
            return True
        scheme, sep, authority = origin.partition("://")
        return self.loopback and bool(sep) and scheme == "http" and self.own_authority(authority, port_required=True)


class Guard:
    """The checks of one server, bound to host:port, with the token requests must carry (None: --no-auth)."""

    def __init__(
        self, host: str, port: int, allow_hosts: list[str], allow_origins: list[str], token: str | None
    ) -> None:
        self.hosts = HostCheck(host, port, allow_hosts, allow_origins)
        self.token = token.encode() if token is not None else None

    def refuse(self, path: str, query: bytes, headers: Mapping[str, str]) -> tuple[int, bytes]:
        """The status (0: none) and reason refusing a request before its body is read."""
        if not self.hosts.host_ok(headers.get("host", "")):
            return 403, b"Host not allowed (DNS-rebinding protection; see --allow-host)"
        origin = headers.get("origin")
        if origin is not None and not self.hosts.origin_ok(origin):
            return 403, b"Origin not allowed (see --allow-origin)"
        if path != PATH:
            return 404, b"not found: the MCP endpoint is /mcp"
        pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
        if any(k.lower() in TOKEN_PARAMS for k, _ in pairs):
            return 400, b' error="invalid_request", a credential in the URL is refused: send Authorization: Bearer'
        if self.token is not None:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token):
                return 401, b' error="invalid_token"' if given else b""
        return 0, b""
