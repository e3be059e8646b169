"""Text for a model: stored values shown as text, list previews, windows that rebuild the whole, readable results."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from typing import Any


class StoredBlob(str):
    """A BLOB where the schema says TEXT (a broken writer's): shown as its bytes decoded, ordered as SQLite does.

    The value is shown and serialized as a str, while ``raw`` keeps the bytes a page's cursor must compare
    with (``args.cursors``), and ordering follows SQLite's: every text before every BLOB, BLOBs by their
    bytes. Before it, one such ``created_at`` failed every list that held it (bytes are not JSON).
    """

    raw: bytes

    def __new__(cls, raw: bytes) -> StoredBlob:
        shown = super().__new__(cls, raw.decode("utf-8", "replace"))
        shown.raw = raw
        return shown

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoredBlob) and self.raw == other.raw

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.raw)

    def __lt__(self, other: str) -> bool:
        return isinstance(other, StoredBlob) and self.raw < other.raw

    def __le__(self, other: str) -> bool:
        return isinstance(other, StoredBlob) and self.raw <= other.raw

    def __gt__(self, other: str) -> bool:
        return not isinstance(other, StoredBlob) or self.raw > other.raw

    def __ge__(self, other: str) -> bool:
        return not isinstance(other, StoredBlob) or self.raw >= other.raw


def stored_text(value: Any) -> Any:
    """A column's value with a BLOB read as StoredBlob; anything else as it is."""
    return StoredBlob(value) if isinstance(value, bytes) else value


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


def _readable_encoder() -> Callable[[object], str]:
    """Compact-but-spaced JSON for one value.

    ``JSONEncoder.encode`` hands a whole value to the C encoder in one call (its
    one-shot path), so this is as fast as calling that encoder directly.
    """
    return json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


_READABLE = _readable_encoder()


_SCALARS = (str, int, float, bool, type(None))


def item_line(item: object) -> str:
    """One item of a listed field as result_text writes it on its own line (without the comma)."""
    return "    " + _READABLE(item)


def result_text(result: dict[str, Any]) -> str:
    """A tool result as readable JSON for the model: one field per line, one list item per line.

    Like pretty-printed JSON but without an indented line per leaf value: a page of
    100 transcripts stays 100 lines (fewer tokens for the model), a list of names
    one line, and each piece is one call into the C encoder, several times faster
    than ``json.dumps(indent=2)``.
    """
    encode = _READABLE
    lines = ["{"]
    last = len(result) - 1
    # A page whose lines were made to count them (budget.Answer) is not encoded again.
    made: tuple[str, list[str]] | None = getattr(result, "page", None)
    for i, (key, value) in enumerate(result.items()):
        comma = "," if i < last else ""
        if isinstance(value, list) and value and not all(isinstance(v, _SCALARS) for v in value):
            lines.append(f"  {encode(key)}: [")
            done = made[1] if made is not None and made[0] == key and len(made[1]) == len(value) else None
            lines.append(",\n".join(done if done is not None else map(item_line, value)))
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {encode(key)}: {encode(value)}{comma}")
    lines.append("}")
    return "\n".join(lines)
