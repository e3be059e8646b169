"""Matching a parsed query in folded text: what the scan uses where the full-text index is missing.

Each term becomes a regular expression over ``fold``ed text that matches where
FTS5 would (whole tokens, a prefix when the term has one), so a query means the
same with or without the index. The same patterns count hits for BM25 and find
the spans a snippet marks.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from functools import lru_cache

from magnotia_mcp.search.folding import fold
from magnotia_mcp.search.querylang import Query, Term, parse
from magnotia_mcp.search.tokens import IN_TOKEN, MARK, MARKS_RE, SEPARATOR_RUN, TOKEN_CHAR


def pattern(term: Term, marks: bool = True) -> str:
    """A regex for term in folded text; marks=False for text without combining marks."""
    if not marks:  # the common case: literal words, searched fast
        tail = TOKEN_CHAR + "*" if term.prefix else "(?!" + TOKEN_CHAR + ")"
        body = SEPARATOR_RUN.join(re.escape(fold(w)) for w in term.words)
        # The "starts a token" check goes after the first character, not before it:
        # a pattern that opens with a literal lets the regex engine skip ahead to
        # candidates instead of trying every position (about 8x faster on long text).
        first, rest = fold(term.words[0])[0], body[len(re.escape(fold(term.words[0])[0])) :]
        return re.escape(first) + "(?<!" + TOKEN_CHAR + ".)" + rest + tail
    # Each character may carry dropped marks after it; a match starts and ends on token edges.
    parts = ["".join(re.escape(c) + MARK + "*" for c in fold(w)) for w in term.words]
    body = SEPARATOR_RUN.join(parts)
    tail = IN_TOKEN + "*" if term.prefix else "(?!" + IN_TOKEN + ")"
    return "(?<!" + TOKEN_CHAR + ")(?<!" + MARK + ")" + MARK + "*" + body + tail


class Matcher:
    """A query's terms compiled for folded text: which clauses match, how often each phrase, where.

    A clause matches when any of its terms does; ``matches`` (every clause) is
    what sorting by time requires, ``matched`` (per clause) what ranking counts.
    The texts a method is given are a transcript's texts (or segments); its title,
    when it counts, comes as ``title``: a term written ``title:...`` matches there
    only, the others in the title and the texts alike (as the index has them).
    """

    __slots__ = ("_any", "_clauses", "_phrases", "_titled", "query")

    def __init__(self, query: Query) -> None:
        self.query = query
        # Two forms of each pattern: plain, and with combining marks. Text with no combining
        # marks (nearly all of it) gets the plain one, several times faster to run.
        # Per clause: its terms for the title, and those not restricted to it for the texts (None: all are).
        self._clauses = [
            (_Forms("|".join, clause), _forms([t for t in clause if not t.title])) for clause in query.clauses
        ]
        self._phrases = [_Forms("".join, (t,)) for t in query.phrases]
        self._titled = [t.title for t in query.phrases]
        # Snippets and moments come from the texts: only the terms that may match there.
        self._any = _forms([t for t in query.phrases if not t.title])

    def matches(self, *folded_texts: str, title: str = "") -> bool:
        """True when every clause matches in at least one of the (folded) texts or in the (folded) title."""
        return all(self.matched(*folded_texts, title=title))

    def matched(self, *folded_texts: str, title: str = "") -> list[bool]:
        """For each clause, whether it matches in at least one of the (folded) texts or in the (folded) title."""
        forms = [(t, _has_marks(t)) for t in folded_texts]
        marked = _has_marks(title)
        return [
            (texts is not None and any(texts[marks].search(t) for t, marks in forms))
            or (bool(title) and whole[marked].search(title) is not None)
            for whole, texts in self._clauses
        ]

    def terms_matched(self, *folded_texts: str, title: str = "") -> list[bool]:
        """For each phrase (term or alternative), whether it matches in the texts or in the title."""
        forms = [(t, _has_marks(t)) for t in folded_texts]
        marked = _has_marks(title)
        return [
            (not titled and any(rx[marks].search(t) for t, marks in forms))
            or (bool(title) and rx[marked].search(title) is not None)
            for rx, titled in zip(self._phrases, self._titled, strict=True)
        ]

    def phrase_counts(self, folded: str, title: bool = False) -> list[int]:
        """How often each phrase occurs in folded text (what FTS5 counts as its hits); title: the text is a title."""
        marks = _has_marks(folded)
        return [
            0 if titled and not title else sum(1 for _ in rx[marks].finditer(folded))
            for rx, titled in zip(self._phrases, self._titled, strict=True)
        ]

    def title_counts(self, folded_title: str) -> list[int]:
        """How often each phrase restricted to the title occurs in it; 0 for the others."""
        counts = self.phrase_counts(folded_title, title=True) if any(self._titled) else [0] * len(self._titled)
        return [n if titled else 0 for n, titled in zip(counts, self._titled, strict=True)]

    def title_terms(self, folded_title: str) -> list[bool]:
        """For each phrase, whether it is restricted to the title and found in it (a speaker's search: only
        these count in the title)."""
        return [n > 0 for n in self.title_counts(folded_title)] if folded_title else [False] * len(self._titled)

    def phrase_starts(self, folded: str) -> list[list[int]]:
        """Where each phrase's matches start in folded text (phrase_counts, with the places)."""
        marks = _has_marks(folded)
        return [
            [] if titled else [m.start() for m in rx[marks].finditer(folded)]
            for rx, titled in zip(self._phrases, self._titled, strict=True)
        ]

    def first_match(self, folded: str) -> re.Match[str] | None:
        return self._any[_has_marks(folded)].search(folded) if self._any else None

    def parts_matching(self, folded: str, starts: list[int]) -> list[int]:
        """The indexes of the parts of folded (part k from starts[k] to starts[k + 1]) where a match starts.

        One search per part that matches, from the start of the next: a word said in every segment of a
        10-hour meeting costs a search per segment, not one per time it was said.
        """
        if self._any is None:
            return []
        rx, found, at = self._any[_has_marks(folded)], [], 0
        while (m := rx.search(folded, at)) is not None:
            k = bisect_right(starts, m.start()) - 1
            found.append(k)
            if k + 1 >= len(starts):
                break
            at = starts[k + 1]
        return found

    def spans(self, folded: str, start: int, end: int) -> list[tuple[int, int]]:
        """Every match of any term between start and end, in order, not overlapping."""
        if self._any is None:
            return []
        return [m.span() for m in self._any[_has_marks(folded)].finditer(folded, start, end)]


def _forms(terms: list[Term]) -> _Forms | None:
    return _Forms("|".join, terms) if terms else None


class _Forms:
    """A pattern's two compiled forms, ``forms[marks]``; the form for combining marks compiled on first use.

    That form steps over a class of marks after every character: it costs 20-30 times the
    plain one to compile (several milliseconds a term), and text with marks is rare.
    """

    __slots__ = ("_join", "_marked", "_terms", "plain")

    def __init__(self, join: Callable[[Iterable[str]], str], terms: Iterable[Term]) -> None:
        self._join, self._terms = join, tuple(terms)
        self.plain = re.compile(join(pattern(t, False) for t in self._terms))
        self._marked: re.Pattern[str] | None = None

    def __getitem__(self, marks: bool) -> re.Pattern[str]:
        if not marks:
            return self.plain
        if self._marked is None:  # two threads may both compile it: the same pattern either way
            self._marked = re.compile(self._join(pattern(t, True) for t in self._terms))
        return self._marked


def _has_marks(text: str) -> bool:
    return not text.isascii() and MARKS_RE.search(text) is not None


@lru_cache(maxsize=16)
def matcher_for(text: str) -> Matcher:
    """The matcher of a query's text, remembered: SQL functions get the query as text on every row."""
    return Matcher(parse(text))


def sql_match(query_text: str, title: str | None, *texts: str | None) -> int:
    """``magnotia_match(query, title, text, ...)`` for SQLite: 1 when query matches across the title and texts.

    Registered on the read connection by the scan, so matching runs on the
    reader thread, row by row, where an interrupt can stop it.
    """
    folded = (fold(t) for t in texts if t)
    return int(matcher_for(query_text).matches(*folded, title=fold(title) if title else ""))


def sql_any_clause(query_text: str, text: str | None, title: str | None = None) -> int:
    """``magnotia_any(query, text, title)`` for SQLite: 1 when any clause of the query matches text (a
    segment's), or the title (its transcript's) holds a term restricted to it."""
    matcher = matcher_for(query_text)
    return int(
        (text is not None and any(matcher.matched(fold(text))))
        or (bool(title) and any(matcher.title_terms(fold(title or ""))))
    )
