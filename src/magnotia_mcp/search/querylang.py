"""The search query language, shared by the full-text index and the scan.

One parse feeds both paths, so a query means the same with or without the
store's ``*_fts`` tables:

* words are all required (AND), in any order, case- and accent-insensitive;
* ``"a quoted phrase"`` must appear as written (one column, words in order);
* a word ending in ``*`` matches as a prefix;
* ``OR`` between two terms accepts either; anywhere else it is the word "or";
* ``title:word`` or ``title:"a phrase"`` matches in the title only (``title``
  with nothing after it is the word "title").

Everything else is literal. Text is cut into tokens the way SQLite's
``unicode61`` tokenizer does (runs of letters and digits), so no input can be
an FTS5 syntax error: every token reaches FTS5 inside double quotes.
"""

from __future__ import annotations

import re
from itertools import combinations
from typing import NamedTuple

from magnotia_mcp.search.folding import fold
from magnotia_mcp.search.stemming import guess_language, stem_prefix
from magnotia_mcp.search.stopwords import WORDS
from magnotia_mcp.search.tokens import MARKS_RE, TOKEN_RE

_CHUNK_RE = re.compile(r'((?i:title):)?"([^"]*)"(\*?)|"|[^\s"]+')
_TITLE_RE = re.compile(r"(?i:title):(?=.)")
_APOSTROPHES = re.compile("['\u2018\u2019\u02bc]")


class Term(NamedTuple):
    """One searchable unit: a word, or a phrase of words; the last may be a prefix. title: in the title only."""

    words: tuple[str, ...]
    prefix: bool
    title: bool = False

    def fts(self) -> str:
        # Tokens hold only letters and digits, so double quotes cannot be broken out of.
        phrase = '"' + " ".join(self.words) + '"' + ("*" if self.prefix else "")
        return "title : " + phrase if self.title else phrase


class Query:
    """A parsed query: a list of clauses, each one or more OR'ed terms.

    A clause is what the user counts as one thing to look for ("plans", a quoted
    phrase, "a OR b"); ``labels`` holds each clause as the user wrote it. Search
    ranks by how many clauses a transcript matches; every clause is what sorting
    by time requires. The index gets the FTS5 expressions below; the scan gets
    the same terms as patterns (``matching``).
    """

    __slots__ = ("clauses", "labels", "phrases", "term_labels", "text")

    def __init__(
        self,
        text: str,
        clauses: list[tuple[Term, ...]],
        labels: list[str] | None = None,
        term_labels: list[str] | None = None,
    ) -> None:
        self.text = text
        self.clauses = clauses
        # Every term of every clause, in order: what FTS5 calls the query's phrases.
        self.phrases = [t for clause in clauses for t in clause]
        # Each phrase as the user wrote it: what a hit lists as the terms it matched.
        self.term_labels = term_labels if term_labels is not None else [_written(t) for t in self.phrases]
        self.labels = labels if labels is not None else [" OR ".join(_written(t) for t in c) for c in clauses]

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

    def text_fts(self) -> str | None:
        """The FTS5 expression for any term not restricted to the title (what a segment can match), or None."""
        terms = [t.fts() for t in self.phrases if not t.title]
        return " OR ".join(terms) if terms else None

    def title_fts(self) -> str | None:
        """The FTS5 expression for any term restricted to the title, or None."""
        terms = [t.fts() for t in self.phrases if t.title]
        return " OR ".join(terms) if terms else None

    def matched_labels(self, hits: list[bool]) -> list[str]:
        """The terms (alternatives) a hit matched, as written, once each; hits: one flag per phrase."""
        return list(dict.fromkeys(label for label, hit in zip(self.term_labels, hits, strict=True) if hit))

    def clauses_hit(self, hits: list[bool]) -> list[bool]:
        """For each clause, whether one of its phrases was hit (hits: one flag per phrase)."""
        out, start = [], 0
        for clause in self.clauses:
            out.append(any(hits[start : start + len(clause)]))
            start += len(clause)
        return out

    def clauses_matched(self, terms: list[str]) -> int:
        """How many clauses have one of terms (labels from matched_labels) among their terms."""
        found, start, count = set(terms), 0, 0
        for clause in self.clauses:
            count += any(label in found for label in self.term_labels[start : start + len(clause)])
            start += len(clause)
        return count

    def fts_at_least(self, k: int) -> str:
        """The FTS5 MATCH expression for rows matching at least k of the clauses.

        Every clause appears in the same number of the k-subsets, so FTS5's bm25()
        over this expression is the one-phrase-each score times a constant.
        """
        groups = (" AND ".join(_clause_fts(c) for c in subset) for subset in combinations(self.clauses, k))
        return " OR ".join(f"({g})" for g in groups)


def _written(term: Term) -> str:
    words = " ".join(term.words)
    return ("title:" if term.title else "") + words


def _clause_fts(clause: tuple[Term, ...]) -> str:
    alts = [t.fts() for t in clause]
    return alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")"


# One parsed item: (term, as written, plain word); None: OR.
_Item = tuple[Term, str, bool]


def parse(text: str) -> Query:
    """Parse user input into a Query; never fails, whatever the input.

    Function words ("what", "did", "the"...) are dropped unless quoted or nothing
    else is left, and each remaining plain word also matches its inflections.
    """
    items: list[_Item | None] = []
    for m in _CHUNK_RE.finditer(text):
        chunk = m.group(0)
        if m.group(2) is not None:  # a closed quote: a phrase, in the title only after title:
            term = _term(m.group(2), prefix=bool(m.group(3)))
            if term is not None:
                items.append((term._replace(title=bool(m.group(1))), chunk, False))
            elif m.group(1):  # title:"" is the word "title"
                items.append((Term(("title",), False), m.group(1)[:-1], True))
        elif chunk == "OR":
            items.append(None)
        elif chunk != '"':  # an unmatched quote is just punctuation
            field = _TITLE_RE.match(chunk)
            words = _words(chunk[field.end() :]) if field else []
            if field and words:
                items += [(t._replace(title=True), field.group(0) + w, plain) for t, w, plain in words]
            else:
                items += _words(chunk)
    clauses: list[list[_Item]] = []
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


def _words(chunk: str) -> list[_Item]:
    """The terms of an unquoted chunk."""
    # An apostrophe joins two words, not a phrase: "what's" is "what" and "s",
    # "l'orçamento" is "l" and "orçamento", each a word of its own.
    parts = [p for p in _APOSTROPHES.split(chunk) if p]
    items: list[_Item] = []
    for n, part in enumerate(parts):
        prefix = part.endswith("*") and n == len(parts) - 1
        term = _term(part.rstrip("*") if prefix else part, prefix=prefix)
        if term is not None:
            items.append((term, part, not prefix and len(term.words) == 1))
    return items


def _refine(text: str, clauses: list[list[_Item]]) -> Query:
    """Drop function words and widen plain words to their stems."""

    def is_function_word(clause: list[_Item]) -> bool:
        # A word asked for in the title is meant: it stays.
        term, _, plain = clause[0]
        return len(clause) == 1 and plain and not term.title and fold(term.words[0]) in WORDS

    kept = [c for c in clauses if not is_function_word(c)] or clauses
    language = guess_language(fold(t.words[0]) for c in clauses for t, _, plain in c if plain)
    out: list[tuple[Term, ...]] = []
    for clause in kept:
        terms = []
        for term, _, plain in clause:
            stem = stem_prefix(fold(term.words[0]), language) if plain else None
            terms.append(Term((stem,), True, term.title) if stem else term)
        out.append(tuple(terms))
    labels = [" OR ".join(written for _, written, _ in clause) for clause in kept]
    return Query(text, out, labels, [written for clause in kept for _, written, _ in clause])


def _term(chunk: str, *, prefix: bool) -> Term | None:
    words = tuple(w for w in (MARKS_RE.sub("", t) for t in TOKEN_RE.findall(chunk)) if w)
    if not words:
        return None
    return Term(words, prefix)
