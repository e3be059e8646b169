"""The 3-byte characters both real tokenizers take as one token: the estimate's ``CHEAP`` (tokencost.py).

Counts every character of the CJK, Hangul and full-width blocks alone with OpenAI's o200k_base and
Anthropic's legacy Claude tokenizer (tests/tokencount, via npm) and prints those that cost one token in both,
as the Python lines to paste into ``CHEAP``. tests/e2e/test_budget_tokenizers.py checks the list against the
pinned tokenizers.

Usage: ``PYTHONPATH=src:. python devkit/cheap_characters.py``
"""

from __future__ import annotations

import sys
import unicodedata

from tests.support import tokencount

# Where 3-byte characters a store holds: punctuation (’ “ ” … —) and symbols; CJK symbols, kana, ideographs; Hangul
# syllables; compatibility ideographs; half- and full-width forms.
BLOCKS = ((0x2000, 0x2C00), (0x3000, 0xA000), (0xAC00, 0xD7A4), (0xF900, 0xFB00), (0xFF00, 0xFFF0))
LINE = 55  # characters a line: two columns each, within the line length


def cheap() -> str:
    """Every character of BLOCKS that both tokenizers encode as one token, in code point order."""
    chars = [chr(c) for start, end in BLOCKS for c in range(start, end)]
    return "".join(ch for ch, pair in zip(chars, tokencount.counts(chars), strict=True) if max(pair) == 1)


def _shown(ch: str) -> str:
    """ch as written in Python source: invisible ones (spaces, controls, marks) as escapes."""
    return f"\\u{ord(ch):04x}" if unicodedata.category(ch)[0] in "CZM" else ch


def main() -> int:
    reason = tokencount.missing()
    if reason:
        print(f"cannot count: {reason}", file=sys.stderr)
        return 2
    found = cheap()
    print("CHEAP = (")
    for at in range(0, len(found), LINE):
        print(f'    "{"".join(map(_shown, found[at : at + LINE]))}"')
    print(")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
