"""Opaque page cursors: the key to continue after, tagged so forgeries are refused.

A cursor is base64url JSON of ``[kind, *key]`` plus a short keyed digest. The
key is fixed, not secret: the digest only proves the server issued the cursor
for this kind of list, so an edited, truncated or foreign cursor gets a clear
error instead of a wrong page. Cursors survive a server restart.
"""

from __future__ import annotations

import json
from typing import Any

from magnotia_mcp.errors import InvalidArguments

_KEY = b"magnotia-mcp cursor v1"
# What each list's key holds, position by position (store.transcripts' pages, store.tasks.TaskKey).
# The tag proves nothing to someone who has read this file, so the key inside a cursor is also
# checked for the shape this server issues: a forged key of any other shape is refused like a
# foreign cursor, never handed to the store (where a list cannot be bound, an integer past 64 bits
# overflows SQLite's, and a string where the task segment is compared with an integer raises).
_SHAPES: dict[str, tuple[type, ...]] = {
    "transcripts": (str, str),
    "resources": (str, str),
    "tasks": (int, int, str, str, str),
    "search": (int, int),  # hits already given, and the limit first asked for
    "inside": (str, int, int),  # the transcript, the last moment given (its seq, or offset), the limit
}
_INT64 = 2**63


def _digest(body: bytes) -> str:
    # hashlib's own blake2b, from the module it comes from: importing hashlib loads OpenSSL too, a MiB of
    # memory for nothing else here. No less portable: hashlib never takes OpenSSL's blake2b, so a Python
    # without _blake2 has no hashlib.blake2b either. Here, not at the top: start-up time is spent before any
    # cursor exists.
    from _blake2 import blake2b

    return blake2b(body, key=_KEY, digest_size=8).hexdigest()


def encode(kind: str, key: tuple[Any, ...]) -> str:
    import base64

    from magnotia_mcp.text import StoredBlob

    # A BLOB where the schema says TEXT is continued after as the BLOB it is: SQLite sorts it after every text.
    values = [{"blob": v.raw.hex()} if isinstance(v, StoredBlob) else v for v in key]
    body = base64.urlsafe_b64encode(json.dumps([kind, *values], separators=(",", ":")).encode()).decode().rstrip("=")
    return f"{body}.{_digest(body.encode())}"


def decode(kind: str, cursor: str, arity: int) -> tuple[Any, ...]:
    """The key inside cursor, or InvalidArguments if this server did not issue it for kind."""
    import base64

    body, _, tag = cursor.partition(".")
    try:
        ok = tag == _digest(body.encode("ascii"))
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))) if ok else None
    except (ValueError, UnicodeError):
        data = None
    if isinstance(data, list):
        data = [_blob(value) for value in data]
    if not isinstance(data, list) or len(data) != arity + 1 or data[0] != kind or not _issued_shape(kind, data[1:]):
        raise InvalidArguments(
            "cursor",
            "is not a cursor this server issued for this list; pass next_cursor exactly as returned, "
            "or omit cursor to start from the first page",
        )
    return tuple(data[1:])


def _blob(value: Any) -> Any:
    """A key's ``{"blob": hex}`` as the bytes it names (bound as a BLOB); any other value as it is."""
    if isinstance(value, dict) and list(value) == ["blob"] and isinstance(value["blob"], str):
        try:
            return bytes.fromhex(value["blob"])
        except ValueError:
            return None  # no shape this server issues
    return value


def _issued_shape(kind: str, key: list[Any]) -> bool:
    """Whether key has the types of a key this server issues for kind (texts, BLOBs and 64-bit integers)."""
    shape = _SHAPES.get(kind)
    if shape is None or len(shape) != len(key):  # a list not in the table: any strings and integers
        shape = tuple(str if isinstance(value, str) else int for value in key)
    for value, expected in zip(key, shape, strict=True):
        if expected is int:
            if not isinstance(value, int) or isinstance(value, bool) or not -_INT64 <= value < _INT64:
                return False
        elif not isinstance(value, (str, bytes)):  # a text, or a BLOB where the schema says TEXT
            return False
    return True
