"""How text is cut into tokens, as SQLite's ``unicode61`` tokenizer cuts it.

The scan matches and counts tokens itself (a store without the full-text index).
Counting is exact: separators are, in ASCII, everything but letters and digits,
and above it SQLite's own table (``unicode61``), so BM25 gets the index's lengths.
Matching uses Python's letters and digits, which agree with unicode61 everywhere
but next to emoji and private-use characters glued to a word (see TOKEN_CHAR).
The combining marks that ``remove_diacritics 2`` drops are part of a token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from magnotia_mcp.search.unicode61 import SEPARATORS


def _ranges(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


# What SQLite's unicode61 cuts text at: in ASCII all but letters and digits, above it its own
# table (magnotia_mcp.search.unicode61); everything else (letters, digits, marks, most emoji...) is
# part of a token. The scan counts tokens with it, so its BM25 statistics (each text's length,
# the average length) are the index's. Lone surrogates are not text: separators too.
# Python's regex engine checks a class of BMP ranges in one step, but goes through a list of
# ranges beyond it one by one: the two halves are kept apart to stay fast.
_BMP_SEPARATORS = [(0x00, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7F), (0xD800, 0xDFFF)] + [
    (a, min(b, 0xFFFF)) for a, b in SEPARATORS if a <= 0xFFFF
]
_ASTRAL_SEPARATORS = [(max(a, 0x10000), b) for a, b in SEPARATORS if b > 0xFFFF]
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
# Matching uses Python's own idea of a letter or digit: a query compiles a handful of
# patterns, and patterns built on the table above cost 10x to compile and to run. The
# two differ only next to characters unicode61 counts as letters and Python does not
# (emoji newer than unicode61's tables, private-use characters glued to a word).
TOKEN_CHAR = r"[^\W_]"
MARK = "[" + DROPPED_MARKS + "]"
IN_TOKEN = "(?:" + TOKEN_CHAR + "|" + MARK + ")"
SEPARATOR_RUN = "(?:_|[^\\w" + DROPPED_MARKS + "])+"
TOKEN_RE = re.compile(IN_TOKEN + "+")
MARKS_RE = re.compile(MARK)
