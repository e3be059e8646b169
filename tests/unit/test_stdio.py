"""magnotia_mcp.stdio: cutting the input stream into bounded lines."""

from __future__ import annotations

from magnotia_mcp.stdio import MAX_LINE_BYTES, LineSplitter


def test_line_splitter_reassembles_lines_split_across_chunks() -> None:
    """Lines come out whole whatever the chunk boundaries; a final unterminated line comes from finish()."""
    data = b'{"a":1}\n\n{"b":2}\r\n{"c":3}'
    for size in (1, 2, 3, 7, len(data)):
        splitter = LineSplitter()
        out: list[bytes | None] = []
        for i in range(0, len(data), size):
            out += splitter.feed(data[i : i + size])
        assert out == [b'{"a":1}', b"", b'{"b":2}\r']
        assert splitter.finish() == b'{"c":3}'


def test_line_splitter_drops_an_over_long_line_once_and_goes_on() -> None:
    """A line over the limit yields exactly one None, is never buffered whole, and the next line is intact."""
    splitter = LineSplitter(limit=10)
    out: list[bytes | None] = []
    for chunk in (b"ok\n0123", b"456789ABCDEF", b"GHIJ", b"KL\nnext\n"):
        out += splitter.feed(chunk)
        assert len(splitter._buf) <= 10
    assert out == [b"ok", None, b"next"]
    at_limit = LineSplitter(limit=10)
    assert at_limit.feed(b"0123456789\n01234567890\n") == [b"0123456789", None]
    assert LineSplitter().limit == MAX_LINE_BYTES == 8 * 1024 * 1024


def test_an_over_long_unterminated_tail_is_not_a_line() -> None:
    """A stream that ends inside an over-long line gives one None and nothing from finish()."""
    splitter = LineSplitter(limit=4)
    assert splitter.feed(b"0123456789") == [None]
    assert splitter.finish() is None
    assert LineSplitter().finish() is None
