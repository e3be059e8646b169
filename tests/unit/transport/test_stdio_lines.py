"""magnotia_mcp.transport.stdio.lines: cutting the input stream into bounded lines, and writing whole lines out."""

from __future__ import annotations

import os
import threading

from magnotia_mcp.transport.limits import MAX_LINE_BYTES
from magnotia_mcp.transport.stdio.lines import LineSplitter, LineWriter


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
    assert LineSplitter().limit == MAX_LINE_BYTES == 1024 * 1024


def test_an_over_long_unterminated_tail_is_not_a_line() -> None:
    """A stream that ends inside an over-long line gives one None and nothing from finish()."""
    splitter = LineSplitter(limit=4)
    assert splitter.feed(b"0123456789") == [None]
    assert splitter.finish() is None
    assert LineSplitter().finish() is None


def test_line_writer_writes_a_line_larger_than_the_pipe_whole_with_its_newline() -> None:
    """A line bigger than a pipe's buffer goes out complete, in order, followed by exactly one newline."""
    read_fd, write_fd = os.pipe()
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_fd, 1 << 16):
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        writer = LineWriter(write_fd)
        line = bytes(range(256)).replace(b"\n", b" ") * 4096  # 1 MiB
        writer.send(line)
        writer.send(b"{}")
    finally:
        os.close(write_fd)
        reader.join(timeout=30)
        os.close(read_fd)
    assert bytes(received) == line + b"\n{}\n"
    assert writer.closed is False


def test_line_writer_stops_quietly_once_nobody_reads() -> None:
    """With the reading end gone, send marks the writer closed instead of raising, and later sends do nothing."""
    read_fd, write_fd = os.pipe()
    os.close(read_fd)
    try:
        writer = LineWriter(write_fd)
        writer.send(b"{}")
        assert writer.closed is True
        writer.send(b"{}")
        assert writer.closed is True
    finally:
        os.close(write_fd)


def test_line_writer_on_a_non_blocking_fd_keeps_what_the_pipe_does_not_take_in_order_until_flushed() -> None:
    """A full pipe never blocks send: the rest waits (counted in buffered), later lines queue behind it, flush
    writes as the pipe empties, and the reader gets every byte once, in order."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    os.set_blocking(read_fd, False)
    try:
        writer = LineWriter(write_fd)
        big = bytes(range(256)).replace(b"\n", b" ") * 4096  # 1 MiB: far more than a pipe holds
        writer.send(big)
        assert 0 < writer.buffered < len(big) + 1
        writer.send(b"{}")
        writer.send(b"")
        assert writer.buffered > len(b"{}\n\n")
        received = bytearray()
        flushes = 0
        while writer.buffered:
            received += os.read(read_fd, 1 << 16)
            writer.flush()
            flushes += 1
        received += os.read(read_fd, 1 << 20)
        assert flushes > 1
        assert bytes(received) == big + b"\n{}\n\n"
        assert writer.closed is False
    finally:
        os.close(write_fd)
        os.close(read_fd)


def test_line_writer_with_bytes_waiting_gives_them_up_when_the_reader_goes() -> None:
    """The reader leaves while a line waits: the next flush marks the writer closed and drops what nobody will read."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        writer = LineWriter(write_fd)
        writer.send(b"x" * (1 << 20))
        assert writer.buffered > 0
        os.close(read_fd)
        writer.flush()
        assert writer.closed is True
        assert writer.buffered == 0
        writer.send(b"{}")
        assert writer.buffered == 0
    finally:
        os.close(write_fd)
