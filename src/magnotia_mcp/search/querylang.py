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
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import combinations
from typing import NamedTuple

from magnotia_mcp.search.stemming import guess_language, stem_prefix
from magnotia_mcp.search.stopwords import WORDS
from magnotia_mcp.search.tokens import DROPPED_MARKS, IN_TOKEN, MARK, MARKS_RE, SEPARATOR_RUN, TOKEN_CHAR, TOKEN_RE

_CHUNK_RE = re.compile(r'"([^"]*)"(\*?)|"|[^\s"]+')
_APOSTROPHES = re.compile("['\u2018\u2019\u02bc]")
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
            tail = TOKEN_CHAR + "*" if self.prefix else "(?!" + TOKEN_CHAR + ")"
            body = SEPARATOR_RUN.join(re.escape(fold(w)) for w in self.words)
            # The "starts a token" check goes after the first character, not before it:
            # a pattern that opens with a literal lets the regex engine skip ahead to
            # candidates instead of trying every position (about 8x faster on long text).
            first, rest = fold(self.words[0])[0], body[len(re.escape(fold(self.words[0])[0])) :]
            return re.escape(first) + "(?<!" + TOKEN_CHAR + ".)" + rest + tail
        # Each character may carry dropped marks after it; a match starts and ends on token edges.
        parts = ["".join(re.escape(c) + MARK + "*" for c in fold(w)) for w in self.words]
        body = SEPARATOR_RUN.join(parts)
        tail = IN_TOKEN + "*" if self.prefix else "(?!" + IN_TOKEN + ")"
        return "(?<!" + TOKEN_CHAR + ")(?<!" + MARK + ")" + MARK + "*" + body + tail


class Query:
    """A parsed query: a list of clauses, each one or more OR'ed terms.

    A clause is what the user counts as one thing to look for ("plans", a quoted
    phrase, "a OR b"); ``labels`` holds each clause as the user wrote it. Search
    ranks by how many clauses a transcript matches; ``matches`` (every clause)
    is what sorting by time requires.
    """

    __slots__ = ("_any", "_clauses", "_phrases", "clauses", "labels", "phrases", "text")

    def __init__(self, text: str, clauses: list[tuple[Term, ...]], labels: list[str] | None = None) -> None:
        self.text = text
        self.clauses = clauses
        self.labels = labels if labels is not None else [" OR ".join(" ".join(t.words) for t in c) for c in clauses]
        # Every term of every clause, in order: what FTS5 calls the query's phrases.
        self.phrases = [t for clause in clauses for t in clause]
        # Two compiled forms of each pattern: [plain, with combining marks]. Text with no
        # combining marks (nearly all of it) gets the plain one, several times faster.
        self._clauses = [_compiled("|".join, clause) for clause in clauses]
        self._phrases = [_compiled("".join, (t,)) for t in self.phrases]
        self._any = _compiled("|".join, self.phrases) if self.phrases else None

    @property
    def empty(self) -> bool:
        return not self.clauses

    @property
    def has_prefix(self) -> bool:
        return any(t.prefix for t in self.phrases)

    def fts(self, column: str | None = None) -> str:
        """The FTS5 MATCH expression requiring every clause; restricted to one column when asked."""
        expr = " AND ".join(_clause_fts(c) for c in self.clauses)
        return f"{column} : ({expr})" if column else expr

    def clause_fts(self) -> list[str]:
        """Each clause's own FTS5 MATCH expression."""
        return [_clause_fts(c) for c in self.clauses]

    def fts_at_least(self, k: int) -> str:
        """The FTS5 MATCH expression for rows matching at least k of the clauses.

        Every clause appears in the same number of the k-subsets, so FTS5's bm25()
        over this expression is the one-phrase-each score times a constant.
        """
        groups = (" AND ".join(_clause_fts(c) for c in subset) for subset in combinations(self.clauses, k))
        return " OR ".join(f"({g})" for g in groups)

    def matches(self, *folded_texts: str) -> bool:
        """True when every clause matches in at least one of the (folded) texts."""
        return all(self.matched(*folded_texts))

    def matched(self, *folded_texts: str) -> list[bool]:
        """For each clause, whether it matches in at least one of the (folded) texts."""
        forms = [(t, _has_marks(t)) for t in folded_texts]
        return [any(rx[marks].search(t) for t, marks in forms) for rx in self._clauses]

    def phrase_counts(self, folded: str) -> list[int]:
        """How often each phrase occurs in folded text (what FTS5 counts as its hits)."""
        marks = _has_marks(folded)
        return [sum(1 for _ in rx[marks].finditer(folded)) for rx in self._phrases]

    def first_match(self, folded: str) -> re.Match[str] | None:
        return self._any[_has_marks(folded)].search(folded) if self._any else None

    def spans(self, folded: str, start: int, end: int) -> list[tuple[int, int]]:
        """Every match of any term between start and end, in order, not overlapping."""
        if self._any is None:
            return []
        return [m.span() for m in self._any[_has_marks(folded)].finditer(folded, start, end)]


def _clause_fts(clause: tuple[Term, ...]) -> str:
    alts = [t.fts() for t in clause]
    return alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")"


def _compiled(join: Callable[[Iterable[str]], str], terms: Iterable[Term]) -> list[re.Pattern[str]]:
    items = list(terms)
    return [re.compile(join(t.pattern(marks) for t in items)) for marks in (False, True)]


def _has_marks(text: str) -> bool:
    return not text.isascii() and MARKS_RE.search(text) is not None


def parse(text: str) -> Query:
    """Parse user input into a Query; never fails, whatever the input.

    Function words ("what", "did", "the"...) are dropped unless quoted or nothing
    else is left, and each remaining plain word also matches its inflections.
    """
    items: list[tuple[Term, str, bool] | None] = []  # (term, as written, plain word); None: OR
    for m in _CHUNK_RE.finditer(text):
        chunk = m.group(0)
        if m.group(1) is not None:  # a closed quote: a phrase
            term = _term(m.group(1), prefix=bool(m.group(2)))
            if term is not None:
                items.append((term, chunk, False))
        elif chunk == "OR":
            items.append(None)
        elif chunk != '"':  # an unmatched quote is just punctuation
            # An apostrophe joins two words, not a phrase: "what's" is "what" and "s",
            # "l'orçamento" is "l" and "orçamento", each a word of its own.
            parts = [p for p in _APOSTROPHES.split(chunk) if p]
            for n, part in enumerate(parts):
                prefix = part.endswith("*") and n == len(parts) - 1
                term = _term(part.rstrip("*") if prefix else part, prefix=prefix)
                if term is not None:
                    items.append((term, part, not prefix and len(term.words) == 1))
    clauses: list[list[tuple[Term, str, bool]]] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item is None:
            # OR with no term on both sides is the plain word "or".
            prev_is_term = bool(clauses) and i > 0 and items[i - 1] is not None
            next_item = items[i + 1] if i + 1 < len(items) else None
            if prev_is_term and next_item is not None:
                clauses[-1].append(next_item)
                i += 2
                continue
            clauses.append([(Term(("or",), False), "or", True)])
        else:
            clauses.append([item])
        i += 1
    return _refine(text, clauses)


def _refine(text: str, clauses: list[list[tuple[Term, str, bool]]]) -> Query:
    """Drop function words and widen plain words to their stems."""

    def is_function_word(clause: list[tuple[Term, str, bool]]) -> bool:
        return len(clause) == 1 and clause[0][2] and fold(clause[0][0].words[0]) in WORDS

    kept = [c for c in clauses if not is_function_word(c)] or clauses
    language = guess_language(fold(t.words[0]) for c in clauses for t, _, plain in c if plain)
    out: list[tuple[Term, ...]] = []
    for clause in kept:
        terms = []
        for term, _, plain in clause:
            stem = stem_prefix(fold(term.words[0]), language) if plain else None
            terms.append(Term((stem,), True) if stem else term)
        out.append(tuple(terms))
    labels = [" OR ".join(written for _, written, _ in clause) for clause in kept]
    return Query(text, out, labels)


def _term(chunk: str, *, prefix: bool) -> Term | None:
    words = tuple(w for w in (MARKS_RE.sub("", t) for t in TOKEN_RE.findall(chunk)) if w)
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
def parse_cached(text: str) -> Query:
    """parse, remembered: SQL functions get the query as text on every row."""
    return parse(text)


def sql_match(query_text: str, *texts: str | None) -> int:
    """``magnotia_match(query, text, ...)`` for SQLite: 1 when query matches across the texts.

    Registered on the read connection by the scan, so matching runs on the
    reader thread, row by row, where an interrupt can stop it.
    """
    return int(parse_cached(query_text).matches(*(fold(t) for t in texts if t)))
