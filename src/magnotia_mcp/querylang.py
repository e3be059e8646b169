"""The search query language, shared by the full-text index and the scan.

One parse feeds both paths, so a query means the same with or without the
store's ``*_fts`` tables:

* words are all required (AND), in any order, case- and accent-insensitive;
* ``"a quoted phrase"`` must appear as written (one column, words in order);
* a word ending in ``*`` matches as a prefix;
* ``OR`` between two terms accepts either; anywhere else it is the word "or".

Everything else is literal. Text is cut into tokens the way SQLite's
``unicode61`` tokenizer does (runs of letters and digits), so no input can be
an FTS5 syntax error: every token reaches FTS5 inside double quotes.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

# A token is a run of letters and digits; '_' and everything else separate them.
_TOKEN = r"[^\W_]"
# The combining marks unicode61 (remove_diacritics 2) counts as part of a token and
# then drops, so "e\u0301cole" (decomposed, as macOS often stores it) is the token "ecole".
# Folding keeps them (one character in, one out); patterns step over them.
_DROPPED_MARKS = (
    "\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030f"
    "\u0311\u031b\u0323\u0324\u0325\u0326\u0327\u0328\u032d\u032e\u0330\u0331"
)
_MARK = "[" + _DROPPED_MARKS + "]"
_IN_TOKEN = "(?:" + _TOKEN + "|" + _MARK + ")"
_SEPARATOR = "(?:_|[^\\w" + _DROPPED_MARKS + "])+"
TOKEN_RE = re.compile(_IN_TOKEN + "+")
_MARKS_RE = re.compile(_MARK)
_CHUNK_RE = re.compile(r'"([^"]*)"(\*?)|"|[^\s"]+')
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
        lower = char.lower()
        if len(lower) != 1:
            lower = char
        folded = lower
        decomposed = unicodedata.normalize("NFD", lower)
        base, marks = decomposed[0], decomposed[1:]
        if marks and ord(base) < _LATIN_END and all(m in _DROPPED_MARKS for m in marks):
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
    # Fast path: lower() in C, then one table lookup per character (past the table: unchanged).
    return low.translate(_latin_table())


class Term(NamedTuple):
    """One searchable unit: a word, or a phrase of words; the last may be a prefix."""

    words: tuple[str, ...]
    prefix: bool

    def fts(self) -> str:
        # Tokens hold only letters and digits, so double quotes cannot be broken out of.
        return '"' + " ".join(self.words) + '"' + ("*" if self.prefix else "")

    def pattern(self, marks: bool = True) -> str:
        """A regex for this term in folded text; marks=False for text without combining marks."""
        if not marks:  # the common case: literal words, searched fast
            tail = _TOKEN + "*" if self.prefix else "(?!" + _TOKEN + ")"
            body = "[\\W_]+".join(re.escape(fold(w)) for w in self.words)
            # The "starts a token" check goes after the first character, not before it:
            # a pattern that opens with a literal lets the regex engine skip ahead to
            # candidates instead of trying every position (about 8x faster on long text).
            first, rest = fold(self.words[0])[0], body[len(re.escape(fold(self.words[0])[0])) :]
            return re.escape(first) + "(?<!" + _TOKEN + ".)" + rest + tail
        # Each character may carry dropped marks after it; a match starts and ends on token edges.
        parts = ["".join(re.escape(c) + _MARK + "*" for c in fold(w)) for w in self.words]
        body = _SEPARATOR.join(parts)
        tail = _IN_TOKEN + "*" if self.prefix else "(?!" + _IN_TOKEN + ")"
        return "(?<!" + _TOKEN + ")(?<!" + _MARK + ")" + _MARK + "*" + body + tail


class Query:
    """A parsed query: every clause must match; a clause is one or more OR'ed terms."""

    __slots__ = ("_any", "_clauses", "clauses", "text")

    def __init__(self, text: str, clauses: list[tuple[Term, ...]]) -> None:
        self.text = text
        self.clauses = clauses
        # Two compiled forms of each pattern: [plain, with combining marks]. Text with no
        # combining marks (nearly all of it) gets the plain one, several times faster.
        self._clauses = [
            [re.compile("|".join(t.pattern(marks) for t in clause)) for marks in (False, True)] for clause in clauses
        ]
        terms = [t for clause in clauses for t in clause]
        self._any = (
            [re.compile("|".join(t.pattern(marks) for t in terms)) for marks in (False, True)] if terms else None
        )

    @property
    def empty(self) -> bool:
        return not self.clauses

    @property
    def has_prefix(self) -> bool:
        return any(t.prefix for clause in self.clauses for t in clause)

    def fts(self, column: str | None = None) -> str:
        """The FTS5 MATCH expression; restricted to one column when asked."""
        parts = []
        for clause in self.clauses:
            alts = [t.fts() for t in clause]
            parts.append(alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")")
        expr = " AND ".join(parts)
        return f"{column} : ({expr})" if column else expr

    def matches(self, *folded_texts: str) -> bool:
        """True when every clause matches in at least one of the (folded) texts."""
        forms = [(t, _has_marks(t)) for t in folded_texts]
        return all(any(rx[marks].search(t) for t, marks in forms) for rx in self._clauses)

    def first_match(self, folded: str) -> re.Match[str] | None:
        return self._any[_has_marks(folded)].search(folded) if self._any else None

    def spans(self, folded: str, start: int, end: int) -> list[tuple[int, int]]:
        """Every match of any term between start and end, in order, not overlapping."""
        if self._any is None:
            return []
        return [m.span() for m in self._any[_has_marks(folded)].finditer(folded, start, end)]


def _has_marks(text: str) -> bool:
    return not text.isascii() and _MARKS_RE.search(text) is not None


def parse(text: str) -> Query:
    """Parse user input into a Query; never fails, whatever the input."""
    items: list[Term | None] = []  # None stands for an OR operator candidate
    raw_or: list[bool] = []
    for m in _CHUNK_RE.finditer(text):
        chunk = m.group(0)
        if m.group(1) is not None:  # a closed quote: a phrase
            term = _term(m.group(1), prefix=bool(m.group(2)))
        elif chunk == '"':  # an unmatched quote is just punctuation
            continue
        elif chunk == "OR":
            items.append(None)
            raw_or.append(True)
            continue
        else:
            prefix = chunk.endswith("*")
            term = _term(chunk.rstrip("*") if prefix else chunk, prefix=prefix)
        if term is not None:
            items.append(term)
            raw_or.append(False)
    clauses: list[tuple[Term, ...]] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item is None:
            # OR with no term on both sides is the plain word "or".
            prev_is_term = bool(clauses) and i > 0 and items[i - 1] is not None
            next_term = items[i + 1] if i + 1 < len(items) else None
            if prev_is_term and next_term is not None:
                clauses[-1] = (*clauses[-1], next_term)
                i += 2
                continue
            clauses.append((Term(("or",), False),))
        else:
            clauses.append((item,))
        i += 1
    return Query(text, clauses)


def _term(chunk: str, *, prefix: bool) -> Term | None:
    words = tuple(w for w in (_MARKS_RE.sub("", t) for t in TOKEN_RE.findall(chunk)) if w)
    if not words:
        return None
    return Term(words, prefix)


SNIPPET_CHARS = 200
_LEAD = 60


def snippet(query: Query, text: str, folded: str | None = None) -> str | None:
    """Up to ~200 characters around the first match, each match wrapped in ``**``."""
    folded = fold(text) if folded is None else folded
    first = query.first_match(folded)
    if first is None:
        return None
    start = max(0, first.start() - _LEAD)
    if start > 0:
        # Start on a word: step forward past the word we landed in.
        space = text.find(" ", start, first.start())
        start = space + 1 if space != -1 else first.start()
    end = min(len(text), start + SNIPPET_CHARS)
    if end < len(text):
        space = text.rfind(" ", first.end(), end)
        if space != -1:
            end = space
    # A match longer than the snippet starts inside it: search to its end, mark the part shown.
    spans = query.spans(folded, start, max(end, first.end()))
    out: list[str] = ["…"] if start > 0 else []
    pos = start
    for s, e in spans:
        stop = min(e, end)
        out += [text[pos:s], "**", text[s:stop], "**"]
        pos = stop
    out.append(text[pos:end])
    if end < len(text):
        out.append("…")
    return " ".join("".join(out).split())


@lru_cache(maxsize=16)
def _parsed(text: str) -> Query:
    return parse(text)


def sql_match(query_text: str, *texts: str | None) -> int:
    """``magnotia_match(query, text, ...)`` for SQLite: 1 when query matches across the texts.

    Registered on the read connection by the scan, so matching runs on the
    reader thread, row by row, where an interrupt can stop it.
    """
    return int(_parsed(query_text).matches(*(fold(t) for t in texts if t)))
