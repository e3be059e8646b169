"""Folding text the way SQLite's unicode61 tokenizer does: case folded, Latin diacritics removed.

The scan matches folded text, so it matches what the full-text index matches;
folding keeps every offset, so a snippet cut from folded text marks the original.
"""

from __future__ import annotations

import codecs
import unicodedata
from functools import lru_cache

from magnotia_mcp.search.tokens import DROPPED_MARKS

# unicode61 removes diacritics from Latin letters only (not Greek tonos, not Arabic hamza).
_LATIN_END = 0x250


class _FoldTable(dict[int, str]):
    """str.translate table folding case and Latin diacritics one character at a time.

    Each character maps to exactly one character, so offsets in the folded text
    are offsets in the original, which the snippet needs. It follows SQLite's
    unicode61 tokenizer, so a scan matches what the full-text index matches.
    """

    def __missing__(self, code: int) -> str:
        char = chr(code)
        # Case folding, as unicode61 does it, not lower-casing: "ς", "µ", "ſ", "ϐ" are "σ", "μ", "s", "β"
        # (Python's casefold is the full folding: where it is longer, "ß" -> "ss", lower-case instead).
        # Only below the table's end, so that fold's fast path (lower, then the table) agrees.
        lower = char.casefold() if code < _LATIN_BLOCKS_END else char.lower()
        if len(lower) != 1:
            lower = char.lower()
        if len(lower) != 1:
            lower = char
        folded = lower
        decomposed = unicodedata.normalize("NFD", lower)
        base, marks = decomposed[0], decomposed[1:]
        if marks and ord(base) < _LATIN_END and all(m in DROPPED_MARKS for m in marks):
            base_lower = base.lower()  # "İ" is "I" + dot above: its base still needs lower-casing
            folded = base_lower if len(base_lower) == 1 else base
        self[code] = folded
        return folded


_FOLD = _FoldTable()


# Every character whose diacritics unicode61 strips decomposes to a Latin base, and
# lives below U+2200 (checked by a unit test): the table covers them all.
_LATIN_BLOCKS_END = 0x2200


@lru_cache(maxsize=1)
def _latin_table() -> str:
    """str.translate table (indexed by code point) stripping diacritics from lower-case text."""
    return "".join(_FOLD[code] for code in range(_LATIN_BLOCKS_END))


def fold(text: str) -> str:
    """Lower-case and strip diacritics, keeping the length (and so every offset)."""
    if text.isascii():
        return text.lower()
    low = text.lower()
    if len(low) != len(text) or "\u03a3" in text:
        # A character whose lower case is longer (e.g. "İ"), or a capital sigma, which
        # str.lower() turns into a final sigma by context: fold character by character.
        return text.translate(_FOLD)
    # Fast path: lower() in C, then a table lookup for each run of non-ASCII characters only:
    # the ASCII encoder (in C) hands them to _fold_run, its error handler, which gives their
    # folded text back as UTF-8 (str.translate would visit every character in Python's slow
    # path, about 100 ns each, and a transcript is mostly ASCII). Past the table: unchanged.
    return low.encode("ascii", _HANDLER).decode("utf-8", "surrogatepass")


def _fold_run(exc: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    run = exc.object[exc.start : exc.end].translate(_latin_table())
    return run.encode("utf-8", "surrogatepass"), exc.end


_HANDLER = "magnotia-fold"
codecs.register_error(_HANDLER, _fold_run)
