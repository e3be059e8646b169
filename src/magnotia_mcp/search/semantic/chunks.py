"""A transcript cut into the pieces that are embedded: its title, and windows of what was said.

A window is consecutive segments up to about ``WORDS`` words, so that a hit can cite the moment
(``start_ms``, ``end_ms``) and who spoke most in it. A segment longer than a window is cut by
words, each piece keeping its segment's times. A transcript without segments (a dictation the app
stored as text only) is cut by words, without times. Pure functions: no numpy, no SQL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

WORDS = 30  # about 10 seconds of speech: one thought; a mean of tokens over more dilutes it (static models)
TITLE, SPOKEN, TEXT = 0, 1, 2  # the kinds of chunk


class Segment(NamedTuple):
    seq: int
    start_ms: int
    end_ms: int
    speaker: str | None
    text: str


def segment(seq: int, start_ms: int | None, end_ms: int | None, speaker: str | None, text: str | None) -> Segment:
    """A segment as the store's row has it (its NULLs read as nothing said, at 0 ms)."""
    return Segment(seq, start_ms or 0, end_ms or 0, speaker, text or "")


class Chunk(NamedTuple):
    kind: int
    text: str
    first_seq: int | None = None
    last_seq: int | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    speaker: str | None = None


def _pieces(words: list[str]) -> Iterable[str]:
    for i in range(0, len(words), WORDS):
        yield " ".join(words[i : i + WORDS])


def piece(text: str, k: int) -> str:
    """The k-th window of a transcript without segments, as ``chunks`` cut its text; empty past its end."""
    words = text.split()
    return " ".join(words[k * WORDS : (k + 1) * WORDS]) if k >= 0 else ""


def _window(kind: int, parts: list[tuple[Segment, str]]) -> Chunk:
    said: Counter[str] = Counter()
    for segment, text in parts:
        if segment.speaker:
            said[segment.speaker] += len(text.split())
    speaker = said.most_common(1)[0][0] if said else None
    first, last = parts[0][0], parts[-1][0]
    text = " ".join(text for _, text in parts)
    return Chunk(kind, text, first.seq, last.seq, first.start_ms, last.end_ms, speaker)


def chunks(title: str, text: str, segments: Sequence[Segment]) -> list[Chunk]:
    """The chunks of one transcript, in spoken order after its title; none for a transcript with no words."""
    out: list[Chunk] = []
    if title.strip():
        out.append(Chunk(TITLE, " ".join(title.split())))
    spoken = [s for s in segments if s.text and s.text.strip()]
    if not spoken:
        out.extend(Chunk(TEXT, piece) for piece in _pieces(text.split()))
        return out
    window: list[tuple[Segment, str]] = []
    count = 0
    for segment in spoken:
        for piece in _pieces(segment.text.split()):
            size = len(piece.split())
            if window and count + size > WORDS:
                out.append(_window(SPOKEN, window))
                window, count = [], 0
            window.append((segment, piece))
            count += size
    if window:
        out.append(_window(SPOKEN, window))
    return out
