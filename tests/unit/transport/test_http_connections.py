"""connections.peer_of: what a connection counts against when the server must choose one to close."""

from __future__ import annotations

import pytest

from magnotia_mcp.transport.http.connections import peer_of


@pytest.mark.parametrize(
    ("address", "peer"),
    [
        (("127.0.0.1", 50000), "127.0.0.1"),
        (("192.168.1.20", 1), "192.168.1.20"),
        (("::1", 1), "::1"),
        (("2001:db8:1:2:aaaa::1", 1), "2001:db8:1:2::/64"),  # one host usually holds a whole /64
        (("2001:db8:1:2:bbbb::9", 1), "2001:db8:1:2::/64"),
        (("::ffff:10.0.0.7", 1), "10.0.0.7"),  # IPv4 through a dual-stack [::] bind
        (None, ""),
    ],
)
def test_peer_of(address: object, peer: str) -> None:
    assert peer_of(address) == peer
