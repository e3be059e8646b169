"""throttle.Throttle: each kind's first line, then counts; nothing is lost from the count."""

from __future__ import annotations

import re

import pytest

from magnotia_mcp.transport.http.throttle import Throttle


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def told(lines: list[str], text: str) -> int:
    """How many occurrences of text the lines account for: 1 per plain line, N per "(and N more like it)"."""
    total = 0
    for line in lines:
        if text in line:
            more = re.search(r"\(and (\d+) more like it\)", line)
            total += int(more.group(1)) if more else 1
    return total


def test_a_burst_is_one_line_then_one_count(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    throttle = Throttle(every=60.0, clock=clock)
    for _ in range(1000):
        throttle.note("bad", "bad request")
    throttle.note("other", "another thing")
    throttle.flush()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3, lines
    assert told(lines, "bad request") == 1000
    assert told(lines, "another thing") == 1


def test_steady_abuse_is_one_line_per_window_and_the_count_adds_up(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    throttle = Throttle(every=60.0, clock=clock)
    for n in range(600):  # ten windows, one occurrence a second
        clock.now = float(n)
        throttle.note("bad", "bad request")
    throttle.flush()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) <= 11, lines
    assert told(lines, "bad request") == 600


def test_after_a_quiet_window_the_next_one_is_written_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    throttle = Throttle(every=60.0, clock=clock)
    throttle.note("bad", "bad request")
    clock.now = 61.0
    throttle.note("bad", "bad request")
    throttle.flush()
    assert capsys.readouterr().err.splitlines() == ["magnotia-mcp warning: bad request"] * 2
