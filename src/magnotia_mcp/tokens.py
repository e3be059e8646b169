"""How text is cut into tokens: exactly where SQLite's ``unicode61`` tokenizer cuts it.

The scan matches and counts tokens itself (a store without the full-text index),
so its idea of a token must be the index's: separators are, in ASCII, everything
but letters and digits, and above it SQLite's own table (``unicode61``); the
combining marks that ``remove_diacritics 2`` drops are part of a token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from magnotia_mcp.unicode61 import SEPARATORS


def _ranges(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


# What SQLite's unicode61 cuts text at: in ASCII all but letters and digits, above it its own
# table (magnotia_mcp.unicode61); everything else (letters, digits, marks, most emoji...) is
# part of a token, so the scan cuts text exactly where the index does. Lone surrogates (from
# "\\ud800" escapes in JSON) are not text and never reach SQLite: separators too.
# Python's regex engine checks a class of BMP ranges in one step, but goes through a list of
# ranges beyond it one by one: the two halves are kept apart to stay fast.
_BMP_SEPARATORS = [(0x00, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7F), (0xD800, 0xDFFF)] + [
    (a, min(b, 0xFFFF)) for a, b in SEPARATORS if a <= 0xFFFF
]
_ASTRAL_SEPARATORS = [(max(a, 0x10000), b) for a, b in SEPARATORS if b > 0xFFFF]
_ASTRAL_TOKENS = [
    (start, end)
    for start, end in zip(
        [0x10000] + [b + 1 for _, b in _ASTRAL_SEPARATORS],
        [a - 1 for a, _ in _ASTRAL_SEPARATORS] + [0x10FFFF],
        strict=True,
    )
    if start <= end
]
_SEP = "(?:[" + _ranges(_BMP_SEPARATORS) + "]|[" + _ranges(_ASTRAL_SEPARATORS) + "])"
TOKEN_CHAR = "(?:[^" + _ranges(_BMP_SEPARATORS) + "\\U00010000-\\U0010ffff]|[" + _ranges(_ASTRAL_TOKENS) + "])"
# For counting the tokens of long text: astral separators are blanked first (when there are any).
_COUNTED = re.compile("[^" + _ranges(_BMP_SEPARATORS) + "]+")
_ASTRAL = re.compile("[\\U00010000-\\U0010ffff]")
_ASTRAL_SEPARATOR = re.compile("[" + _ranges(_ASTRAL_SEPARATORS) + "]")


def token_count(text: str) -> int:
    """Tokens in text as the index counts them."""
    if _ASTRAL.search(text):
        text = _ASTRAL_SEPARATOR.sub(" ", text)
    return len(_COUNTED.findall(text))


# The combining marks unicode61 (remove_diacritics 2) counts as part of a token and
# then drops, so "e\u0301cole" (decomposed, as macOS often stores it) is the token "ecole".
# Folding keeps them (one character in, one out); patterns step over them.
DROPPED_MARKS = (
    "\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030f"
    "\u0311\u031b\u0323\u0324\u0325\u0326\u0327\u0328\u032d\u032e\u0330\u0331"
)
MARK = "[" + DROPPED_MARKS + "]"
IN_TOKEN = "(?:" + TOKEN_CHAR + "|" + MARK + ")"
SEPARATOR_RUN = _SEP + "+"
TOKEN_RE = re.compile(IN_TOKEN + "+")
MARKS_RE = re.compile(MARK)
