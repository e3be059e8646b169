"""Log lines under abuse: the first of a kind is written, the rest are counted and told at most once a minute.

A client that sends garbage, or floods the server with connections, would otherwise write one
line per attempt on stderr (uvicorn warns on every malformed request): the log would grow as
fast as the attacker can send. Here each kind of message is written once, then held back; one
line per ``every`` seconds (and one at exit) says how many more there were. Used only by
``serve --http``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from magnotia_mcp import log

EVERY = 60.0  # seconds: at most one line per kind in this time (the first one, or a count)
# uvicorn's advice after "Unsupported upgrade request." is wrong here: websockets are off on purpose.
IGNORED = ("No supported WebSocket library detected",)


@dataclass
class _Kind:
    level: str
    line: str
    shown_at: float
    held: int = 0


class Throttle:
    """Writes through ``log``: each kind's first line, then a count of what was held back."""

    def __init__(self, every: float = EVERY, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self.kinds: dict[str, _Kind] = {}
        self.timer: asyncio.TimerHandle | None = None

    def note(self, kind: str, line: str, level: str = "warning") -> None:
        """One occurrence of kind; line is what to write for it (the latest one is kept for the count)."""
        now = self.clock()
        state = self.kinds.get(kind)
        if state is None:
            self.kinds[kind] = _Kind(level, line, now)
            _write(level, line)
            return
        state.line = line
        if now - state.shown_at >= self.every:
            if not state.held:
                state.shown_at = now
                _write(level, line)
                return
            self.tell(state, now)  # the count so far; this one starts the next count
        state.held += 1
        self.schedule(state.shown_at + self.every - now)

    def schedule(self, delay: float) -> None:
        if self.timer is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (at exit): flush() tells the count
        self.timer = loop.call_later(max(delay, 0.0), self.tick)

    def tick(self) -> None:
        self.timer = None
        now = self.clock()
        for state in self.kinds.values():
            if state.held and now - state.shown_at >= self.every:
                self.tell(state, now)
        waiting = [s.shown_at + self.every - now for s in self.kinds.values() if s.held]
        if waiting:
            self.schedule(min(waiting))

    def flush(self) -> None:
        """Tell every count still held back (at exit)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        now = self.clock()
        for state in self.kinds.values():
            if state.held:
                self.tell(state, now)

    @staticmethod
    def tell(state: _Kind, now: float) -> None:
        _write(state.level, f"{state.line} (and {state.held} more like it)")
        state.held = 0
        state.shown_at = now


def _write(level: str, line: str) -> None:
    {"debug": log.debug, "info": log.info, "warning": log.warning, "error": log.error}[level](line)


class ThrottledHandler(logging.Handler):
    """A logging handler (for uvicorn's and asyncio's loggers) that writes through a Throttle.

    The kind is the message's format string, so "Invalid HTTP request received." is one kind
    however often it comes. An exception's traceback is written whole the first time only,
    then as one line.
    """

    def __init__(self, throttle: Throttle) -> None:
        super().__init__(logging.WARNING)
        self.throttle = throttle
        self.traced: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if str(record.msg).startswith(IGNORED):
                return
            kind = f"{record.name}:{record.msg}"
            line = record.getMessage().strip()
            if record.exc_info and record.exc_info[1] is not None:
                exc = record.exc_info[1]
                if kind in self.traced:
                    line = f"{line}: {type(exc).__name__}: {exc}"
                else:
                    self.traced.add(kind)
                    line = f"{line}\n{logging.Formatter().formatException(record.exc_info)}"
            level = "error" if record.levelno >= logging.ERROR else "warning"
            self.throttle.note(kind, line, level)
        except Exception:  # a logging failure must not break serving
            self.handleError(record)


def route(throttle: Throttle, names: tuple[str, ...] = ("uvicorn", "asyncio")) -> Callable[[], None]:
    """Send the named loggers' warnings and errors through throttle (not Python's last-resort handler).

    Returns a function that undoes it.
    """
    handler = ThrottledHandler(throttle)
    saved = []
    for name in names:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.addHandler(handler)
        logger.propagate = False

    def undo() -> None:
        for logger, propagate in saved:
            logger.removeHandler(handler)
            logger.propagate = propagate

    return undo
