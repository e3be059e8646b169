"""Which ``Host`` and ``Origin`` headers ``serve --http`` answers (DNS-rebinding protection).

On a loopback bind the server answers only to the names a local client uses for it:
``localhost``, ``127.0.0.1``, ``::1`` and the address it is bound to (``127.0.0.2``, say), an
address in any of its textual forms (``[0:0:0:0:0:0:0:1]`` is ``[::1]``), with this server's
port or none, plus ``--allow-host`` names. A page that DNS rebinding points at the server
carries its own name in ``Host``, never one of these. On other binds ``Host`` is checked only
when ``--allow-host`` is given. ``Origin``, when present, must be this server's own
``http://`` origin (on a loopback bind) or an ``--allow-origin`` value.
"""

from __future__ import annotations

import ipaddress

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
