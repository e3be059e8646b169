"""Minimal logging to stderr (stdout belongs to the protocol).

Not the stdlib ``logging`` package: importing it costs start-up time before
the first answer, and one stream with one format is all a stdio server needs.
"""

from __future__ import annotations

import sys

LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}
_threshold = LEVELS["info"]


def set_level(name: str) -> None:
    global _threshold
    _threshold = LEVELS[name]


def _emit(level: str, message: str) -> None:
    if LEVELS[level] >= _threshold:
        try:
            sys.stderr.write(f"magnotia-mcp {level}: {message}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # no stderr to write to: keep serving


def debug(message: str) -> None:
    _emit("debug", message)


def info(message: str) -> None:
    _emit("info", message)


def warning(message: str) -> None:
    _emit("warning", message)


def error(message: str) -> None:
    _emit("error", message)
