"""``--http [HOST:]PORT`` and which hosts count as loopback (where --no-auth and the Host check apply)."""

from __future__ import annotations

import pytest

from magnotia_mcp.transport.http.guard import is_loopback
from magnotia_mcp.transport.http.serving import parse_bind


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("8765", ("127.0.0.1", 8765)),
        ("0", ("127.0.0.1", 0)),
        ("0.0.0.0:8765", ("0.0.0.0", 8765)),
        ("[::1]:9000", ("::1", 9000)),
        (":8765", ("127.0.0.1", 8765)),
    ],
)
def test_bind_addresses(value: str, expected: tuple[str, int]) -> None:
    assert parse_bind(value) == expected


@pytest.mark.parametrize("value", ["", "http", "host:port", "127.0.0.1:70000", "-1"])
def test_bad_bind_addresses(value: str) -> None:
    with pytest.raises(ValueError, match="HOST"):
        parse_bind(value)


def test_loopback() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "192.168.1.2", "example.com"))
