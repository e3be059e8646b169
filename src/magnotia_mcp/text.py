"""Cutting long text for a model: list previews and windows that rebuild the whole."""

from __future__ import annotations

import unicodedata

PREVIEW_CHARS = 200
ELLIPSIS = "…"

# Characters that belong to the character before them: combining marks,
# variation selectors and joiners, and emoji skin-tone modifiers.
_JOINERS = frozenset({"\u200d", "\u200c", "\u034f"})


def _extends_previous(char: str) -> bool:
    if char in _JOINERS or "\ufe00" <= char <= "\ufe0f" or "\U0001f3fb" <= char <= "\U0001f3ff":
        return True
    if "\U000e0100" <= char <= "\U000e01ef":
        return True
    return unicodedata.category(char) in ("Mn", "Mc", "Me")


def _safe_cut(text: str, cut: int) -> int:
    """Move cut back so it does not separate a base from its marks or a joined sequence."""
    while 0 < cut < len(text) and (_extends_previous(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    return cut


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of text, whitespace folded, at most limit characters, ``…`` when cut."""
    # Fold a window a little larger than the limit, widening it only when runs of
    # whitespace folded it below the limit while more text remains.
    window = limit * 2
    flat = " ".join(text[:window].split())
    while len(flat) <= limit and len(text) > window:
        window *= 2
        flat = " ".join(text[:window].split())
    if len(flat) <= limit:
        return flat
    room = limit - len(ELLIPSIS)
    cut = flat.rfind(" ", 0, room + 1)
    if cut <= 0:
        cut = _safe_cut(flat, room) or room
    return flat[:cut].rstrip() + ELLIPSIS


def window_end(text: str, offset: int, max_chars: int) -> int:
    """Where a window of at most max_chars starting at offset ends, on a safe boundary."""
    end = min(len(text), offset + max_chars)
    if end >= len(text):
        return len(text)
    safe = _safe_cut(text, end)
    if safe > offset:
        return safe
    # A single cluster longer than the window: go past it rather than split it.
    while end < len(text) and (_extends_previous(text[end]) or text[end - 1] == "\u200d"):
        end += 1
    return end
