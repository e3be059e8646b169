"""guard.HostCheck: which Host and Origin values a server answers, by bind address."""

from __future__ import annotations

import pytest

from magnotia_mcp.transport.http.guard import HostCheck, split_authority


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("127.0.0.1:8765", ("127.0.0.1", 8765)),
        ("localhost", ("localhost", None)),
        ("[::1]:80", ("::1", 80)),
        ("[0:0:0:0:0:0:0:1]", ("0:0:0:0:0:0:0:1", None)),
        ("[::1]x", None),
        ("[::1", None),
        ("::1", None),
        ("host:port", None),
        ("host:123456", None),
    ],
)
def test_split_authority(value: str, expected: tuple[str, int | None] | None) -> None:
    assert split_authority(value) == expected


def test_a_loopback_bind_answers_its_names_and_its_own_address() -> None:
    check = HostCheck("127.0.0.2", 8765, [], [])
    for host in ("127.0.0.2:8765", "127.0.0.2", "127.0.0.1:8765", "localhost", "LOCALHOST:8765", "[::1]:8765"):
        assert check.host_ok(host), host
    for host in ("127.0.0.3:8765", "127.0.0.2:8766", "evil.example:8765", "", "[::1%lo]:8765", "127.0.0.2.evil:8765"):
        assert not check.host_ok(host), host
    assert check.origin_ok("http://127.0.0.2:8765")
    assert check.origin_ok("http://[0::1]:8765/")
    assert not check.origin_ok("http://127.0.0.2")  # an origin names its port (but for 80)
    assert not check.origin_ok("https://127.0.0.2:8765")
    assert not check.origin_ok("http://evil.example:8765")


def test_the_long_forms_of_ipv6_loopback() -> None:
    check = HostCheck("::1", 9000, [], [])
    for host in ("[::1]:9000", "[0:0:0:0:0:0:0:1]:9000", "[0000::0001]", "[::0:1]:9000", "[::1]"):
        assert check.host_ok(host), host
    assert not check.host_ok("[::2]:9000")


def test_other_binds_check_host_only_when_told_names() -> None:
    assert HostCheck("0.0.0.0", 8765, [], []).host_ok("anything.example:8765")
    told = HostCheck("0.0.0.0", 8765, ["mcp.internal"], ["https://app.example"])
    assert told.host_ok("mcp.internal:8765")
    assert told.host_ok("MCP.internal")
    assert not told.host_ok("127.0.0.1:8765")
    assert told.origin_ok("https://app.example/")
    assert not told.origin_ok("http://127.0.0.1:8765")
